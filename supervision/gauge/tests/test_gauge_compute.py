"""gauge_compute against hand-counted expectations over the fixture sessions (see conftest.py)."""

import datetime

import pytest

from supervision.gauge.models import GaugeSnapshot, TargetBand
from supervision.gauge.services import gauge_compute
from supervision.gauge.tests.conftest import DAY, import_lines, session_s1
from supervision.models import Session, SupervisorComment, Turn

pytestmark = pytest.mark.django_db

S1_TRANSITIONS = {
    "affect_contact>thought_organizing": 1,
    "defense_loosening>affect_contact": 1,
    "defense_loosening>defense_loosening": 1,
    "defense_loosening>thought_organizing": 1,
    "defensive>defensive": 1,
    "thought_organizing>expresses_plan": 1,
}


def snapshot(trainee, session_code=None, day=DAY):
    return GaugeSnapshot.objects.get(
        trainee=trainee, date=day, **({"session__code": session_code} if session_code else {"session": None})
    )


def test_it_counts_a_session_as_counted_by_hand(fixture_sessions):
    run = gauge_compute(day=DAY)
    s1 = snapshot(fixture_sessions.trainee_a, "S1")
    assert (s1.turns, s1.counselor_turns, s1.technique_labels) == (14, 7, 10)
    # RELATIONAL empathy+reflection×2+holding+restatement+validation = 6, EXPLORATORY exploration+
    # facilitative_question = 2, INTERVENTION interpretation = 1, STRUCTURING homework = 1.
    assert s1.categories["RELATIONAL"] == {"count": 6, "share": 0.6, "band": [0.25, 0.45], "status": "over"}
    assert s1.categories["EXPLORATORY"] == {"count": 2, "share": 0.2, "band": [0.2, 0.4], "status": "within"}
    assert s1.categories["INTERVENTION"] == {"count": 1, "share": 0.1, "band": [0.05, 0.25], "status": "within"}
    assert s1.categories["STABILIZING"] == {"count": 0, "share": 0.0, "band": [0.05, 0.2], "status": "under"}
    assert s1.categories["STRUCTURING"] == {"count": 1, "share": 0.1, "band": [0.03, 0.15], "status": "within"}
    assert s1.techniques["reflection"] == 2 and s1.techniques["confrontation"] == 0 and len(s1.techniques) == 30
    # reflections: reflection×2 + restatement; questions: exploration + facilitative_question.
    assert (s1.reflections, s1.questions, s1.rq_ratio, s1.rq_band) == (3, 2, 1.5, "fair")
    # the bare critique on seq 4 has no severity and no deviation; the rationale is not a critique.
    assert s1.critiques == {"minor": 1, "moderate": 0, "major": 2}
    assert s1.critique_dimensions == {"공감": 2, "질문 유형": 1}
    # two critiques on seq 10 are one turn: 2 deviating counselor turns of 7.
    assert (s1.intent_deviation_turns, s1.intent_deviation_rate) == (2, round(2 / 7, 4))
    assert (s1.silent_close_events, s1.closing_acknowledged, s1.closed_on_resuming_client) == (1, 0, 1)
    assert s1.client_state_transitions == S1_TRANSITIONS
    assert run.summary() == {"trainees": 2, "sessions": 3, "turns": 24}


def test_it_counts_the_silent_close_and_the_acknowledged_closing_of_s2(fixture_sessions):
    gauge_compute(day=DAY)
    s2 = snapshot(fixture_sessions.trainee_a, "S2")
    assert (s2.silent_close_events, s2.closing_acknowledged, s2.closed_on_resuming_client) == (1, 1, 0)
    assert s2.client_state_transitions == {"involuntary>involuntary": 1}
    # no reflection and no question: the ratio is undefined and there is no band.
    assert (s2.rq_ratio, s2.rq_band) == (None, "")
    assert s2.categories["STRUCTURING"]["share"] == round(2 / 3, 4)
    assert s2.categories["STRUCTURING"]["status"] == "over"
    assert s2.intent_deviation_rate == 0.0


