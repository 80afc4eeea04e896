"""A golden session per trainee whose labels the agreement tests count by hand, and run files for it."""

from __future__ import annotations

import pytest

from supervision.importing.services import import_transcripts
from supervision.models import Session
from supervision.testing import golden_line, write_jsonl


@pytest.fixture(autouse=True)
def _without_the_label_suggester(settings):
    """Here the raters are the ones each test saves: the portal's own suggester (whose run every import adds,
    CONTRACT §9) would be one more in every list, α and report. Its agreement is tested with it, in
    supervision/suggesting/tests."""
    from supervision.suggesting.loading import forget_loaded_models

    settings.SUGGESTER_MODEL_PATH = "/nonexistent/suggester-off-in-agreement-tests.json"
    forget_loaded_models()
    yield
    forget_loaded_models()


def turn_line(session: str, seq: int, uid: str, stage: str, labels: list[str], act: str | None = None) -> dict:
    speaker = "counselor" if uid.startswith("C-") else "client"
    axis = "techniques" if speaker == "counselor" else "client_states"
    other = "client_states" if speaker == "counselor" else "techniques"
    line = golden_line(session, seq, speaker, utterance_id=f"{session}-{uid}", stage=stage, **{axis: labels, other: []})
    if act is not None:
        line["dialog_act"] = act
    return line


def golden_lines(session: str) -> list[dict]:
    """seq  turn   stage  golden labels                              act
    0    C-001  라포   empathy, reflection                         inform
    1    C-002  라포   reflection                                  question
    2    C-003  탐색   —                                           (none)
    3    C-004  탐색   empathy                                     inform
    4    K-001  탐색   affect_contact, suicidal_ideation_admit     inform
    5    K-002  개입   affect_contact, self_harm_disclosure        (none)
    """
    return [
        turn_line(session, 0, "C-001", "라포", ["empathy", "reflection"], "inform"),
        turn_line(session, 1, "C-002", "라포", ["reflection"], "question"),
        turn_line(session, 2, "C-003", "탐색", []),
        turn_line(session, 3, "C-004", "탐색", ["empathy"], "inform"),
        turn_line(session, 4, "K-001", "탐색", ["affect_contact", "suicidal_ideation_admit"], "inform"),
        turn_line(session, 5, "K-002", "개입", ["affect_contact", "self_harm_disclosure"]),
    ]


def run_lines(session: str) -> list[dict]:
    """The rater (the figures in test_score_agreement.py are counted from this and ``golden_lines``)."""
    return [
        {"utterance_id": f"{session}-C-001", "techniques": ["empathy"], "stage": "라포", "dialog_act": "inform"},
        {"utterance_id": f"{session}-C-002", "techniques": ["reflection", "exploration"], "stage": "탐색"},
        {"utterance_id": f"{session}-C-003", "techniques": [], "client_states": [], "dialog_act": None},
        {"utterance_id": f"{session}-C-004", "techniques": ["reflection"], "text": "ignored", "seq": 99},
        {
            "utterance_id": f"{session}-K-001",
            "techniques": [],
            "client_states": ["affect_contact", "suicidal_ideation_admit"],
            "stage": "탐색",
        },
        {
            "utterance_id": f"{session}-K-002",
            "client_states": ["affect_contact"],
            "stage": "정리",
            "dialog_act": "question",
        },
    ]


def import_lines(lines: list[dict], trainee: str) -> Session:
    report = import_transcripts(rows=enumerate(lines, start=1), trainee_username=trainee)
    assert report.ok, report.errors
    return Session.objects.get(code=lines[0]["utterance_id"].split("-")[0])


@pytest.fixture
def golden(cast):
    """AG01 belongs to trainee_a (supervisor_a), AG02 to trainee_b (supervisor_b); same labels."""
    return {
        "AG01": import_lines(golden_lines("AG01"), "trainee_a"),
        "AG02": import_lines(golden_lines("AG02"), "trainee_b"),
    }


@pytest.fixture
def run_file(tmp_path):
    def make(lines: list[dict | str], name: str = "run.jsonl"):
        return write_jsonl(tmp_path / name, lines)

    return make
