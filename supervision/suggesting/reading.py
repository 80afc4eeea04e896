"""``suggest_labels --input``: §2 lines or §4 windows → the turns to suggest, or every error as
``row N, column C: message`` (N the 1-based line, C the field). Labels in the file are ignored.

Only what the suggester reads is checked (utterance_id, speaker, text, stage, nonverbal): a file of turns
that are not in the portal, so none of the importer's cross-row rules apply."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from supervision.rules import UNREADABLE_UTF8_LINE, unencodable_problem, unreadable_json_problem
from taxonomy import catalogue

from .engine.corpus import session_of
from .engine.features import TurnInput, session_inputs, turn_input

_SPEAKERS = {alias.lower(): s.code for s in catalogue.SPEAKERS for alias in (s.code, s.ko, *s.aliases)}
_STAGES = {alias.lower(): s.code for s in catalogue.STAGES for alias in (s.code, s.ko, *s.aliases)}


@dataclass
class InputTurns:
    utterance_ids: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)
    inputs: list[TurnInput] = field(default_factory=list)
    errors: list[tuple[int, str, str]] = field(default_factory=list)  # (row, column, message)


def _turn(raw: object, row: int, where: str, errors: list) -> tuple[str, str, str, str, list, object] | None:
    def error(column: str, message: str) -> None:
        errors.append((row, f"{where}{column}", message))

    if not isinstance(raw, dict):
        error("utterance_id", "발화마다 JSON 객체여야 합니다.")
        return None
    before = len(errors)
    utterance_id = raw.get("utterance_id")
    if not isinstance(utterance_id, str) or not utterance_id.strip():
        error("utterance_id", "필수 항목이 비어 있거나 문자열이 아닙니다.")
    speaker = raw.get("speaker")
    code = _SPEAKERS.get(speaker.strip().lower()) if isinstance(speaker, str) else None
    if code is None:
        error("speaker", f"화자 {speaker!r}는 counselor 또는 client(상담자/내담자)여야 합니다.")
    text = raw.get("text", "")
    if text is None:
        text = ""
    if not isinstance(text, str):
        error("text", "발화는 문자열이어야 합니다.")
    elif problem := unencodable_problem(text):
        error("text", problem)
    stage = raw.get("stage") or ""
    if not isinstance(stage, str) or (stage and stage.strip().lower() not in _STAGES):
        error("stage", f"단계 {stage!r}는 라포/탐색/개입/정리 중 하나여야 합니다.")
    nonverbal = raw.get("nonverbal") or []
    if not isinstance(nonverbal, list) or not all(isinstance(cue, str) for cue in nonverbal):
        error("nonverbal", "비언어 단서는 문자열 목록이어야 합니다.")
    elif problem := next(filter(None, map(unencodable_problem, nonverbal)), None):
        error("nonverbal", problem)
    seq = raw.get("seq")
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
        error("seq", "순서는 0 이상의 정수여야 합니다.")
    if len(errors) > before:
        return None
    session = raw.get("session") if isinstance(raw.get("session"), str) else session_of(utterance_id)
    return utterance_id, code, text, _STAGES.get(stage.strip().lower(), ""), nonverbal, (session, seq)


def read_input(data: bytes, turns_before: int = 1) -> InputTurns:
    """Each turn with the texts of the ``turns_before`` turns before it (``SuggesterModel.turns_before``): in
    its window, or in its session — by ``seq`` when the lines carry it, else the session's lines before."""
    result = InputTurns()
    recent_in_session: dict[str, list[str]] = {}  # the session's last texts, nearest last
    by_position: dict[tuple[str, int], str] = {}
    pending: list[tuple[int, tuple]] = []  # (index, (session, seq)) whose earlier turns are looked up at the end
    for number, raw_line in enumerate(data.split(b"\n"), start=1):
        if not raw_line.strip():
            continue
        try:
            value = json.loads(raw_line.decode("utf-8-sig" if number == 1 else "utf-8"))
        except UnicodeDecodeError:
            result.errors.append((number, "utterance_id", UNREADABLE_UTF8_LINE))
            continue
        except (json.JSONDecodeError, RecursionError) as exc:
            result.errors.append((number, "utterance_id", unreadable_json_problem(exc)))
            continue
        if isinstance(value, dict) and "turns" in value:
            window_id = value.get("window_id")
            if not isinstance(window_id, str) or not window_id:
                result.errors.append((number, "window_id", "window_id가 비어 있거나 문자열이 아닙니다."))
            turns = value["turns"]
            if not isinstance(turns, list):
                result.errors.append((number, "turns", "turns는 발화 목록이어야 합니다."))
                continue
            read = []
            for position, raw_turn in enumerate(turns):
                parsed = _turn(raw_turn, number, f"turns[{position}].", result.errors)
                if parsed is None:
                    continue
                utterance_id, speaker, text, stage, nonverbal, _position = parsed
                result.utterance_ids.append(utterance_id)
                result.speakers.append(speaker)
                read.append((text, stage, nonverbal))
            result.inputs += session_inputs(read, turns_before)
            continue
        parsed = _turn(value, number, "", result.errors)
        if parsed is None:
            continue
        utterance_id, speaker, text, stage, nonverbal, (session, seq) = parsed
        result.utterance_ids.append(utterance_id)
        result.speakers.append(speaker)
        recent = recent_in_session.setdefault(session, [])
        result.inputs.append(turn_input(text, stage, nonverbal, recent[::-1]))
        recent.append(text)
        del recent[:-turns_before]
        if seq is not None:
            by_position[(session, seq)] = text
            pending.append((len(result.inputs) - 1, (session, seq)))
    for index, (session, seq) in pending:
        turn = result.inputs[index]
        before = [by_position.get((session, seq - k), "") for k in range(1, turns_before + 1)]
        result.inputs[index] = turn_input(turn.text, turn.stage, turn.nonverbal, before)
    if not result.utterance_ids and not result.errors:
        result.errors.append((0, "file", "읽을 발화가 없습니다."))
    return result
