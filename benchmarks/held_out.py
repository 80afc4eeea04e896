"""The shipped suggester and the trajectory audit on window files neither ever learnt from:

    make bench-held-out      # python benchmarks/held_out.py [FILE.jsonl …]   (default: benchmarks/held_out/*.jsonl)

``benchmarks/held_out/`` holds §4 window files written by writers new to the repository, blind to the engine
and to every other file, kept out of every training set: the suggester's (``training_data.WINDOW_FILES`` looks
in ``benchmarks/trajectory/`` only) and the verdict layer's (``fit_audit_layer.py`` likewise). They are the
one fair test of a change, as the outside check's held-out set is; once a file's errors have been read or it
has been trained on, it moves to ``benchmarks/trajectory/`` and stops counting here.

Per file:
- the suggester (the shipped model file) on the turns the file labels, read in their windows as the import and
  the audit read them: techniques micro-F1 over counselor turns, client states micro-F1 over client turns
  (aims 0.60 and 0.45), safety-critical disclosures found, and false alarms per 140 labelled client turns
  (aim: all found, at most 3);
- ``audit_trajectories --input`` (the command, as the outside check runs it) on the file as written, then with
  every label stripped: macro-F1 over all windows and over those that came without labels (aims 0.86, 0.84).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
HELD_OUT = ROOT / "benchmarks" / "held_out"


def suggester_figures(path: Path) -> None:
    from supervision.suggesting.engine.corpus import inputs, read_jsonl_file
    from supervision.suggesting.engine.evaluation import false_alarms, figures
    from supervision.suggesting.loading import current_model
    from taxonomy import catalogue

    model = current_model()
    if model is None:
        sys.exit("the shipped suggester is refused: nothing to measure")
    turns = read_jsonl_file(path)
    suggestions = model.suggest(inputs(turns, model.turns_before), [t.speaker for t in turns])
    kept = [(t, s.labels) for t, s in zip(turns, suggestions, strict=True) if t.rated]
    scored, predicted = [t for t, _ in kept], [labels for _, labels in kept]
    result = figures(scored, predicted, rater=model.version)
    alarms = false_alarms(scored, predicted, catalogue.SAFETY_CRITICAL_STATES)
    axes = result["axes"]
    safety = result["safety"]
    print(
        f"  {model.version}: techniques micro-F1 {axes['techniques']['micro_f1']:.3f} "
        f"({axes['techniques']['turns']} turns), client states {axes['client_states']['micro_f1']:.3f} "
        f"({axes['client_states']['turns']} turns); safety found {safety['found']}/{safety['support']}, "
        f"false alarms {sum(alarms['false_alarms'].values())} = {alarms['per_140']} per 140 labelled client turns"
    )
    for missed in safety["missed"]:
        print(f"    missed {missed['utterance_id']} {missed['state']}")


def audit_figures(path: Path, *, strip: bool) -> None:
    from benchmarks.common import f1_scores
    from supervision.trajectory.engine.io import is_unlabelled

    windows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    came_without = {w["window_id"] for w in windows if is_unlabelled(w["turns"])}
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8", delete=False) as handle:
        for window in windows:
            turns = [{**t, "techniques": [], "client_states": []} if strip else t for t in window["turns"]]
            handle.write(json.dumps({"window_id": window["window_id"], "turns": turns}, ensure_ascii=False) + "\n")
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "audit_trajectories", "--input", handle.name],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    finally:
        os.unlink(handle.name)
    verdicts = {row["window_id"]: row["label"] for row in map(json.loads, done.stdout.splitlines())}
    gold = {w["window_id"]: w["label"] for w in windows}

    def macro(ids) -> str:
        ids = sorted(ids)
        return f"{f1_scores([gold[i] for i in ids], [verdicts[i] for i in ids])[0]:.3f} ({len(ids)})"

    how = "every label stripped" if strip else "as written"
    print(
        f"  audit_trajectories, {how}: macro-F1 {macro(gold)}; windows that came labelled "
        f"{macro(set(gold) - came_without)}, without labels {macro(came_without)}"
    )


def main() -> None:
    import django

    django.setup()
    files = [Path(a) for a in sys.argv[1:]] or sorted(HELD_OUT.glob("*.jsonl"))
    if not files:
        sys.exit(f"no held-out window files in {HELD_OUT}")
    for path in files:
        print(f"{path.name}:")
        suggester_figures(path)
        audit_figures(path, strip=False)
        audit_figures(path, strip=True)


if __name__ == "__main__":
    main()
