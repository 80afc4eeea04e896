"""JSONL in/out for `audit_trajectories --input` (CONTRACT §4)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from .audit import audit_window
from .config import AuditConfig


class MalformedWindowError(ValueError):
    """A malformed input line; the message starts with "line N:"."""


def _parse(line: str, lineno: int) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MalformedWindowError(f"line {lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise MalformedWindowError(f"line {lineno}: expected a JSON object with window_id and turns")
    wid = obj.get("window_id")
    if not isinstance(wid, str) or not wid:
        raise MalformedWindowError(f"line {lineno}: window_id must be a non-empty string")
    turns = obj.get("turns")
    if not isinstance(turns, list):
        raise MalformedWindowError(f"line {lineno}: turns must be a list")
    for k, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise MalformedWindowError(f"line {lineno}: turns[{k}] must be an object")
        if turn.get("speaker") not in ("client", "counselor"):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].speaker must be 'client' or 'counselor'")
        if not isinstance(turn.get("text", ""), str):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].text must be a string")
        seq = turn.get("seq", k)
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise MalformedWindowError(f"line {lineno}: turns[{k}].seq must be an integer")
    return obj


def audit_jsonl(lines: Iterable[str], *, config: AuditConfig | None = None) -> Iterator[dict[str, Any]]:
    """Yield {"window_id", "label", "score", "explanation"} per non-blank input line.

    Raises ValueError naming the 1-based line number on the first malformed line; windows before it have
    already been yielded, so callers that need all-or-nothing should collect first.
    """
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        obj = _parse(line, lineno)
        result = audit_window(obj["turns"], config=config)
        yield {
            "window_id": obj["window_id"],
            "label": result.label,
            "score": result.score,
            "explanation": result.explanation,
        }
