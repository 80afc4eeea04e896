"""Trajectory-audit benchmark: accuracy, ablations and throughput.

Usage (from the repo root):
    make bench-audit
    python benchmarks/bench_audit.py [--dev benchmarks/trajectory/development-1.jsonl] [--windows 4000]

Nothing here tunes anything. The verdict comes from the verdict layer (data/layer.json, layer_text.npz),
fitted by benchmarks/fit_audit_layer.py on every window file, which also prints its leave-one-file-out figures
(the out-of-sample ones); "engine alone" rows show the engine's thresholds (data/model.json, set with
benchmarks/tune_audit.py on the ten hand-written development files). The lexicon and score terms were shaped
by studying the errors on the development and generator-made files, so every figure here is a development
figure for the engine and an in-sample one for the layer.

The blind files (60 windows each) were written by hand by authors blind to the engine, its data files and
every other window file, each measured once on the engine as it then stood; blind-4 … blind-9 also once on the
verdict layer before it was trained on them. Section (a) and the ablations run on those four, split by how much
of each window is labelled. What each file is and the figures each had when it was still blind:
benchmarks/trajectory/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import LABELS, f1_scores, is_korean, load_windows  # noqa: E402
from supervision.trajectory.engine.audit import audit_windows  # noqa: E402
from supervision.trajectory.engine.config import AuditConfig  # noqa: E402
from supervision.trajectory.engine.io import audit_jsonl  # noqa: E402

WINDOWS = ROOT / "benchmarks/trajectory"  # the labelled window files; their history: benchmarks/trajectory/README.md
GENERATED_TUNE = WINDOWS / "generated-tune.jsonl"  # generator-made (make_windows.py); error analysis
GENERATED_CHECK = WINDOWS / "generated-check.jsonl"  # generator-made; error analysis since, development data
# The ten hand-written development files, in the order they were written: the threshold fit and the
# leave-one-file-out cross-validation (tune_audit.py) use all ten.
DEV = [WINDOWS / f"development-{k}.jsonl" for k in range(1, 11)]
DEV_1, DEV_2, DEV_3, DEV_4, DEV_5, DEV_6, DEV_7, DEV_8, DEV_9, DEV_10 = DEV
BLIND_1 = WINDOWS / "blind-1.jsonl"  # hand-written blind to the engine: the held-out set
BLIND_2 = WINDOWS / "blind-2.jsonl"  # the same, all Korean, written 2026-12-06 (its errors read since)
BLIND_3 = WINDOWS / "blind-3.jsonl"  # the same, all Korean, written 2026-12-06
# The same, all Korean, written 2026-12-06 after the verdict layer's design was fixed: each judged once by the
# layer before it was trained on (blind-7's writer was asked to keep the verdict out of the surface words).
BLIND_LATER = [WINDOWS / f"blind-{k}.jsonl" for k in range(4, 10)]
ENGINE_ALONE = AuditConfig(learned_layer=False)  # the engine's thresholds decide, not the verdict layer
ABLATIONS: list[tuple[str, AuditConfig]] = [
    ("full", AuditConfig()),
    ("symmetric distance", AuditConfig(symmetric_distance=True)),
    ("without momentum", AuditConfig(momentum=False)),
    ("without penalty wall", AuditConfig(penalty_wall=False)),
    ("labels only", AuditConfig(use_text=False)),
    ("text only", AuditConfig(use_labels=False)),
    ("without counselor terms", AuditConfig(counselor_terms=False)),
]


def evaluate(windows: list[dict[str, Any]], config: AuditConfig) -> tuple[float, dict[str, float]]:
    gold = [w["label"] for w in windows]
    pred = [a.label for a in audit_windows([w["turns"] for w in windows], config=config)]
    return f1_scores(gold, pred)


def report(name: str, windows: list[dict[str, Any]], config: AuditConfig | None = None) -> None:
    macro, per = evaluate(windows, config or AuditConfig())
    per_s = "  ".join(f"{c}={per[c]:.3f}" for c in LABELS)
    print(f"{name:<28} n={len(windows):<4} macro-F1={macro:.3f}  {per_s}")


def report_both(name: str, windows: list[dict[str, Any]]) -> None:
    """The audit as shipped (the verdict layer decides) and the engine's thresholds alone, on the same windows."""
    report(name, windows)
    report(f"{name} (engine alone)", windows, ENGINE_ALONE)


