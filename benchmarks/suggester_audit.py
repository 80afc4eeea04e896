"""The trajectory audit of windows nobody labelled, on the label suggester's labels, over every window file
the audit is developed on, the blind files among them — each file suggested by a model trained without it
(the shipped suggester reads every window file's labelled turns):

    make bench-suggester-audit     # python benchmarks/suggester_audit.py [--files development-1,blind-4,…] [--floors 0,0.5]

Every window's labels are stripped, then the file is audited from the text alone; on the suggested labels
whose probability reaches each ``--floors`` value (0: every label the model suggests at its thresholds, tuned
for the supervisor's list; the portal's ``AUDIT_MIN_PROBABILITY`` is marked); and, for reference, on the labels
the file came with. Macro-F1 over all windows, over those that came labelled and over those that came without
labels (the aim: 0.84 on windows with no labels). The audit's verdict layer (data/layer.json) was fitted on
every window file, so every figure here is in-sample for the layer (each blind file was judged once by the
layer before it was trained on: benchmarks/trajectory/README.md). The text-only figure on the development files is
optimistic: the audit's word lists were written looking at them. The models here learn from data/suggester/
and the window files only (no portal sessions): one fit per file, about 5 minutes on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

BLIND = tuple(f"blind-{k}.jsonl" for k in range(1, 10))


def main() -> None:
    import django

    django.setup()
    from benchmarks.common import f1_scores
    from supervision.suggesting.engine import model as model_module
    from supervision.suggesting.engine.corpus import read_folder, read_jsonl_file
    from supervision.suggesting.engine.evaluation import as_model
    from supervision.suggesting.engine.training import fit
    from supervision.suggesting.loading import window_labeller
    from supervision.suggesting.training_data import REPOSITORY_TRAINING_SET, TRAJECTORY_WINDOWS, WINDOW_FILES
    from supervision.trajectory.engine.io import audit_lines, is_unlabelled
    from taxonomy import catalogue

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="", help="comma-separated window files (stems) to hold out in turn")
    parser.add_argument("--floors", default=f"0,{model_module.AUDIT_MIN_PROBABILITY}")
    args = parser.parse_args()
    floors = [float(x) for x in args.floors.split(",")]
    shipped = model_module.AUDIT_MIN_PROBABILITY
    codes = {"techniques": catalogue.TECHNIQUE_CODES, "client_states": catalogue.CLIENT_STATE_CODES}
    sessions = read_folder(REPOSITORY_TRAINING_SET)
    files = sorted(p for pattern in WINDOW_FILES for p in TRAJECTORY_WINDOWS.glob(pattern))
    window_turns = {p: read_jsonl_file(p) for p in files}
    held_out = [p for p in files if not args.files or p.stem in args.files.split(",")]

    ways = ["text alone", *(f"suggested, p ≥ {f:g}" + (" (portal)" if f == shipped else "") for f in floors)]
    ways.append("the file's own labels")
    rows: dict[str, list[tuple[str, str, bool, str | None]]] = {way: [] for way in ways}

    def audit(path: Path, model) -> None:
        windows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        came = [not is_unlabelled(w["turns"]) for w in windows]
        own = [json.dumps(w, ensure_ascii=False).encode() for w in windows]
        for w in windows:
            for turn in w["turns"]:
                turn["techniques"], turn["client_states"] = [], []
        stripped = [json.dumps(w, ensure_ascii=False).encode() for w in windows]
        runs = [(ways[0], stripped, None, shipped)]
        runs += [(way, stripped, window_labeller(model), f) for way, f in zip(ways[1:-1], floors, strict=True)]
        runs.append((ways[-1], own, None, shipped))
        for way, lines, labeller, floor in runs:
            model_module.AUDIT_MIN_PROBABILITY = floor  # read by ``labels_for_audit`` at each call
            errors, results = audit_lines(lines, labeller=labeller)
            assert not errors, errors
            rows[way] += [
                (w["label"], r["label"], c, path.name if path.name in BLIND else None)
                for w, r, c in zip(windows, results, came, strict=True)
            ]
        model_module.AUDIT_MIN_PROBABILITY = shipped

    def trained_without(path: Path | None):
        training = sessions + [t for p in files if p != path for t in window_turns[p]]
        return as_model(fit(training, label_codes=codes, safety=catalogue.SAFETY_CRITICAL_STATES))

    started = time.perf_counter()
    for path in held_out:
        audit(path, trained_without(path))
        print(f"    {path.stem}: held out ({time.perf_counter() - started:.0f} s)", flush=True)
    print(f"Audit macro-F1 with every label stripped ({time.perf_counter() - started:.0f} s):")
    for where, blind in ((f"window files, each held out ({len(held_out)})", None), *((n, n) for n in BLIND)):
        print(f"  {where}:")
        for way in ways:
            parts = []
            for part, keep in (("all", None), ("came labelled", True), ("came without labels", False)):
                picked = [(g, s) for g, s, c, b in rows[way] if b == blind and (keep is None or c == keep)]
                if picked:
                    macro, _ = f1_scores([g for g, _ in picked], [s for _, s in picked])
                    parts.append(f"{part} ({len(picked)}) {macro:.3f}")
            print(f"    {way:<28} " + ", ".join(parts))


if __name__ == "__main__":
    main()
