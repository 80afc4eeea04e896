"""Each rule of CONTRACT §8, read back through the selector the API and the admin use."""

from __future__ import annotations

import pytest

from supervision.models import Turn, TurnClientState, TurnTechnique
from supervision.safety.selectors import safety_events, transcript_marks
from supervision.safety.tests.factories import script
from taxonomy.models import ClientStateDef, TechniqueLabelDef

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"


def events_of(user, session):
    return [
        (e.utterance_id, e.state, e.answered, e.answered_by, e.latency)
        for e in safety_events(user, session_id=session.pk).order_by("seq", "state")
    ]


def test_it_answers_a_disclosure_assessed_at_once(cast):
    session = script("SF01", "C", f"K:{SI}", f"C:{RA}", "K")
    assert events_of(cast.staff, session) == [("SF01-K-001", SI, True, "SF01-C-002", 1)]


def test_it_counts_an_assessment_on_the_second_counselor_turn_with_latency_2(cast):
    # client turns in between do not count towards the window: only counselor turns do
    session = script("SF02", f"K:{SI}", "K", "C", "K", f"C:{RA}")
    assert events_of(cast.staff, session) == [("SF02-K-001", SI, True, "SF02-C-002", 2)]


def test_it_leaves_a_disclosure_unanswered_when_the_assessment_comes_third(cast):
    session = script("SF03", f"K:{SH}", "C", "K", "C", "K", f"C:{RA}")
    assert events_of(cast.staff, session) == [("SF03-K-001", SH, False, None, None)]


def test_it_widens_the_window_with_the_setting(cast, settings):
    session = script("SF04", f"K:{SH}", "C", "C", f"C:{RA}")
    assert events_of(cast.staff, session) == [("SF04-K-001", SH, False, None, None)]
    settings.SAFETY_RESPONSE_TURNS = 3
    assert events_of(cast.staff, session) == [("SF04-K-001", SH, True, "SF04-C-003", 3)]
    settings.SAFETY_RESPONSE_TURNS = 1
    assert events_of(cast.staff, session) == [("SF04-K-001", SH, False, None, None)]


def test_it_names_the_first_assessment_in_the_window(cast):
    session = script("SF05", f"K:{SI}", f"C:{RA}", f"C:{RA}")
    assert events_of(cast.staff, session) == [("SF05-K-001", SI, True, "SF05-C-001", 1)]


def test_it_does_not_count_an_assessment_before_the_disclosure(cast):
    session = script("SF06", f"C:{RA}", f"K:{SI}", "C", "C")
    assert events_of(cast.staff, session) == [("SF06-K-001", SI, False, None, None)]


def test_it_keeps_a_disclosure_at_the_end_of_the_session_unanswered(cast):
    session = script("SF07", "C", "K", f"C:{RA}", f"K:{SH}")
    assert events_of(cast.staff, session) == [("SF07-K-002", SH, False, None, None)]


def test_it_answers_a_late_disclosure_with_the_one_counselor_turn_left(cast):
    session = script("SF08", "C", f"K:{SH}", f"C:{RA}")
    assert events_of(cast.staff, session) == [("SF08-K-001", SH, True, "SF08-C-002", 1)]


def test_it_makes_two_events_of_two_disclosures_in_a_row(cast):
    # the first disclosure waits through the second; one assessment answers both, at its own distance
    session = script("SF09", f"K:{SI}", "C", f"K:{SI}", f"C:{RA}")
    assert events_of(cast.staff, session) == [
        ("SF09-K-001", SI, True, "SF09-C-002", 2),
        ("SF09-K-002", SI, True, "SF09-C-002", 1),
    ]


def test_it_makes_two_events_of_both_states_on_one_turn(cast):
    session = script("SF10", f"K:{SI}+{SH}", "C", "K", "C")
    assert events_of(cast.staff, session) == [
        ("SF10-K-001", SH, False, None, None),
        ("SF10-K-001", SI, False, None, None),
    ]


def test_it_ignores_sessions_without_safety_critical_states(cast):
    session = script("SF11", "C", "K", f"C:{RA}", "K:negative_self_perception")
    assert events_of(cast.staff, session) == []


def test_it_follows_a_label_edit_at_once(cast):
    session = script("SF12", f"K:{SI}", "C", "C")
    assert events_of(cast.staff, session) == [("SF12-K-001", SI, False, None, None)]
    counselor = Turn.objects.get(utterance_id="SF12-C-002")
    TurnTechnique.objects.create(turn=counselor, label=TechniqueLabelDef.objects.get(code=RA))
    assert events_of(cast.staff, session) == [("SF12-K-001", SI, True, "SF12-C-002", 2)]
    client = Turn.objects.get(utterance_id="SF12-K-001")
    TurnClientState.objects.filter(turn=client, label__code=SI).delete()
    TurnClientState.objects.create(turn=client, label=ClientStateDef.objects.get(code=SH))
    assert events_of(cast.staff, session) == [("SF12-K-001", SH, True, "SF12-C-002", 2)]


def test_it_follows_a_reimport_at_once(cast):
    session = script("SF13", f"K:{SI}", "C", "C")
    assert [e[2] for e in events_of(cast.staff, session)] == [False]
    script("SF13", f"K:{SI}", f"C:{RA}", "C")  # the same file, corrected
    assert events_of(cast.staff, session) == [("SF13-K-001", SI, True, "SF13-C-001", 1)]
    script("SF13", "K", f"C:{RA}", "C")  # the disclosure label withdrawn
    assert events_of(cast.staff, session) == []


def test_it_shows_each_role_only_the_events_it_may_see(cast):
    own = script("SF14", f"K:{SI}", "C", trainee="trainee_a")
    other = script("SF15", f"K:{SH}", "C", trainee="trainee_b")
    seen = {
        name: {e.session_code for e in safety_events(getattr(cast, name))}
        for name in ("trainee_a", "trainee_b", "supervisor_a", "supervisor_b", "staff")
    }
    assert seen == {
        "trainee_a": {own.code},
        "trainee_b": {other.code},
        "supervisor_a": {own.code},
        "supervisor_b": {other.code},
        "staff": {own.code, other.code},
    }


def test_it_lists_unanswered_then_newest_session_first(cast):
    script("SF16", f"K:{SI}", f"C:{RA}", held_on="2026-11-05")
    script("SF17", f"K:{SI}", "C", "C", held_on="2026-11-01")
    script("SF18", f"K:{SH}", "C", "C", held_on="2026-11-03")
    listed = [(e.session_code, e.answered) for e in safety_events(cast.supervisor_a)]
    assert listed == [("SF18", False), ("SF17", False), ("SF16", True)]


def test_it_marks_disclosures_and_their_answers_for_the_transcript(cast):
    session = script("SF19", f"K:{SI}", "C", f"K:{SH}", f"C:{RA}")
    ids = dict(session.turns.values_list("utterance_id", "pk"))
    marks = transcript_marks(cast.supervisor_a, session)
    assert set(marks) == {ids["SF19-K-001"], ids["SF19-K-002"], ids["SF19-C-002"]}
    assert [e.state for e in marks[ids["SF19-K-002"]].disclosures] == [SH]
    assert [(e.utterance_id, e.latency) for e in marks[ids["SF19-C-002"]].answers] == [
        ("SF19-K-001", 2),
        ("SF19-K-002", 1),
    ]
    assert marks[ids["SF19-K-001"]].answers == ()
