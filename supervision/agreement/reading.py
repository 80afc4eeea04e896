"""An annotation-run file (CONTRACT §7) → the rater's ``Ratings``, or every error in it.

The golden importer's reader (``read_jsonl``) and its field rules (``RowParser``: label lookup with the
closest-label hint, stage and act aliases, cell length) read the lines; ``rules`` holds the utterance-id
format and the attach rule. What is particular to a run: only ``utterance_id`` is required and must name a
turn already stored, a key that is present rates its axis, and an empty list on the other speaker's axis
(as golden lines carry) is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from supervision import rules
from supervision.importing.parse import RowParser
from supervision.importing.readers import FileRejected, RowProblem, read_jsonl
from supervision.importing.records import RowError
from taxonomy import catalogue
from taxonomy.lookup import LabelIndex

from . import selectors
from .scoring import NO_ACT, Ratings


@dataclass
class RatedLine:
    row: int
    utterance_id: str
    techniques: list[str] | None
    client_states: list[str] | None
    stage: str | None
    dialog_act_rated: bool
    dialog_act: str | None
    session: str = ""


@dataclass
class RunFile:
    """A read run: ``ratings`` keyed by turn id, or ``errors`` (then nothing else is meaningful)."""

    ratings: Ratings = field(default_factory=Ratings)
    lines: list[tuple[int, RatedLine]] = field(default_factory=list)  # (turn id, line), in file order
    errors: list[RowError] = field(default_factory=list)
    session_ids: set[int] = field(default_factory=set)
    # The stored turns of the sessions the file names, read once for validation and reused by the scoring.
    turns: selectors.TurnTable | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


def read_run(path: Path) -> RunFile:
    if path.suffix.lower() != ".jsonl":
        return RunFile(errors=[RowError(0, "file", f"주석 실행 파일은 .jsonl이어야 합니다('{path.suffix}').")])
    try:
        return read_run_rows(read_jsonl(path))
    except FileRejected as exc:
        return RunFile(errors=[RowError(0, "file", str(exc))])


def read_run_rows(rows: Iterable[tuple[int, dict | RowProblem]]) -> RunFile:
    """Every line is checked; the turns are then looked up in one query."""
    result = RunFile()
    reader = _LineReader(RowParser(LabelIndex.load()))
    lines: list[RatedLine] = []
    first_row: dict[str, int] = {}
    try:
        for row, raw in rows:
            if isinstance(raw, RowProblem):
                result.errors.append(RowError(row, raw.column, raw.message))
                continue
            utterance_id, line = reader.read(row, raw, result.errors)
            if utterance_id in first_row:
                result.errors.append(
                    RowError(
                        row,
                        "utterance_id",
                        f"발화 '{utterance_id}'가 {first_row[utterance_id]}행에 이미 있습니다(발화마다 한 줄).",
                    )
                )
                continue
            if utterance_id:
                first_row[utterance_id] = row
            if line is not None:
                lines.append(line)
    except FileRejected as exc:
        return RunFile(errors=[RowError(0, "file", str(exc))])
    _attach_turns(lines, result)
    result.errors.sort(key=lambda e: (e.row, e.column))
    if result.errors:
        result.ratings, result.lines = Ratings(), []
    return result


_AXIS_FIELDS = ("techniques", "client_states", "stage", "dialog_act")
_Answer = tuple[list[str] | None, list[str] | None, str | None, bool, str | None, list[tuple[str, str]]]


class _LineReader:
    """Reads one line with the golden parser's field rules. A rater's answers repeat (the same label set,
    stage or act on thousands of turns), so each distinct value of a field is checked once per file."""

    def __init__(self, parser: RowParser) -> None:
        self.parser = parser
        self.answers: dict[tuple, tuple[object, list[tuple[str, str]]]] = {}

    def read(self, row: int, raw: dict, errors: list[RowError]) -> tuple[str, RatedLine | None]:
        """The line's utterance id (``""`` when unreadable) and what it rates, or ``None`` with its errors."""
        problems: list[tuple[str, str]] = []
        error = _collect(problems)
        self.parser.check_lengths(raw, ("utterance_id",), error)
        utterance_id = "" if problems else self.parser.string(raw, "utterance_id", error).strip()
        parsed = rules.parse_utterance_id(utterance_id) if utterance_id else None
        if not problems and not utterance_id:
            error("utterance_id", "필수 항목이 비어 있습니다.")
        elif utterance_id and parsed is None:
            error("utterance_id", rules.utterance_id_problem(utterance_id, speaker=None, session=None))
        techniques, client_states, stage, act_rated, act, answer_problems = self._answer(raw)
        problems += answer_problems
        if problems:
            errors += [RowError(row, column, message) for column, message in problems]
            return utterance_id, None
        line = RatedLine(row, utterance_id, techniques, client_states, stage, act_rated, act)
        line.session = parsed.session
        return utterance_id, line

    def _answer(self, raw: dict) -> _Answer:
        problems: list[tuple[str, str]] = []
        values = {}
        for name in _AXIS_FIELDS:
            if name in raw:
                values[name], found = self._field(name, raw[name])
                problems += found
        if not values:
            problems.append(
                ("utterance_id", "평가한 축이 없습니다(techniques, client_states, stage, dialog_act 중 하나 이상).")
            )
        return (
            values.get("techniques"),
            values.get("client_states"),
            values.get("stage"),
            "dialog_act" in values,
            values.get("dialog_act"),
            problems,
        )

    def _field(self, name: str, value: object) -> tuple[object, list[tuple[str, str]]]:
        key = (name, tuple(value) if isinstance(value, list) else value)
        try:
            cached = self.answers.get(key)
        except TypeError:  # an unhashable value (an object where a list belongs): checked, not cached
            key, cached = None, None
        if cached is None:
            cached = self._check_field(name, {name: value})
            if key is not None and len(self.answers) < 100_000:
                self.answers[key] = cached
        return cached

    def _check_field(self, name: str, raw: dict) -> tuple[object, list[tuple[str, str]]]:
        parser, problems = self.parser, []
        error = _collect(problems)
        parser.check_lengths(raw, (name,), error)
        if problems:
            return None, problems
        if name in ("techniques", "client_states"):
            return parser.labels(raw, name, error), problems
        if name == "dialog_act":
            return parser.dialog_act(raw, error), problems
        stage = parser.stage(raw, error)
        if stage is None and not problems:
            error("stage", "단계가 비어 있습니다. 평가하지 않은 축이면 stage 키를 빼 주세요.")
        return stage, problems