def _by_labelling(windows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Windows split by how much of them is labelled (the text-only ones are the hard part)."""

    def labelled(turn: dict[str, Any]) -> bool:
        return bool(turn.get("techniques") or turn.get("client_states"))

    parts: dict[str, list[dict[str, Any]]] = {"unlabelled": [], "partly labelled": [], "fully labelled": []}
    for window in windows:
        flags = [labelled(t) for t in window["turns"]]
        part = "unlabelled" if not any(flags) else "fully labelled" if all(flags) else "partly labelled"
        parts[part].append(window)
    return parts


def _by_language(windows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Korean and English windows, split as tune_audit.py splits them."""
    parts: dict[str, list[dict[str, Any]]] = {"Korean": [], "English": []}
    for window in windows:
        parts["Korean" if is_korean(window) else "English"].append(window)
    return parts


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


def best_of(fn: Callable[[], object], runs: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    best = float("inf")
    for _ in range(runs):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", default=str(DEV_1))
    ap.add_argument("--windows", type=int, default=4000)
    args = ap.parse_args()

    heldout, handwritten, v2 = load_windows(GENERATED_CHECK), load_windows(DEV_2), load_windows(DEV_3)
    v3, v4, v5 = load_windows(DEV_4), load_windows(DEV_5), load_windows(DEV_6)
    v6, v7, v8 = load_windows(DEV_7), load_windows(DEV_8), load_windows(DEV_9)
    v9, v10 = load_windows(DEV_10), load_windows(BLIND_1)
    later = {path.stem: load_windows(path) for path in BLIND_LATER}
    held_out = [w for windows in later.values() for w in windows]
    print("== (a) blind-4 … blind-9 (Korean, six new writers), each judged once by the verdict layer before it")
    print("       was trained on (figures: benchmarks/trajectory/README.md); in-sample for the layer now (its")
    print("       leave-one-file-out: make fit-audit-layer); windows with no labels read from their text alone here")
    for name, windows in (*later.items(), ("all six", held_out)):
        report_both(name, windows)
    for part, windows in _by_labelling(held_out).items():
        report_both(f"  all six, {part}", windows)
    gold = [w["label"] for w in held_out]
    pred = [a.label for a in audit_windows([w["turns"] for w in held_out])]
    print("confusion (rows gold, columns predicted): " + " ".join(f"{c[:4]:>5}" for c in LABELS))
    for g in LABELS:
        row = [sum(1 for x, y in zip(gold, pred, strict=True) if x == g and y == p) for p in LABELS]
        print(f"  {g:<10}" + "".join(f"{n:>6}" for n in row))
    print("\n== blind-1, -2 and -3: each held out from the engine when it was new; the verdict layer is fitted on them")
    for path in (BLIND_1, BLIND_2, BLIND_3):
        blind = load_windows(path)
        report_both(path.stem, blind)
        for part, windows in _by_labelling(blind).items():
            report_both(f"  {part}", windows)
    for language, windows in _by_language(v10).items():
        report_both(f"  blind-1 {language}", windows)
    print("\n== development rows (rules shaped by error analysis on these, the verdict layer fitted on them)")
    report("generated-tune", load_windows(GENERATED_TUNE))
    dev_path = Path(args.dev)
    if dev_path.exists():
        report("development-1", load_windows(dev_path))
    else:
        print(f"dev set not found at {dev_path}; skipped")
    report("generated-check", heldout)
    report("development-2", handwritten)
    report("development-3 (blind once: 0.778)", v2)
    report("development-4 (blind once: 0.772)", v3)
    report("development-5 (blind once: 0.622)", v4)
    report("development-6 (blind once: 0.753)", v5)
    report("development-7 (blind once: 0.761)", v6)
    report("development-8 (blind once: 0.750)", v7)
    report("development-9 (blind once: 0.749)", v8)
    report("development-10 (blind once: 0.785)", v9)

    print("\n== (b) ablations on blind-4 … blind-9 (macro-F1, per-class F1): with the verdict layer, and the engine's")
    print("       thresholds alone (where each term's weight in the engine shows)")
    print(f"{'':<44} {'macro-F1':>8}  " + "  ".join(f"{c:>10}" for c in LABELS))
    for name, cfg in ABLATIONS:
        for suffix, config in (("", cfg), (", engine alone", replace(cfg, learned_layer=False))):
            macro, per = evaluate(held_out, config)
            print(f"{name + suffix:<44} {macro:>8.3f}  " + "  ".join(f"{per[c]:>10.3f}" for c in LABELS))

    print(f"\n== (c) throughput on {args.windows} windows of 10 turns (audit_jsonl, wall clock, best of 3)")
    lines = ten_turn_lines(heldout + handwritten, args.windows)
    list(audit_jsonl(lines[:50]))  # warm caches (data files, templates)
    t_audit = best_of(lambda: list(audit_jsonl(lines)))
    t_parse = best_of(lambda: [json.loads(line) for line in lines])
    print(f"audit_jsonl            {args.windows / t_audit:>12,.0f} windows/s  ({t_audit * 1e3:.1f} ms)")
    print(f"baseline json.loads    {args.windows / t_parse:>12,.0f} windows/s  ({t_parse * 1e3:.1f} ms)")
    print(f"ratio audit/parse time {t_audit / t_parse:.1f}x")
    # On a shared machine wall clock includes waiting for a core; CPU time is what the audit itself costs.
    c_audit = best_of(lambda: list(audit_jsonl(lines)), clock=time.process_time)
    print(f"audit_jsonl CPU time   {args.windows / c_audit:>12,.0f} windows/s  ({c_audit * 1e3:.1f} ms CPU)")
    if hasattr(os, "getloadavg"):
        print(f"load average           {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
