"""Unanswered events become major AI critique suggestions, once, in the gauge's suggestion flow."""

from __future__ import annotations

import datetime

import pytest

from supervision.gauge.models import DismissedSuggestion
from supervision.gauge.suggestions import suggestion_accept, suggestion_dismiss
from supervision.models import SupervisorComment, Turn, TurnTechnique
from supervision.nightly import nightly_review
from supervision.safety.services import SUGGESTION_PREFIX, safety_suggest
from supervision.safety.tests.factories import script
from taxonomy.models import TechniqueLabelDef

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"


def safety_suggestions():
    return SupervisorComment.objects.filter(suggestion_key__startswith=SUGGESTION_PREFIX).select_related("turn")


@pytest.fixture
def session(cast):
    # K-001 unanswered (assessment third), K-002 answered at once, K-003 at the end: nowhere to put it
    return script("SG01", f"K:{SI}", "C", "K", "C", f"K:{SH}", f"C:{RA}", "K", "C", f"K:{SI}")


def test_it_suggests_a_major_critique_on_the_first_counselor_turn_after_each_unanswered_disclosure(session):
    assert safety_suggest() == {"unanswered": 1, "suggested": 1, "removed": 0}
    [comment] = safety_suggestions()
    assert comment.turn.utterance_id == "SG01-C-001"
    assert (comment.author, comment.is_suggestion, comment.kind) == ("ai", True, "critique")
    assert comment.intent_deviation == {"dimension": "안전 (safety)", "expected": RA, "severity": "major"}
    assert "SG01-K-001" in comment.text and "자살사고 인정" in comment.text


def test_it_never_duplicates_on_a_rerun_or_in_the_nightly_job(session):
    safety_suggest()
    assert safety_suggest() == {"unanswered": 1, "suggested": 0, "removed": 0}
    nightly_review(day=datetime.date(2026, 11, 30))
    assert safety_suggestions().count() == 1


def test_an_accepted_suggestion_stays_the_supervisors_and_is_not_suggested_again(cast, session):
    safety_suggest()
    suggestion_accept(comment=safety_suggestions().get(), user=cast.supervisor_a)
    assert safety_suggest()["suggested"] == 0
    [comment] = safety_suggestions()
    assert (comment.author, comment.is_suggestion, comment.written_by) == ("supervisor", False, cast.supervisor_a)


def test_a_dismissed_suggestion_does_not_come_back(cast, session):
    safety_suggest()
    suggestion_dismiss(comment=safety_suggestions().get(), user=cast.supervisor_a)
    assert DismissedSuggestion.objects.filter(suggestion_key__startswith=SUGGESTION_PREFIX).count() == 1
    assert safety_suggest()["suggested"] == 0
    assert not safety_suggestions().exists()


def test_a_pending_suggestion_goes_when_the_event_is_answered_after_all(session):
    safety_suggest()
    turn = Turn.objects.get(utterance_id="SG01-C-002")
    TurnTechnique.objects.create(turn=turn, label=TechniqueLabelDef.objects.get(code=RA))
    assert safety_suggest() == {"unanswered": 0, "suggested": 0, "removed": 1}
    assert not safety_suggestions().exists()


def test_the_trainee_does_not_see_a_pending_suggestion(cast, session, client):
    safety_suggest()
    client.force_login(cast.trainee_a)
    page = client.get(f"/feedback/sessions/{session.pk}/").content.decode()
    assert "위험사정(risk_assessment)이 없었습니다" not in page
