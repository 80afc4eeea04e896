"""Checks across rows: each session's turns taken together, fed chunk by chunk while the file streams.

What is kept per row is small (the row and seq of each position, as machine integers, and the first row of
each utterance id); the records themselves are not kept, so memory follows the file only by that much.
"""

from __future__ import annotations

from array import array

from supervision import rules
from supervision.importing.records import RowError, TurnRecord

CONSISTENT_COLUMNS = ("source", "trainee", "held_on")


class SessionChecks:
    """Feed every chunk's records and positions in file order, then ``errors()`` once."""

    def __init__(self) -> None:
        self._rows: dict[str, array] = {}  # session -> rows of its positions
        self._seqs: dict[str, array] = {}  # session -> seqs, parallel to _rows
        self._first_row_of_uid: dict[str, int] = {}
        # session -> column -> (first row with a value, that value)
        self._first: dict[str, dict[str, tuple[int, object]]] = {}
        self._order: list[str] = []  # sessions of the records, in the order of their first record
        self._mismatches: dict[str, list[tuple[int, str, str]]] = {}

    def add_positions(self, positions: list[tuple[int, str, int]]) -> None:
        """(row, session, seq) of every row whose session and seq could be read, even if another field failed."""
        rows, seqs = self._rows, self._seqs
        for row, session, seq in positions:
            if session not in rows:
                rows[session] = array("q")
                seqs[session] = array("q")
            rows[session].append(row)
            seqs[session].append(seq)

    def add_records(self, records: list[TurnRecord]) -> list[RowError]:
        """Duplicate utterance ids are reported at once (the writer must not meet them); the rest at the end."""
        errors: list[RowError] = []
        first_row_of_uid = self._first_row_of_uid
        for record in records:
            uid = record.utterance_id
            first_row = first_row_of_uid.setdefault(uid, record.row)
            if first_row != record.row:
                errors.append(RowError(record.row, "utterance_id", f"발화 ID '{uid}'가 {first_row}행과 중복됩니다."))
            first = self._first.get(record.session)
            if first is None:
                first = self._first[record.session] = {}
                self._order.append(record.session)
                self._mismatches[record.session] = []
            for column in CONSISTENT_COLUMNS:
                value = getattr(record, column)
                if value is None:
                    continue
                seen = first.get(column)
                if seen is None:
                    first[column] = (record.row, value)
                elif value != seen[1]:
                    self._mismatches[record.session].append((record.row, column, value))
        return errors

    def errors(self) -> list[RowError]:
        """Seq problems per session, then values that differ within a session (in the order of the former
        whole-file check; the report is sorted by row and column afterwards)."""
        errors: list[RowError] = []
        for code, rows in self._rows.items():
            seqs = self._seqs[code]
            if problem := rules.seq_problem(seqs):
                errors.append(RowError(_row_to_blame(rows, seqs), "seq", f"회기 {code}: {problem}"))
        for code in self._order:
            first = self._first[code]
            by_column = sorted(self._mismatches[code], key=lambda item: CONSISTENT_COLUMNS.index(item[1]))
            for row, column, value in by_column:
                first_row, first_value = first[column]
                errors.append(
                    RowError(
                        row,
                        column,
                        f"회기 {code}의 {column} 값 '{value}'가 {first_row}행의 '{first_value}'와 다릅니다. "
                        "한 회기 안에서는 같아야 합니다.",
                    )
                )
        return errors


def session_errors(records: list[TurnRecord], positions: list[tuple[int, str, int]]) -> list[RowError]:
    """The whole-file form: ``positions`` holds (row, session, seq) of every row whose session and seq could
    be read."""
    checks = SessionChecks()
    checks.add_positions(positions)
    duplicates = checks.add_records(records)
    return checks.errors() + duplicates


def _row_to_blame(rows, seqs) -> int:
    """The first row whose seq repeats or falls outside 0..N-1 (else the session's first row)."""
    seen: set[int] = set()
    total = len(rows)
    for row, seq in zip(rows, seqs, strict=True):
        if seq in seen or seq >= total:
            return row
        seen.add(seq)
    return rows[0]
