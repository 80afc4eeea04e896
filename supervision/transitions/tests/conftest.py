"""Hand-made golden sessions whose transitions the tests count by hand, and persona files."""

from __future__ import annotations

import pytest

from supervision.models import Session
from supervision.testing import import_lines, write_jsonl


def spec_lines(code: str, turns: list[tuple[str, list[str]]], **fields) -> list[dict]:
    """``[("C", ["empathy"]), ("K", ["defensive"]), …]`` → §2 lines of one session, in seq order."""
    lines, numbers = [], {"C": 0, "K": 0}
    for seq, (letter, labels) in enumerate(turns):
        numbers[letter] += 1
        counselor = letter == "C"
        lines.append(
            {
                "utterance_id": f"{code}-{letter}-{numbers[letter]:03d}",
                "session": code,
                "seq": seq,
                "speaker": "counselor" if counselor else "client",
                "stage": "탐색",
                "text": f"합성 발화 {seq}",
                "techniques": labels if counselor else [],
                "client_states": [] if counselor else labels,
                "source": "test_synthetic",
                **fields,
            }
        )
    return lines


def import_spec(code: str, turns: list[tuple[str, list[str]]], trainee: str | None = None) -> Session:
    import_lines(spec_lines(code, turns), trainee=trainee)
    return Session.objects.get(code=code)


def persona_lines(code: str, turns: list[tuple[str, list[str]]]) -> list[dict]:
    """The same sessions as a persona engine writes them: no stage, source or comments."""
    keep = ("utterance_id", "session", "seq", "speaker", "techniques", "client_states", "text")
    return [{k: line[k] for k in keep} for line in spec_lines(code, turns)]


# TA01 (trainee_a): every case of the rule in one session.
#   seq 0 C empathy                 before the first labelled client turn: no pair, no move
#   seq 1 K defensive               P1
#   seq 2 C empathy, reflection     move RELATIONAL (two codes, one category)
#   seq 3 C exploration             the move spans two counselor turns: + EXPLORATORY
#   seq 4 K (none)                  an unlabelled client turn: passed over, the move goes on
#   seq 5 C validation              + RELATIONAL (already there)
#   seq 6 K defense_loosening, affect_contact   C1: pairs with P1
#   seq 7 C (none)                  an empty move …
#   seq 8 K affect_contact          … skips the pair (6, 8), but 8 is the next P
#   seq 9 C confrontation
#   seq 10 K defensive              pairs with 8: (affect_contact, INTERVENTION, defensive)
#   seq 11 C homework               after the last labelled client turn: no pair
TA01 = [
    ("C", ["empathy"]),
    ("K", ["defensive"]),
    ("C", ["empathy", "reflection"]),
    ("C", ["exploration"]),
    ("K", []),
    ("C", ["validation"]),
    ("K", ["defense_loosening", "affect_contact"]),
    ("C", []),
    ("K", ["affect_contact"]),
    ("C", ["confrontation"]),
    ("K", ["defensive"]),
    ("C", ["homework"]),
]
TA01_BY_CATEGORY = {
    ("defensive", "RELATIONAL", "defense_loosening"): 1,
    ("defensive", "RELATIONAL", "affect_contact"): 1,
    ("defensive", "EXPLORATORY", "defense_loosening"): 1,
    ("defensive", "EXPLORATORY", "affect_contact"): 1,
    ("affect_contact", "INTERVENTION", "defensive"): 1,
}
TA01_BY_TECHNIQUE = {
    **{
        ("defensive", t, s): 1
        for t in ("empathy", "reflection", "exploration", "validation")
        for s in ("defense_loosening", "affect_contact")
    },
    ("affect_contact", "confrontation", "defensive"): 1,
}
# TB01 (trainee_b): two client turns back to back (no counselor turn: an empty move), then one pair.
TB01 = [
    ("K", ["defensive"]),
    ("K", ["involuntary"]),
    ("C", ["empathy"]),
    ("K", ["defense_loosening"]),
]
TB01_BY_CATEGORY = {("involuntary", "RELATIONAL", "defense_loosening"): 1}


@pytest.fixture
def hand_made(cast):
    return {"TA01": import_spec("TA01", TA01, "trainee_a"), "TB01": import_spec("TB01", TB01, "trainee_b")}


@pytest.fixture
def persona_file(tmp_path):
    def make(lines: list[dict | str], name: str = "persona.jsonl"):
        return write_jsonl(tmp_path / name, lines)

    return make
