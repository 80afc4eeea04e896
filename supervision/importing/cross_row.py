"""Checks across rows: each session's turns taken together."""

from __future__ import annotations

from collections import defaultdict

from supervision import rules
from supervision.importing.records import RowError, TurnRecord


def session_errors(records: list[TurnRecord], positions: list[tuple[int, str, int]]) -> list[RowError]:
    """``positions`` holds (row, session, seq) of every row whose session and seq could be read."""
    errors: list[RowError] = []
    seqs_by_session: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for row, session, seq in positions:
        seqs_by_session[session].append((row, seq))
    for code, rows in seqs_by_session.items():
        if problem := rules.seq_problem(seq for _, seq in rows):
            errors.append(RowError(_row_to_blame(rows), "seq", f"회기 {code}: {problem}"))
    by_session: dict[str, list[TurnRecord]] = defaultdict(list)
    first_row_of_uid: dict[str, int] = {}
    for record in records:
        by_session[record.session].append(record)
        if record.utterance_id in first_row_of_uid:
            errors.append(
                RowError(
                    record.row,
                    "utterance_id",
                    f"발화 ID '{record.utterance_id}'가 {first_row_of_uid[record.utterance_id]}행과 중복됩니다.",
                )
            )
        else:
            first_row_of_uid[record.utterance_id] = record.row

    for code, turns in by_session.items():
        for column in ("source", "trainee", "held_on"):
            first = next((t for t in turns if getattr(t, column) is not None), None)
            if first is None:
                continue
            for turn in turns:
                value = getattr(turn, column)
                if value is not None and value != getattr(first, column):
                    errors.append(
                        RowError(
                            turn.row,
                            column,
                            f"회기 {code}의 {column} 값 '{value}'가 {first.row}행의 '{getattr(first, column)}'와 다릅니다. "
                            "한 회기 안에서는 같아야 합니다.",
                        )
                    )
    return errors


def _row_to_blame(rows: list[tuple[int, int]]) -> int:
    """The first row whose seq repeats or falls outside 0..N-1 (else the session's first row)."""
    seen: set[int] = set()
    for row, seq in rows:
        if seq in seen or seq >= len(rows):
            return row
        seen.add(seq)
    return rows[0][0]
