"""Shared helpers for the trajectory benchmarks (no Django)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LABELS = ("productive", "neutral", "harmful")
TRAJECTORY_WINDOWS = Path(__file__).resolve().parent / "trajectory"


def blind_file_stems() -> tuple[str, ...]:
    """Every blind window file of ``trajectory/`` (blind-1, blind-2, … in number order): each by a writer new
    to the repository, trained on since it was measured once (the held-out ones are in ``held_out/``)."""
    stems = (p.stem for p in TRAJECTORY_WINDOWS.glob("blind-*.jsonl"))
    return tuple(sorted(stems, key=lambda stem: int(stem.split("-")[1])))


def load_windows(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def f1_scores(gold: Sequence[str], pred: Sequence[str]) -> tuple[float, dict[str, float]]:
    """Macro-F1 and per-class F1 over the three trajectory labels."""
    per: dict[str, float] = {}
    for c in LABELS:
        tp = sum(g == c and p == c for g, p in zip(gold, pred, strict=True))
        fp = sum(g != c and p == c for g, p in zip(gold, pred, strict=True))
        fn = sum(g == c and p != c for g, p in zip(gold, pred, strict=True))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        per[c] = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return sum(per.values()) / len(per), per


_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def is_korean(window: dict) -> bool:
    """Hangul makes up at least 30% of the letters of the window's text (the files are either clearly Korean,
    over 90%, or English with at most a stray Korean word)."""
    text = " ".join(str(t.get("text") or "") for t in window["turns"])
    letters = sum(c.isalpha() for c in text)
    return letters > 0 and len(_HANGUL.findall(text)) >= 0.3 * letters
