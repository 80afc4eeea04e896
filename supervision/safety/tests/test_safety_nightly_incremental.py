"""The nightly safety step looks again only at sessions whose rows changed (counted), and leaves the same
suggestions as a look at every session."""

from __future__ import annotations

import datetime

import pytest

from supervision.models import SupervisorComment, Turn, TurnTechnique
from supervision.safety.services import SUGGESTION_PREFIX, safety_nightly
from supervision.safety.tests.factories import script
from taxonomy.models import TechniqueLabelDef

pytestmark = pytest.mark.django_db
DAY = datetime.date(2026, 11, 30)
SI, RA = "suicidal_ideation_admit", "risk_assessment"


def suggestions():
    return sorted(
        SupervisorComment.objects.filter(suggestion_key__startswith=SUGGESTION_PREFIX).values_list(
            "turn_id", "suggestion_key", "is_suggestion"
        )
    )


def test_a_second_night_looks_only_at_the_changed_session_and_equals_a_full_look(cast):
    script("SN01", f"K:{SI}", "C", "K", "C", "C")
    script("SN02", f"K:{SI}", "C", "K", "C", "C")
    script("SN03", "K", "C", "K", "C")
    first = safety_nightly(day=DAY)
    assert (first["sessions"], first["suggested"]) == (3, 2)
    assert safety_nightly(day=DAY)["sessions"] == 0

    # SN01's disclosure is answered now: its suggestion goes, and only SN01 is looked at
    TurnTechnique.objects.create(
        turn=Turn.objects.get(utterance_id="SN01-C-001"), label=TechniqueLabelDef.objects.get(code=RA)
    )
    second = safety_nightly(day=DAY + datetime.timedelta(days=1))
    assert (second["sessions"], second["unanswered"], second["removed"]) == (1, 0, 1)
    incremental = suggestions()
    assert len(incremental) == 1

    full = safety_nightly(day=DAY + datetime.timedelta(days=1), full=True)
    assert full["sessions"] == 3
    assert (full["suggested"], full["removed"]) == (0, 0)
    assert suggestions() == incremental