def test_it_sums_the_window_into_the_trainee_wide_snapshot(fixture_sessions):
    gauge_compute(day=DAY)
    wide = snapshot(fixture_sessions.trainee_a)
    # S1 + S2; S3 was held 40 days earlier, outside the 30-day window.
    assert (wide.sessions, wide.turns, wide.counselor_turns, wide.technique_labels) == (2, 20, 10, 13)
    assert {code: c["count"] for code, c in wide.categories.items()} == {
        "RELATIONAL": 7,
        "EXPLORATORY": 2,
        "INTERVENTION": 1,
        "STABILIZING": 0,
        "STRUCTURING": 3,
    }
    assert wide.categories["RELATIONAL"]["share"] == round(7 / 13, 4)
    assert {code: c["status"] for code, c in wide.categories.items()} == {
        "RELATIONAL": "over",
        "EXPLORATORY": "under",
        "INTERVENTION": "within",
        "STABILIZING": "under",
        "STRUCTURING": "over",
    }
    assert wide.techniques["confrontation"] == 0
    assert (wide.rq_ratio, wide.rq_band) == (1.5, "fair")
    assert wide.critiques == {"minor": 1, "moderate": 0, "major": 2}
    assert wide.intent_deviation_rate == 0.2
    assert (wide.silent_close_events, wide.closing_acknowledged, wide.closed_on_resuming_client) == (2, 1, 1)
    assert wide.client_state_transitions == {**S1_TRANSITIONS, "involuntary>involuntary": 1}
    assert not GaugeSnapshot.objects.filter(session__code="S3").exists()


def test_it_calls_reflections_without_questions_good(fixture_sessions):
    gauge_compute(day=DAY)
    s4 = snapshot(fixture_sessions.trainee_b, "S4")
    assert (s4.rq_ratio, s4.rq_band) == (None, "good")
    assert (s4.closing_acknowledged, s4.closed_on_resuming_client) == (0, 0)
    assert s4.client_state_transitions == {"affect_contact>affect_contact": 1}


def test_it_ignores_suggestions_until_accepted(fixture_sessions):
    turn = Turn.objects.get(utterance_id="S1-C-004")
    SupervisorComment.objects.create(
        turn=turn, kind="critique", text="제안", author="ai", is_suggestion=True, intent_deviation={"severity": "major"}
    )
    gauge_compute(day=DAY)
    assert snapshot(fixture_sessions.trainee_a, "S1").critiques["major"] == 2


def test_it_is_idempotent(fixture_sessions):
    gauge_compute(day=DAY)
    before = {s.pk: s.categories for s in GaugeSnapshot.objects.all()}
    comments = sorted(SupervisorComment.objects.values_list("id", "turn_id", "suggestion_key", "text"))
    run = gauge_compute(day=DAY)
    assert {s.pk: s.categories for s in GaugeSnapshot.objects.all()} == before
    assert sorted(SupervisorComment.objects.values_list("id", "turn_id", "suggestion_key", "text")) == comments
    assert GaugeSnapshot.objects.count() == run.trainees + run.sessions == 5


def test_it_keeps_the_bands_a_snapshot_was_computed_with(fixture_sessions):
    gauge_compute(day=DAY)
    TargetBand.objects.filter(category="RELATIONAL").update(low="0.500", high="0.700")
    gauge_compute(day=DAY + datetime.timedelta(days=1))
    old = snapshot(fixture_sessions.trainee_a, "S1")
    new = snapshot(fixture_sessions.trainee_a, "S1", day=DAY + datetime.timedelta(days=1))
    assert old.bands["RELATIONAL"] == [0.25, 0.45] and old.categories["RELATIONAL"]["status"] == "over"
    assert new.bands["RELATIONAL"] == [0.5, 0.7] and new.categories["RELATIONAL"]["status"] == "within"


def test_it_removes_the_days_snapshots_that_no_longer_apply(fixture_sessions):
    gauge_compute(day=DAY)
    Session.objects.filter(code="S4").update(trainee=fixture_sessions.trainee_a)
    gauge_compute(day=DAY)
    assert not GaugeSnapshot.objects.filter(trainee=fixture_sessions.trainee_b).exists()
    assert snapshot(fixture_sessions.trainee_a).sessions == 3


def test_it_runs_a_constant_number_of_queries(fixture_sessions, tmp_path, django_assert_num_queries):
    gauge_compute(day=DAY)
    # nothing changed: savepoint + release, bands, the kept tallies, the day's snapshot digests
    with django_assert_num_queries(5):
        gauge_compute(day=DAY)

    def import_copies(name, count):
        more = []
        for n in range(count):
            more += [
                {**line, "utterance_id": line["utterance_id"].replace("S1", f"{name}{n}")}
                for line in session_s1(trainee="trainee_b")
            ]
        import_lines(tmp_path, more, f"{name}.jsonl")

    # new sessions: + SET LOCAL, the aggregate over them, keeping their tallies, deleting the trainee's
    # outdated snapshot, copying earlier snapshots, one suggestion statement, their safety events (the
    # COPY of the new snapshots goes past Django's query log) — the same for one new session as for five
    import_copies("X", 1)
    with django_assert_num_queries(12):
        gauge_compute(day=DAY)
    import_copies("Y", 5)
    with django_assert_num_queries(12):
        run = gauge_compute(day=DAY)
    assert run.sessions == 9
