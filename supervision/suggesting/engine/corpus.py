"""Labelled turns for training and evaluation, read from golden JSONL (CONTRACT §2) or handed over by the
portal (its curated sessions). Django-free: the benchmarks read files with it directly."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .features import TurnInput, turn_input


@dataclass
class LabelledTurn:
    session: str
    seq: int
    utterance_id: str
    speaker: str
    stage: str
    text: str
    nonverbal: list[str] = field(default_factory=list)
    techniques: list[str] = field(default_factory=list)
    client_states: list[str] = field(default_factory=list)
    origin: str = ""  # "portal" or the file it came from
    # Whether the turn's labels on its speaker's axis are known. In a golden session a turn without labels
    # means "none of these"; a §4 window's labels are partial (whole windows come unlabelled, and about half
    # of the turns of the others), so there a turn without them is unknown: read for context (the turn before
    # the next one), never learnt from as "none of these".
    rated: bool = True


def session_of(utterance_id: str) -> str:
    for marker in ("-C-", "-K-"):
        if marker in utterance_id:
            return utterance_id.split(marker)[0]
    return utterance_id


def read_golden_lines(lines: Iterable[dict], origin: str, *, session_prefix: str = "") -> list[LabelledTurn]:
    turns = []
    for line in lines:
        session = str(line.get("session") or session_of(str(line.get("utterance_id", ""))))
        turns.append(
            LabelledTurn(
                session=session_prefix + session,
                seq=int(line.get("seq", 0)),
                utterance_id=str(line.get("utterance_id", "")),
                speaker=str(line.get("speaker", "")),
                stage=str(line.get("stage", "")),
                text=str(line.get("text") or ""),
                nonverbal=[str(c) for c in line.get("nonverbal") or []],
                techniques=[str(c) for c in line.get("techniques") or []],
                client_states=[str(c) for c in line.get("client_states") or []],
                origin=origin,
            )
        )
    return turns


def read_jsonl_file(path: Path) -> list[LabelledTurn]:
    """A §2 file, or a file of §4 windows (each window its own session: windows of one file may overlap)."""
    lines, windows = [], []
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip():
                value = json.loads(raw)
                (windows if "turns" in value and "window_id" in value else lines).append(value)
    turns = read_golden_lines(lines, path.name)
    for window in windows:
        in_window = read_golden_lines(window["turns"], path.name, session_prefix=f"{path.stem}:{window['window_id']}:")
        for turn in in_window:
            turn.rated = bool(turn.techniques or turn.client_states)
        turns += in_window
    return turns


def read_folder(folder: Path) -> list[LabelledTurn]:
    turns = []
    for path in sorted(folder.rglob("*.jsonl")):
        turns += read_jsonl_file(path)
    return turns


def by_session(turns: Sequence[LabelledTurn]) -> dict[str, list[LabelledTurn]]:
    sessions: dict[str, list[LabelledTurn]] = {}
    for turn in turns:
        sessions.setdefault(turn.session, []).append(turn)
    for session in sessions.values():
        session.sort(key=lambda t: t.seq)
    return sessions


def inputs(turns: Sequence[LabelledTurn], turns_before: int = 1) -> list[TurnInput]:
    """The suggester's view of each turn with the texts of the ``turns_before`` turns before it in its
    session (by ``seq``; ``turn_input``)."""
    text_at: dict[tuple[str, int], str] = {(t.session, t.seq): t.text for t in turns}
    return [
        turn_input(
            t.text,
            t.stage,
            t.nonverbal,
            [text_at.get((t.session, t.seq - k), "") for k in range(1, turns_before + 1)],
        )
        for t in turns
    ]


def digest(turns: Sequence[LabelledTurn]) -> str:
    """SHA-256 of the training data as the model saw it (order-independent)."""
    rows = sorted(
        json.dumps(
            [
                t.session,
                t.seq,
                t.speaker,
                t.stage,
                t.text,
                t.nonverbal,
                sorted(t.techniques),
                sorted(t.client_states),
                t.rated,
            ],
            ensure_ascii=False,
        )
        for t in turns
    )
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()
