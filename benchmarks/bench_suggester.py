"""Label-suggester benchmark (CONTRACT §9): cross-validated quality, throughput and the import's slowdown.

    make bench-suggester                       # DATABASE_URL defaults to the bench database
    python benchmarks/bench_suggester.py [--folds 5] [--turns 25000] [--import-turns 20000]

(a) Quality over the repository's training sessions (data/suggester/): each group of held-out sessions is
    suggested by a model trained — thresholds included, by its own inner cross-validation — on every other
    session and on the audit's labelled windows and the sessions added later (SGS_* for the safety states, SGC_* and
    SGD_* by new writers; trained on, never scored, so the figures compare with earlier models'). ``--folds 0`` leaves
    one session out at a time.
    Per axis micro/macro-F1 (CONTRACT §7 definitions), safety recall and false alarms per 140 client turns.
(b) benchmarks/trajectory/blind-*.jsonl (blind-1, blind-2, …; all but blind-1 Korean; each by another writer new to the repository),
    each suggested by a model trained on the shipped model's training set without that file: counselor turns
    that carry a technique and client turns that carry a state (what the windows leave unlabelled is unknown,
    so those turns are not scored).
(c) ``suggest_labels --input`` on ≥ 25,000 turns, turns/s net of start-up (a one-line run subtracted).
(d) A fresh csv import with and without the suggester, in the bench database (bar: at most 25 % slower).
(e) ``audit_trajectories --input`` on ``--windows`` ten-turn windows nobody labelled (the training sessions'
    turns, labels dropped, every text distinct, so nothing is suggested twice), which the command audits on
    suggested labels: windows/s net of start-up (a ten-window run subtracted), with the suggester and — its
    model path pointed nowhere — without it; with TRAJECTORY_AUDIT_PROCESSES as set (default: the cores) and
    in one process (bar: ≥ 2,000 windows/s).
(f) The trajectory audit on blind-4 and every later blind file with every label stripped, read from the text alone and on the
    suggestions of a model trained without the file (the shipped one read its labelled turns), as
    ``audit_trajectories --input`` reads a file nobody labelled; then the windows that came with labels and those
    that came without, apart (aim on unlabelled windows: 0.84). In-sample for the audit's verdict layer, which
    learns every window file (each was judged once by the layer before: benchmarks/trajectory/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.common import blind_file_stems  # noqa: E402

BLIND_FILES = blind_file_stems()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")


def quality(folds: int) -> None:
    from supervision.suggesting.engine.corpus import read_folder, read_jsonl_file
    from supervision.suggesting.engine.evaluation import false_alarms, figures, held_out_suggestions, session_folds
    from supervision.suggesting.training_data import (
        EXTRA_SESSIONS,
        REPOSITORY_TRAINING_SET,
        TRAJECTORY_WINDOWS,
        WINDOW_FILES,
        evaluated_sessions,
    )
    from taxonomy import catalogue

    everything = read_folder(REPOSITORY_TRAINING_SET)
    sessions = evaluated_sessions(everything)
    added = [t for t in everything if t.session.startswith(EXTRA_SESSIONS)]
    windows = [
        t for pattern in WINDOW_FILES for p in sorted(TRAJECTORY_WINDOWS.glob(pattern)) for t in read_jsonl_file(p)
    ] + added
    names = sorted({t.session for t in sessions})
    groups = [{name} for name in names] if folds == 0 else session_folds(sessions, folds)
    codes = {"techniques": catalogue.TECHNIQUE_CODES, "client_states": catalogue.CLIENT_STATE_CODES}
    started = time.perf_counter()
    predicted = held_out_suggestions(
        sessions, windows, groups, label_codes=codes, safety=catalogue.SAFETY_CRITICAL_STATES
    )
    result = figures(sessions, predicted, rater="cv")
    alarms = false_alarms(sessions, predicted, catalogue.SAFETY_CRITICAL_STATES)
    how = "leave-one-session-out" if folds == 0 else f"{len(groups)} folds of whole sessions"
    print(
        f"(a) {len(names)} sessions, {len(sessions):,} turns, {how} ({time.perf_counter() - started:.0f} s); "
        f"trained on as well, never scored: the audit's windows and the {len({t.session for t in added})} sessions "
        f"added later ({', '.join(f'{prefix}*' for prefix in EXTRA_SESSIONS)})"
    )
    _print_figures(result)
    print(
        f"    safety false alarms: {alarms['false_alarms']} over {alarms['client_turns']} client turns = "
        f"{alarms['per_140']} per 140 (bar ≤ 3)"
    )


def _print_figures(result: dict) -> None:
    for axis in ("techniques", "client_states"):
        figures_ = result["axes"][axis]
        bar = "≥ 0.60" if axis == "techniques" else "≥ 0.45"
        print(
            f"    {axis:<13} turns {figures_['turns']:>5}  micro-F1 {figures_['micro_f1']:.3f} (bar {bar})  "
            f"macro-F1 {figures_['macro_f1']:.3f}  kappa {figures_['kappa']}"
        )
    safety = result["safety"]
    missed = ", ".join(f"{m['utterance_id']} {m['state']}" for m in safety["missed"][:8])
    print(
        f"    safety recall {safety['found']}/{safety['support']} = {safety['recall']}"
        + (f"; missed {missed}" if missed else "")
    )


@cache
def _window_file_turns() -> dict:
    from supervision.suggesting.engine.corpus import read_jsonl_file
    from supervision.suggesting.training_data import TRAJECTORY_WINDOWS, WINDOW_FILES

    return {p.stem: read_jsonl_file(p) for pattern in WINDOW_FILES for p in sorted(TRAJECTORY_WINDOWS.glob(pattern))}


@cache
def _trained_without(name: str):
    """The shipped model's training set (repository sessions and window files) without the window file
    ``name``, fitted: how a blind file is read by a model that never saw it. Parts (b) and (f) share the fits."""
    from supervision.suggesting.engine.corpus import read_folder
    from supervision.suggesting.engine.evaluation import as_model
    from supervision.suggesting.engine.training import fit
    from supervision.suggesting.training_data import REPOSITORY_TRAINING_SET
    from taxonomy import catalogue

    codes = {"techniques": catalogue.TECHNIQUE_CODES, "client_states": catalogue.CLIENT_STATE_CODES}
    training = read_folder(REPOSITORY_TRAINING_SET) + [
        t for stem, turns in _window_file_turns().items() if stem != name for t in turns
    ]
    return as_model(fit(training, label_codes=codes, safety=catalogue.SAFETY_CRITICAL_STATES))


def blind() -> None:
    """Each blind file's labelled turns, suggested by a model trained on everything else: the shipped model's
    training set with that file left out (its other four blind files are other new writers it reads)."""
    from supervision.suggesting.engine.corpus import inputs
    from supervision.suggesting.engine.evaluation import false_alarms, figures
    from taxonomy import catalogue

    files = _window_file_turns()
    for name in BLIND_FILES:
        model = _trained_without(name)
        turns = files[name]
        suggestions = model.suggest(inputs(turns, model.turns_before), [t.speaker for t in turns])
        kept = [
            (t, s.labels)
            for t, s in zip(turns, suggestions, strict=True)
            if (t.techniques if t.speaker == "counselor" else t.client_states)
        ]
        result = figures([t for t, _ in kept], [labels for _, labels in kept], rater=name)
        alarms = false_alarms([t for t, _ in kept], [labels for _, labels in kept], catalogue.SAFETY_CRITICAL_STATES)
        print(f"(b) {name}, left out of training: {len(kept)} labelled turns of {len(turns)}")
        _print_figures(result)
        print(f"    safety false alarms: {alarms['false_alarms']} = {alarms['per_140']} per 140 labelled client turns")


def throughput(count: int) -> None:
    from supervision.suggesting.engine.corpus import read_folder
    from supervision.suggesting.training_data import REPOSITORY_TRAINING_SET

    source = read_folder(REPOSITORY_TRAINING_SET)
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.jsonl", Path(tmp) / "small.jsonl"
        with big.open("w", encoding="utf-8") as handle:
            for n in range(count):
                t = source[n % len(source)]
                session = f"TP{n // 200:05d}"
                line = {
                    "utterance_id": f"{session}-{'C' if t.speaker == 'counselor' else 'K'}-{n % 200 + 1:03d}",
                    "speaker": t.speaker,
                    "stage": t.stage,
                    "seq": n % 200,
                    "text": t.text,
                    "nonverbal": t.nonverbal,
                    "techniques": [],
                    "client_states": [],
                    "source": "bench_synthetic",
                }
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        small.write_text(big.read_text(encoding="utf-8").split("\n", 1)[0] + "\n", encoding="utf-8")

        def run(path: Path) -> float:
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(ROOT / "manage.py"), "suggest_labels", "--input", str(path)],
                capture_output=True,
                check=True,
                cwd=ROOT,
            )
            elapsed = time.perf_counter() - started
            lines = done.stdout.count(b"\n")
            expected = count if path == big else 1
            if lines != expected:
                sys.exit(f"suggest_labels printed {lines} lines for {expected} turns")
            return elapsed

        run(small)  # warm-up: the interpreter, Django and the model file read once into the page cache
        startup = min(run(small) for _ in range(3))
        whole = min(run(big) for _ in range(3))
    net = whole - startup
    print(
        f"(c) suggest_labels --input: {count:,} turns in {whole:.2f} s, start-up {startup:.2f} s → "
        f"{count / net:,.0f} turns/s net of start-up (bar ≥ 5,000; best of 3, load {os.getloadavg()[0]:.1f})"
    )


def import_slowdown(turns: int) -> None:
    from benchmarks.bench_db import queue_follow_up_jobs_without_running_them, use_bench_database

    use_bench_database()
    import django

    django.setup()
    queue_follow_up_jobs_without_running_them()
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.bench_import import suggestion_cost
    from benchmarks.bench_import import write_csv as write_bench_csv

    if connection.settings_dict["NAME"].startswith("test_"):
        sys.exit("refusing to run against a test database")
    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.csv"
        write_bench_csv(path, turns, "BENCHSG")
        without, with_ = (min(timings) for timings in suggestion_cost(path, "BENCHSG", rounds=2))
    print(
        f"(d) import of a {turns:,}-turn csv: without the suggester {without:.2f} s, with it {with_:.2f} s → "
        f"{with_ / without - 1:+.1%} (bar ≤ +25 %; best of 2 each, load {os.getloadavg()[0]:.1f})"
    )


def unlabelled_windows(path: Path, count: int) -> None:
    from supervision.suggesting.engine.corpus import read_folder
    from supervision.suggesting.training_data import REPOSITORY_TRAINING_SET

    source = read_folder(REPOSITORY_TRAINING_SET)
    with path.open("w", encoding="utf-8") as handle:
        for w in range(count):
            turns = []
            for k in range(10):
                n = w * 10 + k
                t = source[n % len(source)]
                # a pass number after the first pass: no two turns alike, so none is suggested for free
                text = t.text if n < len(source) else f"{t.text} ({n // len(source)})"
                letter = "C" if t.speaker == "counselor" else "K"
                turns.append(
                    {
                        "utterance_id": f"AW{w:05d}-{letter}-{k + 1:03d}",
                        "speaker": t.speaker,
                        "stage": t.stage,
                        "seq": k,
                        "text": text,
                        "nonverbal": list(t.nonverbal),
                        "techniques": [],
                        "client_states": [],
                    }
                )
            handle.write(json.dumps({"window_id": f"AW{w:05d}", "turns": turns}, ensure_ascii=False) + "\n")


def audit_command(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full, small = Path(tmp) / "windows.jsonl", Path(tmp) / "ten.jsonl"
        unlabelled_windows(full, count)
        small.write_text("".join(full.read_text(encoding="utf-8").splitlines(keepends=True)[:10]), encoding="utf-8")

        def run(path: Path, env: dict) -> float:
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(ROOT / "manage.py"), "audit_trajectories", "--input", str(path)],
                capture_output=True,
                check=True,
                cwd=ROOT,
                env={**os.environ, **env},
            )
            elapsed = time.perf_counter() - started
            lines = done.stdout.decode().splitlines()
            expected = count if path == full else 10
            suggested = env.get("SUGGESTER_MODEL_PATH") is None
            if len(lines) != expected or any(('"labels": "suggested"' in line) != suggested for line in lines):
                sys.exit(f"audit_trajectories printed {len(lines)} lines for {expected} windows, or wrong labels")
            return elapsed

        processes = os.environ.get("TRAJECTORY_AUDIT_PROCESSES", f"{os.cpu_count()} (the cores)")
        for name, env in (
            (f"with the suggester, {processes} processes", {}),
            (f"without it, {processes} processes", {"SUGGESTER_MODEL_PATH": "/nonexistent/suggester.json"}),
            ("with the suggester, one process", {"TRAJECTORY_AUDIT_PROCESSES": "1"}),
        ):
            run(small, env)  # warm-up
            startup = min(run(small, env) for _ in range(2))
            whole = min(run(full, env) for _ in range(2))
            print(
                f"(e) audit_trajectories --input, {count:,} unlabelled windows, {name}: {whole:.2f} s, start-up "
                f"{startup:.2f} s → {count / (whole - startup):,.0f} windows/s net of start-up (bar ≥ 2,000; best "
                f"of 2, load {os.getloadavg()[0]:.1f})",
                flush=True,
            )


def audit_without_labels() -> None:
    from benchmarks.common import f1_scores
    from supervision.suggesting.loading import window_labeller
    from supervision.trajectory.engine.io import audit_lines

    for name in BLIND_FILES[3:]:
        model = _trained_without(name)  # the shipped suggester read the file's labelled turns
        path = ROOT / "benchmarks" / "trajectory" / f"{name}.jsonl"
        windows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        came_labelled = {
            w["window_id"] for w in windows if any(t.get("techniques") or t.get("client_states") for t in w["turns"])
        }
        gold = {w["window_id"]: w["label"] for w in windows}
        for w in windows:
            for turn in w["turns"]:
                turn["techniques"], turn["client_states"] = [], []
        lines = [json.dumps(w, ensure_ascii=False).encode() for w in windows]
        print(f"(f) the audit on {name} with its labels stripped ({len(windows)} windows, macro-F1):")
        for way, labeller in (("text alone", None), ("with suggestions", window_labeller(model))):
            errors, results = audit_lines(lines, labeller=labeller)
            assert not errors, errors
            said = {r["window_id"]: r["label"] for r in results}
            parts = []
            for part, ids in (
                ("all", sorted(gold)),
                ("came labelled", sorted(came_labelled)),
                ("came unlabelled", sorted(set(gold) - came_labelled)),
            ):
                macro, _ = f1_scores([gold[i] for i in ids], [said[i] for i in ids])
                parts.append(f"{part} ({len(ids)}) {macro:.3f}")
            print(f"    {way}: " + ", ".join(parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5, help="0 = leave one session out")
    parser.add_argument("--turns", type=int, default=25_000)
    parser.add_argument("--import-turns", type=int, default=20_000)
    parser.add_argument("--windows", type=int, default=6_000)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: a,b,c,d,e,f")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    if "d" not in skip:
        import_slowdown(args.import_turns)
    else:
        import django

        django.setup()
    if "e" not in skip:
        audit_command(args.windows)
    if "c" not in skip:
        throughput(args.turns)
    if "b" not in skip:
        blind()
    if "f" not in skip:
        audit_without_labels()
    if "a" not in skip:
        quality(args.folds)


if __name__ == "__main__":
    main()
