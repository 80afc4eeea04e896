"""A persona file (CONTRACT §10) → its triple counts, or every error in it.

A persona engine's simulated sessions come as §2 lines: ``utterance_id``, ``session`` (else taken from the
id), ``seq``, ``speaker``, ``techniques``, ``client_states``; ``text`` is optional and anything else is
ignored. They are checked by the §2 rules through the golden importer's own pieces — the field rules of
``RowParser`` (label lookup with the closest-label hint, cell length, seq), ``rules`` (utterance-id format
and letter, session code, the attach rule, the privacy guard on any text) and ``SessionChecks`` (each
session's seqs 0..N-1) — and reported like ``import_transcripts``' errors. Nothing is ever written: persona
lines are not transcripts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from supervision import rules
from supervision.importing.cross_row import SessionChecks
from supervision.importing.parse import RowParser
from supervision.importing.readers import FileRejected, RowProblem, read_jsonl
from supervision.importing.records import RowError
from taxonomy import catalogue, lookup
from taxonomy.lookup import LabelIndex

from . import counting

REQUIRED = ("utterance_id", "seq", "speaker")


@dataclass
class PersonaFile:
    """A read persona file: its sessions' turns (``(seq, speaker, techniques, client_states)`` by session
    code), or ``errors`` (then nothing else is meaningful)."""

    sessions: dict[str, list[tuple[int, str, tuple[str, ...], tuple[str, ...]]]] = field(default_factory=dict)
    errors: list[RowError] = field(default_factory=list)
    turns: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self, by: str) -> Counter:
        """The triple counts of the file's sessions, each in ``seq`` order, by the one counting rule."""
        ordered = (
            [(speaker, techniques, states) for _seq, speaker, techniques, states in sorted(turns)]
            for turns in self.sessions.values()
        )
        return counting.count_sessions(ordered, by)[0]


def read_persona(path: Path) -> PersonaFile:
    if path.suffix.lower() != ".jsonl":
        return PersonaFile(errors=[RowError(0, "file", f"페르소나 파일은 .jsonl이어야 합니다('{path.suffix}').")])
    try:
        return read_persona_rows(read_jsonl(path))
    except FileRejected as exc:
        return PersonaFile(errors=[RowError(0, "file", str(exc))])


def read_persona_rows(rows: Iterable[tuple[int, dict | RowProblem]]) -> PersonaFile:
    """Every line is checked, then every session's seqs; all errors are reported, sorted by row and column."""
    result = PersonaFile()
    reader = _LineReader(RowParser(LabelIndex.load()))
    checks = SessionChecks()
    first_row: dict[str, int] = {}
    positions: list[tuple[int, str, int]] = []
    try:
        for row, raw in rows:
            if isinstance(raw, RowProblem):
                result.errors.append(RowError(row, raw.column, raw.message))
                continue
            line = reader.quick(raw) or reader.read(row, raw, result.errors)
            if line is None:
                continue
            utterance_id, session, seq, speaker, techniques, states = line
            if utterance_id in first_row:
                result.errors.append(
                    RowError(
                        row, "utterance_id", f"발화 ID '{utterance_id}'가 {first_row[utterance_id]}행과 중복됩니다."
                    )
                )
                continue
            first_row[utterance_id] = row
            if seq >= 0 and session:
                positions.append((row, session, seq))
            if speaker:
                result.sessions.setdefault(session, []).append((seq, speaker, techniques, states))
    except FileRejected as exc:
        return PersonaFile(errors=[RowError(0, "file", str(exc))])
    checks.add_positions(positions)
    result.errors += checks.errors()
    result.errors.sort(key=lambda e: (e.row, e.column))
    if result.errors:
        result.sessions = {}
    else:
        result.turns = sum(len(turns) for turns in result.sessions.values())
    return result


def _collect(problems: list[tuple[str, str]]):
    return lambda column, message: problems.append((column, message))


