"""``skips_risk_assessment`` reads the safety events: evidence from an unanswered one, so order counts."""

from __future__ import annotations

import datetime

import pytest

from supervision.safety.tests.factories import script
from supervision.tags.models import TagContradiction, TagEvidence
from supervision.tags.services import session_skips_risk_assessment, tags_record_gauge_evidence

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"
DAY = datetime.date(2026, 11, 30)


def record(cast, session):
    return tags_record_gauge_evidence(trainee_id=cast.trainee_a.pk, session_id=session.pk, snapshot={}, day=DAY)


@pytest.mark.parametrize(
    ("turns", "skipped"),
    [
        ((f"K:{SI}", f"C:{RA}"), False),  # at once
        ((f"K:{SI}", "C", "C", f"C:{RA}"), True),  # long after: the whole-session reading said False
        ((f"C:{RA}", f"K:{SH}", "C", "C"), True),  # before the disclosure
        ((f"K:{SI}", f"C:{RA}", f"K:{SH}", "C", "C"), True),  # one of two left unanswered
        (("K", f"C:{RA}"), None),  # no disclosure
    ],
)
def test_it_reads_the_events_of_the_session(cast, turns, skipped):
    assert session_skips_risk_assessment(script("ST01", *turns).pk) is skipped


def test_a_late_assessment_is_evidence_and_a_prompt_one_contradicts(cast):
    late = script("ST02", f"K:{SI}", "C", "K", "C", f"C:{RA}")
    prompt = script("ST03", f"K:{SH}", "K", f"C:{RA}")
    assert record(cast, late) == {"evidence": 1, "contradictions": 0}
    assert TagEvidence.objects.get().trainee_tag.tag == "skips_risk_assessment"
    assert record(cast, prompt) == {"evidence": 0, "contradictions": 1}
    contradiction = TagContradiction.objects.get()
    assert (contradiction.severity, contradiction.session_id) == ("medium", prompt.pk)
    assert record(cast, late) == {"evidence": 0, "contradictions": 0}  # idempotent
