"""Check a held-out window file as its writer is asked to write it (``writer-brief.md``):

    python3 check_window_file.py FILE.jsonl PREFIX      # e.g. B27

Prints every format error (window and utterance ids, seq, speakers, stages, unknown codes, labels on the wrong
speaker, partly labelled windows, 8–18 turns) and the counts the brief asks for. Standalone, so a writer can run
it with nothing of the repository but a ``codes.json`` beside it (written from ``taxonomy.catalogue``:
``{"techniques": [...], "client_states": [...], "stages": [...]}``); in the repository it reads the catalogue.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

SAFETY = ("suicidal_ideation_admit", "self_harm_disclosure")
WINDOW_LABELS = ("productive", "neutral", "harmful")


def known_codes() -> tuple[set[str], set[str], set[str]]:
    beside = Path(__file__).with_name("codes.json")
    if beside.exists():
        codes = json.loads(beside.read_text(encoding="utf-8"))
        return set(codes["techniques"]), set(codes["client_states"]), set(codes["stages"])
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from taxonomy import catalogue

    return set(catalogue.TECHNIQUE_CODES), set(catalogue.CLIENT_STATE_CODES), set(catalogue.STAGE_CODES)


def turn_errors(window_id: str, index: int, turn: dict, counts: Counter, codes) -> list[str]:
    techniques, states, stages = codes
    where = f"{window_id} turn {index}"
    letter = {"counselor": "C", "client": "K"}.get(turn.get("speaker"))
    if letter is None:
        return [f"{where}: speaker"]
    counts[letter] += 1
    errors = []
    if turn.get("utterance_id") != f"{window_id}-{letter}-{counts[letter]:03d}":
        errors.append(f"{where}: utterance_id {turn.get('utterance_id')}")
    if turn.get("seq") != index:
        errors.append(f"{where}: seq")
    if turn.get("stage") not in stages:
        errors.append(f"{where}: stage")
    if not isinstance(turn.get("text"), str) or not turn["text"].strip():
        errors.append(f"{where}: text")
    given_techniques, given_states = turn.get("techniques", []), turn.get("client_states", [])
    if letter == "C" and given_states:
        errors.append(f"{where}: client_states on a counselor turn")
    if letter == "K" and given_techniques:
        errors.append(f"{where}: techniques on a client turn")
    errors += [f"{where}: unknown technique {code}" for code in given_techniques if code not in techniques]
    errors += [f"{where}: unknown client state {code}" for code in given_states if code not in states]
    return errors


def main(path: str, prefix: str) -> int:
    codes = known_codes()
    errors: list[str] = []
    labels, safety = Counter(), Counter()
    fully_labelled = unlabelled = turns_seen = 0
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            window = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"line {number}: not JSON: {exc}")
            continue
        window_id = window.get("window_id", "")
        if not re.fullmatch(rf"{prefix}-\d\d", window_id):
            errors.append(f"line {number}: window_id {window_id!r}")
        labels[window.get("label")] += 1
        if window.get("label") not in WINDOW_LABELS:
            errors.append(f"line {number}: label")
        turns = window.get("turns", [])
        if not 8 <= len(turns) <= 18:
            errors.append(f"line {number}: {len(turns)} turns (8–18)")
        labelled = [bool(t.get("techniques") or t.get("client_states")) for t in turns]
        if all(labelled):
            fully_labelled += 1
        elif not any(labelled):
            unlabelled += 1
        else:
            errors.append(f"{window_id}: partly labelled (label every turn or none)")
        counts: Counter = Counter()
        for index, turn in enumerate(turns):
            errors += turn_errors(window_id, index, turn, counts, codes)
            safety.update(state for state in turn.get("client_states", []) if state in SAFETY)
            turns_seen += 1
    print("\n".join(errors[:50]) or "no errors")
    print(
        f"windows by label {dict(labels)}; fully labelled {fully_labelled}, unlabelled {unlabelled}; "
        f"turns {turns_seen}; labelled SI {safety[SAFETY[0]]}, SH {safety[SAFETY[1]]}"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