class _LineReader:
    """One line with the golden parser's field rules; speakers and label cells repeat, so each distinct one
    is resolved once per file (the parser keeps the label cells)."""

    def __init__(self, parser: RowParser) -> None:
        self.parser = parser
        self.speakers: dict[object, str | None] = {}
        self.good_sessions: set[str] = set()
        self.label_cells: dict[tuple, tuple[str, ...] | None] = {}

    def quick(self, raw: dict) -> tuple | None:
        """``read``'s answer for the common line — plain values that turn out valid — with each distinct
        speaker, session and label cell checked once per file; ``None`` for anything else, which ``read`` then
        checks (and reports) field by field. It accepts only what ``read`` accepts."""
        max_chars = self.parser.max_chars
        for value in raw.values():
            if type(value) is str and len(value) > max_chars:
                return None
        utterance_id, seq, speaker_raw = raw.get("utterance_id"), raw.get("seq"), raw.get("speaker")
        if type(utterance_id) is not str or type(seq) is not int or type(speaker_raw) is not str:
            return None
        if not 0 <= seq <= 10_000_000:
            return None
        speaker = self.speakers.get(speaker_raw)
        if speaker is None:
            return None
        match = rules.UTTERANCE_ID.fullmatch(utterance_id)
        if match is None or match["letter"] != catalogue.SPEAKER_LETTERS[speaker]:
            return None
        session = raw.get("session")
        if session is None or session == "":
            session = match["session"]
        elif session != match["session"]:
            return None
        if session not in self.good_sessions:
            return None
        techniques = self._known(raw, "techniques")
        states = self._known(raw, "client_states")
        if techniques is None or states is None:
            return None
        if (techniques and speaker != catalogue.COUNSELOR) or (states and speaker != catalogue.CLIENT):
            return None
        text = raw.get("text")
        if text is not None and (type(text) is not str or "\x00" in text or rules.personal_identifier_problem(text)):
            return None
        return utterance_id, session, seq, speaker, techniques, states

    def _known(self, raw: dict, column: str) -> tuple[str, ...] | None:
        """A label cell's codes when every item is known (``()`` when absent), else ``None``."""
        cell = raw.get(column)
        if cell is None:
            return ()
        if type(cell) is not list:
            return None
        try:
            key = (column, tuple(cell))
            codes = self.label_cells.get(key, False)
        except TypeError:  # an unhashable item: read() reports it
            return None
        if codes is False:
            problems: list[tuple[str, str]] = []
            found = tuple(self.parser.labels(raw, column, _collect(problems)))
            codes = None if problems else found
            if len(self.label_cells) < 100_000:
                self.label_cells[key] = codes
        return codes

    def read(self, row: int, raw: dict, errors: list[RowError]) -> tuple | None:
        """``(utterance_id, session, seq, speaker, techniques, client_states)``; ``None`` with the line's errors
        added when it cannot be read at all. A line with errors that still names its session and seq returns
        them with an empty speaker, so the session's seq rule is checked over every line."""
        problems: list[tuple[str, str]] = []
        error = _collect(problems)
        parser = self.parser
        parser.check_lengths(raw, raw.keys(), error)
        if problems:
            errors += [RowError(row, column, message) for column, message in problems]
            return None
        for column in REQUIRED:
            value = raw.get(column)
            if value is None or (isinstance(value, str) and not value.strip()):
                error(column, "필수 항목이 비어 있습니다.")
        utterance_id = parser.string(raw, "utterance_id", error).strip()
        session_raw = raw.get("session")
        session = parser.string(raw, "session", error).strip() if session_raw not in (None, "") else ""
        speaker = self._speaker(raw, error)
        seq = parser.seq(raw, error) if raw.get("seq") is not None else -1
        parsed = rules.parse_utterance_id(utterance_id) if utterance_id else None
        if not session and parsed is not None:
            session = parsed.session
        if session and session not in self.good_sessions:
            if problem := rules.session_code_problem(session):
                error("session", problem)
                session = ""
            else:
                self.good_sessions.add(session)
        if utterance_id and (
            problem := rules.utterance_id_problem(utterance_id, speaker=speaker, session=session or None)
        ):
            error("utterance_id", problem)
        techniques = self._labels(raw, "techniques", error)
        states = self._labels(raw, "client_states", error)
        if speaker:
            for column, message in rules.attach_problems(speaker, techniques=techniques, client_states=states):
                error(column, message)
        if "text" in raw and raw["text"] is not None:
            text = parser.string(raw, "text", error)
            if problem := rules.personal_identifier_problem(text):
                error("text", problem)
        if problems:
            errors += [RowError(row, column, message) for column, message in problems]
            return (utterance_id, session, seq, "", (), ()) if utterance_id and session else None
        return utterance_id, session, seq, speaker, techniques, states

    def _speaker(self, raw: dict, error) -> str | None:
        value = raw.get("speaker")
        if value is None:
            return None
        try:
            known = self.speakers.get(value, "")
        except TypeError:  # a list or an object where a word belongs
            known = ""
        if known == "":
            text = self.parser.string(raw, "speaker", lambda *_: None)
            known = lookup.speaker_code(text) if text and "\x00" not in text else None
            if isinstance(value, str):
                self.speakers[value] = known
        if known is None and not (isinstance(value, str) and not value.strip()):
            error("speaker", f"화자 '{value}'를 알 수 없습니다(counselor/client, 상담자/내담자, 상/내).")
        return known

    def _labels(self, raw: dict, column: str, error) -> tuple[str, ...]:
        if column not in raw or raw[column] is None:
            return ()
        return tuple(self.parser.labels(raw, column, error))
