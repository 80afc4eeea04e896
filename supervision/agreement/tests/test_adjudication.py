"""The disagreement queue and the decisions on it: accepted answers go into the golden set through the
label service (with history), kept ones leave it alone, each is recorded once, and nobody decides on a
turn outside their scope."""

from __future__ import annotations

import pytest

from supervision.agreement.models import AdjudicationDecision, Outcome
from supervision.agreement.services import AdjudicationRejected, adjudication_decide, run_differences
from supervision.agreement.tests.conftest import run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.labelling import turn_label_codes
from supervision.models import LabelChange, Turn


@pytest.fixture
def run(golden):
    return saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")


def keys(differences) -> list[tuple[str, str, str, str, str]]:
    return [(d.utterance_id, d.axis, d.label, d.golden, d.rater) for d in differences]


def test_it_queues_every_difference_grouped_by_axis_and_label(cast, run):
    queue = keys(run_differences(run, cast.supervisor_a))
    # Counted from tests/conftest.py: techniques C-001 −reflection, C-002 +exploration, C-004 +reflection
    # −empathy; client states K-002 −self_harm; stage C-002 라포→탐색, K-002 개입→정리; act K-002 none→question.
    # The missed self-harm disclosure comes first, then the axes in their order.
    assert queue == [
        ("AG01-K-002", "client_states", "self_harm_disclosure", "present", "absent"),
        ("AG01-C-004", "techniques", "empathy", "present", "absent"),
        ("AG01-C-001", "techniques", "reflection", "present", "absent"),
        ("AG01-C-004", "techniques", "reflection", "absent", "present"),
        ("AG01-C-002", "techniques", "exploration", "absent", "present"),
        ("AG01-C-002", "stage", "탐색", "라포", "탐색"),
        ("AG01-K-002", "stage", "정리", "개입", "정리"),
        ("AG01-K-002", "dialog_act", "question", "none", "question"),
    ]


def test_it_accepts_the_raters_label_through_the_label_service_with_history(cast, run):
    turn = Turn.objects.get(utterance_id="AG01-C-002")
    adjudication_decide(
        run=run,
        turn=turn,
        axis="techniques",
        label="exploration",
        outcome=Outcome.ACCEPTED,
        decided_by=cast.supervisor_a,
        note="탐색 질문이 맞다",
    )
    assert turn_label_codes(turn)["techniques"] == ["reflection", "exploration"]
    [change] = LabelChange.objects.filter(turn=turn)
    assert (change.axis, change.before, change.after, change.changed_by, change.via) == (
        "techniques",
        ["reflection"],
        ["reflection", "exploration"],
        cast.supervisor_a,
        "adjudication",
    )
    assert "탐색 질문이 맞다" in change.note
    remaining = keys(run_differences(run, cast.supervisor_a))
    assert ("AG01-C-002", "techniques", "exploration", "absent", "present") not in remaining
    assert len(remaining) == 7


def test_it_accepts_a_missing_label_by_removing_it_and_a_stage_by_setting_it(cast, run):
    k002 = Turn.objects.get(utterance_id="AG01-K-002")
    adjudication_decide(
        run=run,
        turn=k002,
        axis="client_states",
        label="self_harm_disclosure",
        outcome=Outcome.ACCEPTED,
        decided_by=cast.supervisor_a,
    )
    adjudication_decide(
        run=run, turn=k002, axis="stage", label="정리", outcome=Outcome.ACCEPTED, decided_by=cast.supervisor_a
    )
    adjudication_decide(
        run=run, turn=k002, axis="dialog_act", label="question", outcome=Outcome.ACCEPTED, decided_by=cast.supervisor_a
    )
    assert turn_label_codes(Turn.objects.get(pk=k002.pk)) == {
        "techniques": [],
        "client_states": ["affect_contact"],
        "stage": "정리",
        "dialog_act": "question",
    }
    assert LabelChange.objects.filter(turn=k002).count() == 3


def test_it_keeps_the_golden_label_with_a_note_and_records_the_decision_once(cast, run):
    turn = Turn.objects.get(utterance_id="AG01-C-001")
    before = turn_label_codes(turn)
    decision = adjudication_decide(
        run=run,
        turn=turn,
        axis="techniques",
        label="reflection",
        outcome=Outcome.KEPT,
        decided_by=cast.supervisor_a,
        note="반영이 분명함",
    )
    assert (decision.golden, decision.rater, decision.note) == ("present", "absent", "반영이 분명함")
    assert turn_label_codes(turn) == before and not LabelChange.objects.exists()
    assert ("AG01-C-001", "techniques", "reflection", "present", "absent") not in keys(
        run_differences(run, cast.supervisor_a)
    )
    with pytest.raises(AdjudicationRejected):
        adjudication_decide(
            run=run,
            turn=turn,
            axis="techniques",
            label="reflection",
            outcome=Outcome.ACCEPTED,
            decided_by=cast.supervisor_a,
        )
    assert AdjudicationDecision.objects.count() == 1


def test_it_never_decides_on_a_turn_outside_the_supervisors_scope(cast, run):
    other = Turn.objects.get(utterance_id="AG02-C-002")
    for user in (cast.supervisor_a, cast.staff, cast.trainee_b):
        with pytest.raises(AdjudicationRejected):
            adjudication_decide(
                run=run, turn=other, axis="techniques", label="exploration", outcome=Outcome.ACCEPTED, decided_by=user
            )
    assert turn_label_codes(other)["techniques"] == ["reflection"]
    assert not AdjudicationDecision.objects.exists() and not LabelChange.objects.exists()
    # supervisor_a's queue holds only AG01; supervisor_b's only AG02.
    assert {d.utterance_id.split("-")[0] for d in run_differences(run, cast.supervisor_a)} == {"AG01"}
    assert {d.utterance_id.split("-")[0] for d in run_differences(run, cast.supervisor_b)} == {"AG02"}


def test_it_refuses_a_decision_on_something_that_is_not_a_difference(cast, run):
    turn = Turn.objects.get(utterance_id="AG01-C-001")
    with pytest.raises(AdjudicationRejected):
        adjudication_decide(
            run=run,
            turn=turn,
            axis="techniques",
            label="empathy",
            outcome=Outcome.ACCEPTED,
            decided_by=cast.supervisor_a,
        )
    with pytest.raises(AdjudicationRejected):
        adjudication_decide(
            run=run, turn=turn, axis="techniques", label="reflection", outcome="maybe", decided_by=cast.supervisor_a
        )
    assert not AdjudicationDecision.objects.exists()


def test_a_run_never_changes_the_golden_set_by_itself(cast, golden):
    before = {t.pk: turn_label_codes(t) for t in Turn.objects.all()}
    saved_run(run_lines("AG01"), rater="eval-ai-3")
    assert {t.pk: turn_label_codes(t) for t in Turn.objects.all()} == before
