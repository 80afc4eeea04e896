"""Grid-search the two label thresholds on windows_tune.jsonl ONLY (never dev or held-out).

Prints the best (productive_min, harmful_max) by macro-F1; copy them into data/model.json by hand.
Usage: PYTHONPATH=. python benchmarks/tune_audit.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import f1_scores, load_windows
from supervision.trajectory.engine.audit import audit_window

TUNE = Path(__file__).resolve().parent.parent / "supervision/trajectory/data/windows_tune.jsonl"


def label(score: float, lo: float, hi: float) -> str:
    return "productive" if score >= hi else "harmful" if score <= lo else "neutral"


def main() -> None:
    windows = load_windows(TUNE)
    gold = [w["label"] for w in windows]
    scores = [audit_window(w["turns"]).score for w in windows]
    grid = [x / 100 for x in range(-150, 151, 5)]
    best = max(
        ((f1_scores(gold, [label(s, lo, hi) for s in scores])[0], lo, hi) for lo in grid for hi in grid if hi > lo),
        key=lambda t: (round(t[0], 4), -(t[2] - t[1])),
    )
    f1, lo, hi = best
    print(f"tune windows={len(windows)} best macro-F1={f1:.3f} harmful_max={lo:+.2f} productive_min={hi:+.2f}")
    for g in ("productive", "neutral", "harmful"):
        vals = sorted(round(s, 2) for s, gg in zip(scores, gold, strict=True) if gg == g)
        print(f"  {g:10s} scores: {vals}")


if __name__ == "__main__":
    main()
