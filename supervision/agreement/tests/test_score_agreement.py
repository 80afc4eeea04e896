"""``score_agreement`` as CONTRACT §7 puts it: exit codes, the last JSON line, --save, --against, --kind."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from supervision.agreement.models import AnnotationRun, RunTurn
from supervision.agreement.tests.conftest import run_lines
from supervision.exporting import golden_jsonl
from supervision.models import Session


def score(path, *args) -> tuple[int, list[str], list[str]]:
    out, err = StringIO(), StringIO()
    try:
        call_command("score_agreement", str(path), *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, out.getvalue().splitlines(), err.getvalue().splitlines()


# Counted by hand from tests/conftest.py (golden_lines against run_lines); see test_scoring.py for the
# same techniques and client-state fixtures worked through label by label.
EXPECTED_AG01 = {
    "rater": "eval-ai-3",
    "against": "golden",
    "turns": 6,
    "axes": {
        "techniques": {
            "turns": 4,
            "micro_f1": 0.5,
            "macro_f1": 0.3889,
            "kappa": 0.1667,
            "labels": {
                "empathy": {"precision": 1.0, "recall": 0.5, "f1": 0.6667, "support": 2, "kappa": 0.5},
                "reflection": {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2, "kappa": 0.0},
                "exploration": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0, "kappa": 0.0},
            },
        },
        "client_states": {
            "turns": 2,
            "micro_f1": 0.8571,
            "macro_f1": 0.6667,
            "kappa": 0.5,
            "labels": {
                "suicidal_ideation_admit": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1, "kappa": 1.0},
                "affect_contact": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2, "kappa": None},
                "self_harm_disclosure": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "kappa": 0.0},
            },
        },
        # Rated on C-001 (라포/라포), C-002 (라포/탐색), K-001 (탐색/탐색), K-002 (개입/정리): accuracy 2/4.
        # F1 라포 0.6667, 탐색 (P 0.5, R 1) 0.6667, 개입 0, 정리 0 → macro 0.3333.
        # pe = (2/4)(1/4) + (1/4)(2/4) = 0.25 → κ (0.5 − 0.25)/0.75 = 0.3333.
        "stage": {
            "turns": 4,
            "accuracy": 0.5,
            "macro_f1": 0.3333,
            "kappa": 0.3333,
            "confusion": {"라포": {"라포": 1, "탐색": 1}, "탐색": {"탐색": 1}, "개입": {"정리": 1}},
        },
        # Rated on C-001 (inform/inform), C-003 (none/null → none), K-002 (none/question): accuracy 2/3.
        # F1 inform 1, question 0, none (P 1, R 0.5) 0.6667 → macro 0.5556.
        # pe = (1/3)(1/3) + 0·(1/3) + (2/3)(1/3) = 1/3 → κ (2/3 − 1/3)/(2/3) = 0.5.
        "dialog_act": {
            "turns": 3,
            "accuracy": 0.6667,
            "macro_f1": 0.5556,
            "kappa": 0.5,
            "confusion": {"inform": {"inform": 1}, "none": {"none": 1, "question": 1}},
        },
    },
    "safety": {
        "support": 2,
        "found": 1,
        "recall": 0.5,
        "missed": [{"utterance_id": "AG01-K-002", "state": "self_harm_disclosure"}],
    },
}


def test_it_prints_the_figures_as_the_last_line(golden, run_file):
    code, out, err = score(run_file(run_lines("AG01")), "--rater", "eval-ai-3")
    assert (code, err) == (0, [])
    assert json.loads(out[-1]) == EXPECTED_AG01
    assert not AnnotationRun.objects.exists()  # without --save nothing is kept


def test_it_saves_the_run_without_touching_the_golden_set(golden, run_file):
    before = "".join(golden_jsonl(Session.objects.order_by("code")))
    code, out, _ = score(
        run_file(run_lines("AG01"), "eval-v3.jsonl"), "--rater", "eval-ai-3", "--kind", "human", "--save"
    )
    assert code == 0
    assert json.loads(out[-1]) == EXPECTED_AG01
    run = AnnotationRun.objects.get()
    assert (run.rater, run.kind, run.file_name, run.taxonomy_version) == (
        "eval-ai-3",
        "human",
        "eval-v3.jsonl",
        "1.1.0",
    )
    assert run.uploaded_from.startswith("command line")
    assert RunTurn.objects.filter(run=run).count() == 6
    c003 = RunTurn.objects.get(run=run, turn__utterance_id="AG01-C-003")
    # The empty client-state list on a counselor turn is ignored (unrated); the null act rates "none".
    assert (c003.techniques, c003.client_states, c003.stage_id, c003.dialog_act_rated, c003.dialog_act) == (
        [],
        None,
        None,
        True,
        None,
    )
    assert "".join(golden_jsonl(Session.objects.order_by("code"))) == before


def test_it_scores_against_a_saved_run_of_another_rater(golden, run_file):
    assert score(run_file(run_lines("AG01"), "a.jsonl"), "--rater", "annotator-b", "--save")[0] == 0
    second = [
        {"utterance_id": "AG01-C-001", "techniques": ["empathy", "reflection"]},
        {"utterance_id": "AG01-C-002", "techniques": ["reflection"], "stage": "탐색"},
        {"utterance_id": "AG01-C-003", "stage": "탐색"},  # the saved run left the stage of C-003 unrated
    ]
    code, out, _ = score(run_file(second, "b.jsonl"), "--rater", "eval-ai-4", "--against", "annotator-b")
    assert code == 0
    result = json.loads(out[-1])
    assert (result["rater"], result["against"], result["turns"]) == ("eval-ai-4", "annotator-b", 2)
    # Reference = annotator-b: C-001 {empathy}, C-002 {reflection, exploration}; rater C-001 {empathy,
    # reflection}, C-002 {reflection}. empathy TP 1; reflection TP 1, FP 1 (C-001); exploration FN 1.
    # micro: TP 2, FP 1, FN 1 → 0.6667.
    techniques = result["axes"]["techniques"]
    assert (techniques["turns"], techniques["micro_f1"]) == (2, 0.6667)
    assert techniques["labels"]["reflection"]["precision"] == 0.5
    assert techniques["labels"]["exploration"]["support"] == 1
    assert result["axes"]["stage"]["turns"] == 1  # C-002 only: both rated its stage, and agree
    assert result["axes"]["stage"]["accuracy"] == 1.0
    assert result["axes"]["client_states"]["turns"] == 0


def test_it_refuses_against_a_rater_never_saved(golden, run_file):
    code, out, err = score(run_file(run_lines("AG01")), "--rater", "x", "--against", "nobody")
    assert code == 1
    assert json.loads(out[-1])["errors"][0]["column"] == "against"
    assert "nobody" in err[0]


def test_it_reports_alpha_once_three_sources_rated_the_same_turns(golden, run_file):
    assert score(run_file(run_lines("AG01"), "a.jsonl"), "--rater", "annotator-b", "--save")[0] == 0
    code, out, _ = score(run_file(run_lines("AG01"), "c.jsonl"), "--rater", "eval-ai-3")
    assert code == 0
    assert out[0].startswith("Krippendorff alpha (golden, annotator-b, eval-ai-3): techniques ")
    json.loads(out[-1])


def test_it_refuses_a_bad_file_whole_with_every_error(golden, run_file):
    lines = [
        {"utterance_id": "AG01-C-001", "techniques": ["empathy", "반엉"]},
        "{not json",
        {"utterance_id": "AG01-K-001", "techniques": ["empathy"]},
        {"utterance_id": "AG01-C-009", "stage": "탐색"},
        {"utterance_id": "AG01-C-001", "stage": "탐색"},
        {"utterance_id": "AG01-C-002", "stage": None, "dialog_act": "wave"},
        {"utterance_id": "AG01-C-004"},
        {"techniques": ["empathy"]},
        {"utterance_id": "AG01-C-003", "stage": "개입"},
    ]
    code, out, err = score(run_file(lines), "--rater", "eval-ai-3", "--save")
    assert code == 1
    errors = json.loads(out[-1])["errors"]
    where = [(e["row"], e["column"]) for e in errors]
    assert where == [
        (1, "techniques"),  # unknown label, with the closest ones named
        (2, "utterance_id"),  # not JSON
        (3, "techniques"),  # a technique on a client turn
        (4, "utterance_id"),  # not in the portal
        (5, "utterance_id"),  # the same utterance twice
        (6, "dialog_act"),
        (6, "stage"),
        (7, "utterance_id"),  # rates nothing
        (8, "utterance_id"),  # required
    ]
    assert "reflection" in errors[0]["message"]
    assert err == [f"row {e['row']}, column {e['column']}: {e['message']}" for e in errors]
    assert not AnnotationRun.objects.exists() and not RunTurn.objects.exists()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("run.jsonl", b"", "비어"),
        ("run.csv", b"utterance_id\nAG01-C-001\n", ".jsonl"),
        ("run.jsonl", b"\n\n", "없습니다"),
    ],
)
def test_it_refuses_a_file_it_cannot_read_as_row_0(golden, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    code, out, _ = score(path, "--rater", "eval-ai-3")
    assert code == 1
    [error] = json.loads(out[-1])["errors"]
    assert (error["row"], error["column"]) == (0, "file") and message in error["message"]


def test_it_refuses_a_missing_file(db, tmp_path):
    code, out, _ = score(tmp_path / "nope.jsonl", "--rater", "eval-ai-3")
    assert code == 1 and json.loads(out[-1])["errors"][0]["column"] == "file"
