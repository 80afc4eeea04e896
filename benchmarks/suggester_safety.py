"""The safety states of the label suggester under the bench's cross-validation (``bench_suggester.py`` (a):
5 folds of whole sessions of data/suggester/, the audit's windows always trained on, never scored), client
states only — minutes instead of the whole bench — and the turns it gets wrong, to read:

    python benchmarks/suggester_safety.py [--folds 5] [--show 40] [--dump PATH] [--train-labels DIR] [--by-writer]

``--by-writer``: instead, each blind window file (benchmarks/trajectory/blind-*, each by a writer new to the
repository) left out in turn, the model trained on everything else (data/suggester/ with the sessions added later,
every other window file); scored on the file's labelled client turns: how the safety states carry over to a
writer the model never read, which is what the outside check's held-out set is.

``--train-labels DIR``: train on another copy of data/suggester/ (the same sessions and turns, other labels:
``git archive <commit> data/suggester | tar -x -C /tmp/old`` then ``--train-labels /tmp/old/data/suggester``),
scored on today's labels: an earlier labelling's model against the current reference.

Prints recall and false alarms per 140 client turns; with ``--show`` the missed disclosures and the false
alarms with the turn before them (the counselor's question), lowest/highest probability first.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")


def main() -> None:
    import django

    django.setup()
    import numpy as np

    from supervision.suggesting.engine.corpus import read_folder, read_jsonl_file
    from supervision.suggesting.engine.evaluation import false_alarms, safety_folds_study, session_folds
    from supervision.suggesting.engine.training import Settings
    from supervision.suggesting.training_data import (
        EXTRA_SESSIONS,
        REPOSITORY_TRAINING_SET,
        TRAJECTORY_WINDOWS,
        WINDOW_FILES,
        evaluated_sessions,
    )
    from taxonomy import catalogue

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--show", type=int, default=0)
    parser.add_argument("--dump")
    parser.add_argument("--no-scorer", action="store_true", help="the client-state axis's own safety columns")
    parser.add_argument("--set", action="append", default=[], help="a training setting, NAME=VALUE (Python literal)")
    parser.add_argument("--train-labels", help="train on this copy of data/suggester/ (same turns), score on ours")
    parser.add_argument("--by-writer", action="store_true", help="each blind window file left out in turn")
    args = parser.parse_args()

    everything = read_folder(REPOSITORY_TRAINING_SET)
    sessions = evaluated_sessions(everything)
    trained = everything if not args.train_labels else read_folder(Path(args.train_labels))
    training = evaluated_sessions(trained)
    if [(t.session, t.seq, t.text) for t in training] != [(t.session, t.seq, t.text) for t in sessions]:
        sys.exit("--train-labels: not the same scored sessions and turns as data/suggester/")
    added = [t for t in trained if t.session.startswith(EXTRA_SESSIONS)]
    windows = [
        t for pattern in WINDOW_FILES for p in sorted(TRAJECTORY_WINDOWS.glob(pattern)) for t in read_jsonl_file(p)
    ]
    folds = session_folds(sessions, args.folds)
    if args.by_writer:
        if args.train_labels:
            sys.exit("--by-writer reads data/suggester/ as it is: no --train-labels")
        blind = {p.stem: read_jsonl_file(p) for p in sorted(TRAJECTORY_WINDOWS.glob("blind-*.jsonl"))}
        blind_turns = [t for turns in blind.values() for t in turns]
        blind_sessions = {t.session for t in blind_turns}
        windows = [t for t in windows if t.session not in blind_sessions] + training  # the scored sessions too
        training, sessions = blind_turns, blind_turns
        folds = [{t.session for t in turns} for turns in blind.values()]
    codes = {"techniques": catalogue.TECHNIQUE_CODES, "client_states": catalogue.CLIENT_STATE_CODES}
    safety = catalogue.SAFETY_CRITICAL_STATES
    started = time.perf_counter()
    settings = Settings()
    if args.no_scorer:
        settings.safety_spec = None
    for assignment in args.set:
        name, value = assignment.split("=", 1)
        setattr(settings, name, ast.literal_eval(value))
    predicted, scores = safety_folds_study(
        training, windows + added, folds, label_codes=codes, safety=safety, settings=settings
    )
    # a window turn without labels on its axis is unknown, not "none of these": not scored
    rated = [i for i, t in enumerate(sessions) if t.rated]
    sessions, predicted, scores = (
        [sessions[i] for i in rated],
        [predicted[i] for i in rated],
        [scores[i] for i in rated],
    )
    alarms = false_alarms(sessions, predicted, safety)
    client = [i for i, t in enumerate(sessions) if t.speaker == "client"]
    support = found = 0
    for i in client:
        for state in safety & set(sessions[i].client_states):
            support += 1
            found += state in predicted[i]
    print(
        f"{len({t.session for t in sessions})} sessions or windows scored, {len(added)} added turns and "
        f"{len(windows)} other turns trained on, {len(folds)} folds ({time.perf_counter() - started:.0f} s)"
    )
    print(
        f"safety recall {found}/{support} = {found / max(support, 1):.3f}; false alarms {alarms['false_alarms']} over "
        f"{alarms['client_turns']} client turns = {alarms['per_140']} per 140"
    )
    # How well the scores rank, whatever the thresholds: recall when each state's threshold lets through
    # the given number of false alarms per 140 client turns (both states together: twice that).
    curve = []
    for per_140 in (1.5, 3, 5, 10):
        hits = total = 0
        for state in sorted(safety):
            p = np.array([scores[i].get(state, 0.0) for i in client])
            truth = np.array([state in sessions[i].client_states for i in client])
            negatives = np.sort(p[~truth])[::-1]
            allowed = int(per_140 / 2 / 140 * len(client))
            cut = negatives[allowed] if allowed < len(negatives) else -1.0
            hits += int((p[truth] > cut).sum())
            total += int(truth.sum())
        curve.append(f"{per_140}/140: {hits}/{total} = {hits / max(total, 1):.3f}")
    print("ranking (recall at a false-alarm budget, out of fold): " + "; ".join(curve))
    previous = {(t.session, t.seq): t for t in sessions}
    rows = []
    for i in client:
        t = sessions[i]
        for state in sorted(safety):
            truth, said = state in t.client_states, state in predicted[i]
            if truth != said:
                before = previous.get((t.session, t.seq - 1))
                rows.append(
                    {
                        "kind": "missed" if truth else "false_alarm",
                        "state": state,
                        "p": round(float(scores[i].get(state, 0.0)), 3),
                        "id": t.utterance_id,
                        "labels": t.client_states,
                        "text": t.text,
                        "before": before.text if before else "",
                    }
                )
    if args.dump:
        Path(args.dump).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    if args.show:
        for kind, reverse in (("missed", False), ("false_alarm", True)):
            chosen = sorted((r for r in rows if r["kind"] == kind), key=lambda r: r["p"], reverse=reverse)
            print(f"--- {kind}: {len(chosen)}")
            for r in chosen[: args.show]:
                print(
                    f"{r['p']:.3f} {r['state'][:8]} {r['id']} {r['labels']}\n   before: {r['before'][:90]}\n   turn:   {r['text'][:140]}"
                )


if __name__ == "__main__":
    main()