def _collect(problems: list[tuple[str, str]]):
    def error(column: str, message: str) -> None:
        problems.append((column, message))

    return error


def _attach_turns(lines: list[RatedLine], result: RunFile) -> None:
    # One query: the turns of the sessions the ids name (far fewer codes than ids), kept for the scoring.
    table = selectors.session_turns(codes={line.session for line in lines})
    result.turns = table
    ratings = result.ratings
    labels: dict[tuple, frozenset] = {}  # one frozenset per distinct answer, not per line
    for line in lines:
        turn_id = table.by_name.get(line.utterance_id)
        if turn_id is None:
            result.errors.append(
                RowError(
                    line.row,
                    "utterance_id",
                    f"발화 '{line.utterance_id}'가 포털에 없습니다(먼저 골든 세트로 가져오기).",
                )
            )
            continue
        speaker = table.speakers[turn_id]
        # An empty list on the other speaker's axis is what golden lines carry: ignored, not rated.
        techniques = line.techniques if line.techniques or speaker == catalogue.COUNSELOR else None
        client_states = line.client_states if line.client_states or speaker == catalogue.CLIENT else None
        attach = rules.attach_problems(speaker, techniques=techniques or (), client_states=client_states or ())
        if attach:
            result.errors += [RowError(line.row, column, message) for column, message in attach]
            continue
        if techniques is None and client_states is None and line.stage is None and not line.dialog_act_rated:
            result.errors.append(
                RowError(line.row, "utterance_id", "평가한 축이 없습니다(다른 화자의 빈 목록만 있음).")
            )
            continue
        line.techniques, line.client_states = techniques, client_states
        if techniques is not None:
            ratings.techniques[turn_id] = _interned(labels, techniques)
        if client_states is not None:
            ratings.client_states[turn_id] = _interned(labels, client_states)
        if line.stage is not None:
            ratings.stage[turn_id] = line.stage
        if line.dialog_act_rated:
            ratings.dialog_act[turn_id] = line.dialog_act or NO_ACT
        result.lines.append((turn_id, line))
        result.session_ids.add(table.sessions[turn_id])


def _interned(cache: dict[tuple, frozenset], codes: list[str]) -> frozenset:
    key = tuple(codes)
    found = cache.get(key)
    if found is None:
        found = cache[key] = frozenset(codes)
    return found
