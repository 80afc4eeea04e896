"""The nightly safety step looks again only at sessions whose rows changed (counted), and leaves the same
suggestions as a look at every session."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

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


def answer_the_first_disclosure(code: str) -> None:
    TurnTechnique.objects.create(
        turn=Turn.objects.get(utterance_id=f"{code}-C-001"), label=TechniqueLabelDef.objects.get(code=RA)
    )


def test_a_night_reads_and_writes_in_as_many_queries_for_one_changed_session_as_for_five(cast):
    codes = [f"SQ{n:02d}" for n in range(6)]
    for code in codes:
        script(code, f"K:{SI}", "C", "K", "C", f"K:{SI}", "C", "C")
    with CaptureQueriesContext(connection) as first:
        assert safety_nightly(day=DAY)["suggested"] == 12

    counts = {}
    for night, changed in enumerate(([codes[0]], codes[1:]), start=1):
        for code in changed:
            answer_the_first_disclosure(code)
        with CaptureQueriesContext(connection) as queries:
            result = safety_nightly(day=DAY + datetime.timedelta(days=night))
        assert (result["sessions"], result["unanswered"], result["removed"]) == (
            len(changed),
            len(changed),
            len(changed),
        )
        counts[len(changed)] = len(queries)
    assert counts[1] == counts[5] <= len(first) <= 8


def test_a_removed_suggestion_leaves_its_deletion_in_the_comments_history(cast):
    script("SH01", f"K:{SI}", "C", "K", "C")
    safety_nightly(day=DAY)
    suggestion = SupervisorComment.objects.get(suggestion_key__startswith=SUGGESTION_PREFIX)
    answer_the_first_disclosure("SH01")
    assert safety_nightly(day=DAY + datetime.timedelta(days=1))["removed"] == 1
    [deleted] = SupervisorComment.history.filter(id=suggestion.pk, history_type="-")
    assert (deleted.turn_id, deleted.suggestion_key, deleted.text) == (
        suggestion.turn_id,
        suggestion.suggestion_key,
        suggestion.text,
    )
    assert (deleted.is_suggestion, deleted.history_user_id) == (True, None)
