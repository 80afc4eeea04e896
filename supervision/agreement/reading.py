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
from supervision.models import Turn
from taxonomy import catalogue
from taxonomy.lookup import LabelIndex

from .scoring import NO_ACT, Ratings

RUN_FIELDS = ("utterance_id", "techniques", "client_states", "stage", "dialog_act")


@dataclass
class RatedLine:
    row: int
    utterance_id: str
    techniques: list[str] | None
    client_states: list[str] | None
    stage: str | None
    dialog_act_rated: bool
    dialog_act: str | None


@dataclass
class RunFile:
    """A read run: ``ratings`` keyed by turn id, or ``errors`` (then nothing else is meaningful)."""

    ratings: Ratings = field(default_factory=Ratings)
    lines: list[tuple[int, RatedLine]] = field(default_factory=list)  # (turn id, line), in file order
    errors: list[RowError] = field(default_factory=list)
    session_ids: set[int] = field(default_factory=set)

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
    """Every line is checked; the turns are then looked up in one query per 10,000 lines."""
    result = RunFile()
    parser = RowParser(LabelIndex.load())
    lines: list[RatedLine] = []
    first_row: dict[str, int] = {}
    try:
        for row, raw in rows:
            if isinstance(raw, RowProblem):
                result.errors.append(RowError(row, raw.column, raw.message))
                continue
            utterance_id, line = _parse(parser, row, raw, result.errors)
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
            if line is None:
                continue
            lines.append(line)
    except FileRejected as exc:
        return RunFile(errors=[RowError(0, "file", str(exc))])
    _attach_turns(lines, result)
    result.errors.sort(key=lambda e: (e.row, e.column))
    if result.errors:
        result.ratings, result.lines = Ratings(), []
    return result


def _parse(parser: RowParser, row: int, raw: dict, errors: list[RowError]) -> tuple[str, RatedLine | None]:
    """The line's utterance id (``""`` when unreadable) and what it rates, or ``None`` with its errors."""
    problems: list[RowError] = []

    def error(column: str, message: str) -> None:
        problems.append(RowError(row, column, message))

    parser.check_lengths(raw, RUN_FIELDS, error)
    if problems:
        errors += problems
        return "", None
    utterance_id = parser.string(raw, "utterance_id", error).strip()
    if not utterance_id and not problems:
        error("utterance_id", "필수 항목이 비어 있습니다.")
    elif utterance_id and (problem := rules.utterance_id_problem(utterance_id, speaker=None, session=None)):
        error("utterance_id", problem)
    techniques = parser.labels(raw, "techniques", error) if "techniques" in raw else None
    client_states = parser.labels(raw, "client_states", error) if "client_states" in raw else None
    stage = None
    if "stage" in raw:
        stage = parser.stage(raw, error)
        if stage is None and not any(p.column == "stage" for p in problems):
            error("stage", "단계가 비어 있습니다. 평가하지 않은 축이면 stage 키를 빼 주세요.")
    act_rated = "dialog_act" in raw
    act = parser.dialog_act(raw, error) if act_rated else None
    if not problems and not any(x is not None for x in (techniques, client_states, stage)) and not act_rated:
        error("utterance_id", "평가한 축이 없습니다(techniques, client_states, stage, dialog_act 중 하나 이상).")
    if problems:
        errors += problems
        return utterance_id, None
    return utterance_id, RatedLine(row, utterance_id, techniques, client_states, stage, act_rated, act)


def _attach_turns(lines: list[RatedLine], result: RunFile) -> None:
    turns: dict[str, tuple[int, str, int]] = {}
    ids = [line.utterance_id for line in lines]
    for start in range(0, len(ids), 10_000):
        turns.update(
            (uid, (pk, speaker, session_id))
            for uid, pk, speaker, session_id in Turn.objects.filter(
                utterance_id__in=ids[start : start + 10_000]
            ).values_list("utterance_id", "pk", "speaker", "session_id")
        )
    ratings = result.ratings
    for line in lines:
        found = turns.get(line.utterance_id)
        if found is None:
            result.errors.append(
                RowError(
                    line.row,
                    "utterance_id",
                    f"발화 '{line.utterance_id}'가 포털에 없습니다(먼저 골든 세트로 가져오기).",
                )
            )
            continue
        turn_id, speaker, session_id = found
        # An empty list on the other speaker's axis is what golden lines carry: ignored, not rated.
        if speaker != catalogue.COUNSELOR and not line.techniques:
            line.techniques = None
        if speaker != catalogue.CLIENT and not line.client_states:
            line.client_states = None
        attach = rules.attach_problems(
            speaker, techniques=line.techniques or (), client_states=line.client_states or ()
        )
        result.errors += [RowError(line.row, column, message) for column, message in attach]
        if attach:
            continue
        if line.techniques is None and line.client_states is None and line.stage is None and not line.dialog_act_rated:
            result.errors.append(
                RowError(line.row, "utterance_id", "평가한 축이 없습니다(다른 화자의 빈 목록만 있음).")
            )
            continue
        if line.techniques is not None:
            ratings.techniques[turn_id] = frozenset(line.techniques)
        if line.client_states is not None:
            ratings.client_states[turn_id] = frozenset(line.client_states)
        if line.stage is not None:
            ratings.stage[turn_id] = line.stage
        if line.dialog_act_rated:
            ratings.dialog_act[turn_id] = line.dialog_act or NO_ACT
        result.lines.append((turn_id, line))
        result.session_ids.add(session_id)
