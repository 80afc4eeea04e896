"""JSONL in/out for `audit_trajectories --input` (CONTRACT §4)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from supervision.rules import first_unencodable, may_hold_unencodable

from .audit import audit_windows
from .config import AuditConfig

# Suggests labels for the turns (§2 dicts) of windows nobody labelled: per window, per turn, a list of codes on
# the turn's speaker's axis (the portal's label suggester, CONTRACT §9); a window's turns are read in order, as
# a turn's suggestion may depend on the turn before it. Passed in by the caller: the engine stays free of Django.
Labeller = Callable[[list[list[dict[str, Any]]]], list[list[list[str]]]]
GIVEN, SUGGESTED = "given", "suggested"


class MalformedWindowError(ValueError):
    """A malformed input line; the message starts with "line N:"."""


_LIST_FIELDS = ("techniques", "client_states", "nonverbal")


def _parse(line: str, lineno: int) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MalformedWindowError(
            f"line {lineno}: JSON: 올바른 JSON이 아닙니다 ({exc.msg}, {exc.colno}번째 글자)"
        ) from None
    if not isinstance(obj, dict):
        raise MalformedWindowError(f"line {lineno}: window: window_id와 turns가 있는 JSON 객체여야 합니다")
    wid = obj.get("window_id")
    if not isinstance(wid, str) or not wid:
        raise MalformedWindowError(f"line {lineno}: window_id: 비어 있지 않은 문자열이어야 합니다")
    turns = obj.get("turns")
    if not isinstance(turns, list):
        raise MalformedWindowError(f"line {lineno}: turns: 발화 목록(list)이어야 합니다")
    check_characters = may_hold_unencodable(line)
    for k, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise MalformedWindowError(f"line {lineno}: turns[{k}]: 객체여야 합니다")
        if turn.get("speaker") not in ("client", "counselor"):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].speaker: 'client' 또는 'counselor'여야 합니다")
        if not isinstance(turn.get("text") or "", str):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].text: 문자열이어야 합니다")
        if not isinstance(turn.get("utterance_id") or "", str):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].utterance_id: 문자열이어야 합니다")
        for field in _LIST_FIELDS:
            items = turn.get(field)
            if items and (not isinstance(items, list) or any(type(x) is not str for x in items)):
                raise MalformedWindowError(f"line {lineno}: turns[{k}].{field}: 문자열 목록이어야 합니다")
        seq = turn.get("seq", k)
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].seq: 정수여야 합니다")
        for field, value in turn.items() if check_characters else ():
            if isinstance(field, str) and not first_unencodable(field) and (problem := first_unencodable(value)):
                raise MalformedWindowError(f"line {lineno}: turns[{k}].{field}: {problem}")
    if check_characters and (problem := first_unencodable(obj)):  # a field's name, or the window's own fields
        raise MalformedWindowError(f"line {lineno}: window: {problem}")
    return obj


def parse_windows(lines: Iterable[str | bytes]) -> tuple[list[dict[str, Any]], list[str]]:
    """Validate every line first: (windows, errors). Errors name the 1-based line, one per bad line."""
    windows: list[dict[str, Any]] = []
    errors: list[str] = []
    for lineno, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                errors.append(f"line {lineno}: UTF-8 텍스트가 아닙니다")
                continue
        if not raw.strip():
            continue
        try:
            windows.append(_parse(raw, lineno))
        except MalformedWindowError as exc:
            errors.append(str(exc))
    return windows, errors


BATCH = 256  # windows audited together (see audit_windows); bounds memory for large inputs


def audit_lines(
    lines: list[bytes], first_lineno: int = 1, *, config: AuditConfig | None = None, labeller: Labeller | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """One chunk of an input file, parsed, validated and audited: (errors, results). Nothing is audited
    when the chunk has an error (the caller prints nothing then). Pure, so chunks can go to worker
    processes; the line numbers continue from ``first_lineno``."""
    windows: list[dict[str, Any]] = []
    errors: list[str] = []
    for lineno, raw in enumerate(lines, start=first_lineno):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            errors.append(f"line {lineno}: UTF-8 텍스트가 아닙니다")
            continue
        if not text.strip():
            continue
        try:
            windows.append(_parse(text, lineno))
        except MalformedWindowError as exc:
            errors.append(str(exc))
    if errors:
        return errors, []
    return [], list(audit_parsed(windows, config=config, labeller=labeller))


def _result(obj: dict[str, Any], audit: Any, labels: str) -> dict[str, Any]:
    return {
        "window_id": obj["window_id"],
        "label": audit.label,
        "score": audit.score,
        "explanation": audit.explanation,
        "labels": labels,
    }


def audit_parsed(
    windows: Iterable[dict[str, Any]], *, config: AuditConfig | None = None, labeller: Labeller | None = None
) -> Iterator[dict[str, Any]]:
    """The CONTRACT §4 output object per already validated window, in input order."""
    batch: list[dict[str, Any]] = []
    for obj in windows:
        batch.append(obj)
        if len(batch) == BATCH:
            yield from _audit_batch(batch, config, labeller)
            batch = []
    if batch:
        yield from _audit_batch(batch, config, labeller)


def is_unlabelled(turns: Iterable[dict[str, Any]]) -> bool:
    """No turn carries a technique or a client state (CONTRACT §9: then the audit reads suggestions)."""
    return not any(turn.get("techniques") or turn.get("client_states") for turn in turns)


def with_suggestions(batch: list[dict[str, Any]], labeller: Labeller | None) -> tuple[list[list[dict]], list[str]]:
    """The windows' turns, those of unlabelled windows carrying the labeller's labels (copies: the input is
    left as read), and per window whether its labels were given or suggested."""
    windows = [obj["turns"] for obj in batch]
    sources = [GIVEN] * len(batch)
    if labeller is None:
        return windows, sources
    chosen = [i for i, turns in enumerate(windows) if turns and is_unlabelled(turns)]
    if not chosen:
        return windows, sources
    suggested = labeller([windows[i] for i in chosen])
    for i, labels in zip(chosen, suggested, strict=True):
        windows[i] = [_labelled(turn, codes) for turn, codes in zip(windows[i], labels, strict=True)]
        sources[i] = SUGGESTED
    return windows, sources


def _labelled(turn: dict[str, Any], codes: list[str]) -> dict[str, Any]:
    axis = "techniques" if turn.get("speaker") == "counselor" else "client_states"
    return {**turn, axis: codes}


def _audit_batch(
    batch: list[dict[str, Any]], config: AuditConfig | None, labeller: Labeller | None = None
) -> Iterator[dict[str, Any]]:
    windows, sources = with_suggestions(batch, labeller)
    audits = audit_windows(windows, config=config, with_states=False)
    for obj, audit, source in zip(batch, audits, sources, strict=True):
        yield _result(obj, audit, source)


def audit_jsonl(lines: Iterable[str], *, config: AuditConfig | None = None) -> Iterator[dict[str, Any]]:
    """Yield {"window_id", "label", "score", "explanation", "labels"} per non-blank input line.

    Raises ValueError naming the 1-based line number on the first malformed line; windows before it have
    already been yielded, so callers that need all-or-nothing should collect first (or use parse_windows).
    """
    batch: list[dict[str, Any]] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            batch.append(_parse(line, lineno))
        except MalformedWindowError:
            yield from audit_parsed(batch, config=config)
            raise
        if len(batch) == BATCH:
            yield from _audit_batch(batch, config)
            batch = []
    if batch:
        yield from _audit_batch(batch, config)
