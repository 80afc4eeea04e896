"""Trajectory-audit benchmark: accuracy, ablations and throughput.

Usage (from the repo root):
    PYTHONPATH=. python benchmarks/bench_audit.py [--dev ../shared/data/trajectory_dev.jsonl] [--windows 4000]

Nothing here tunes anything: thresholds come from data/model.json (set on windows_tune.jsonl only).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import LABELS, f1_scores, load_windows  # noqa: E402
from supervision.trajectory.engine.audit import audit_window  # noqa: E402
from supervision.trajectory.engine.config import AuditConfig  # noqa: E402
from supervision.trajectory.engine.io import audit_jsonl  # noqa: E402

HELDOUT = ROOT / "supervision/trajectory/data/windows_heldout.jsonl"
ABLATIONS: list[tuple[str, AuditConfig]] = [
    ("full", AuditConfig()),
    ("symmetric distance", AuditConfig(symmetric_distance=True)),
    ("without momentum", AuditConfig(momentum=False)),
    ("without penalty wall", AuditConfig(penalty_wall=False)),
    ("labels only", AuditConfig(use_text=False)),
    ("text only", AuditConfig(use_labels=False)),
    ("without counselor terms", AuditConfig(counselor_terms=False)),
]


def _default_dev() -> Path:
    """../shared/data/trajectory_dev.jsonl from the repo root; a git worktree sits one level deeper."""
    for base in (ROOT.parent, ROOT.parent.parent):
        cand = base / "shared/data/trajectory_dev.jsonl"
        if cand.exists():
            return cand
    return ROOT.parent / "shared/data/trajectory_dev.jsonl"


def evaluate(windows: list[dict[str, Any]], config: AuditConfig) -> tuple[float, dict[str, float]]:
    gold = [w["label"] for w in windows]
    pred = [audit_window(w["turns"], config=config).label for w in windows]
    return f1_scores(gold, pred)


def report(name: str, windows: list[dict[str, Any]]) -> None:
    macro, per = evaluate(windows, AuditConfig())
    per_s = "  ".join(f"{c}={per[c]:.3f}" for c in LABELS)
    print(f"{name:<28} n={len(windows):<4} macro-F1={macro:.3f}  {per_s}")


def ten_turn_lines(windows: list[dict[str, Any]], count: int) -> list[str]:
    """`count` JSONL lines of exactly 10 turns, built by cycling the turns of the given windows."""
    pool = [t for w in windows for t in w["turns"]]
    lines = []
    for i in range(count):
        turns = []
        for k in range(10):
            t = dict(pool[(i * 7 + k) % len(pool)])
            t["seq"] = k
            turns.append(t)
        lines.append(json.dumps({"window_id": f"B{i:05d}", "turns": turns}, ensure_ascii=False))
    return lines


def best_of(fn: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", default=str(_default_dev()))
    ap.add_argument("--windows", type=int, default=4000)
    args = ap.parse_args()

    heldout = load_windows(HELDOUT)
    print("== (a) accuracy (thresholds fixed from windows_tune.jsonl)")
    dev_path = Path(args.dev)
    if dev_path.exists():
        report(f"dev ({dev_path.name})", load_windows(dev_path))
    else:
        print(f"dev set not found at {dev_path}; skipped")
    report("held-out (synthetic)", heldout)

    print("\n== (b) ablations on held-out windows (macro-F1)")
    for name, cfg in ABLATIONS:
        macro, _ = evaluate(heldout, cfg)
        print(f"{name:<28} {macro:.3f}")

    print(f"\n== (c) throughput on {args.windows} windows of 10 turns (best of 3)")
    lines = ten_turn_lines(heldout, args.windows)
    list(audit_jsonl(lines[:50]))  # warm caches (data files, templates)
    t_audit = best_of(lambda: list(audit_jsonl(lines)))
    t_parse = best_of(lambda: [json.loads(line) for line in lines])
    print(f"audit_jsonl            {args.windows / t_audit:>12,.0f} windows/s  ({t_audit * 1e3:.1f} ms)")
    print(f"baseline json.loads    {args.windows / t_parse:>12,.0f} windows/s  ({t_parse * 1e3:.1f} ms)")
    print(f"ratio audit/parse time {t_audit / t_parse:.1f}x")


if __name__ == "__main__":
    main()
