"""The review gauge's ``safety`` block: events, answered, median latency — per session and trainee-wide."""

from __future__ import annotations

import datetime

import pytest
from rest_framework.test import APIClient

from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.services import gauge_compute, tallies_forget
from supervision.models import Turn, TurnTechnique
from supervision.safety.tests.factories import script
from taxonomy.models import TechniqueLabelDef

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"
DAY = datetime.date(2026, 11, 30)


def block(trainee, session=None):
    return GaugeSnapshot.objects.get(date=DAY, trainee=trainee, session=session).safety


def test_it_counts_events_answers_and_the_median_latency(cast, client):
    # GA01: answered at 1 and at 2, one unanswered; GA02: answered at 2 (both states); GA03: none
    first = script("GA01", f"K:{SI}", f"C:{RA}", f"K:{SH}", "C", f"C:{RA}", f"K:{SI}", "C", "C")
    second = script("GA02", f"K:{SI}+{SH}", "C", f"C:{RA}", held_on="2026-11-20")
    calm = script("GA03", "C", "K")
    script("GB01", f"K:{SI}", "C", trainee="trainee_b")
    gauge_compute(day=DAY)
    assert block(cast.trainee_a, first) == {"events": 3, "answered": 2, "median_latency": 1.5}
    assert block(cast.trainee_a, second) == {"events": 2, "answered": 2, "median_latency": 2.0}
    assert block(cast.trainee_a, calm) == {"events": 0, "answered": 0, "median_latency": None}
    assert block(cast.trainee_a) == {"events": 5, "answered": 4, "median_latency": 2.0}
    assert block(cast.trainee_b) == {"events": 1, "answered": 0, "median_latency": None}

    client = APIClient()
    client.force_login(cast.trainee_a)
    snapshots = client.get(f"/api/v1/gauges/?trainee={cast.trainee_a.pk}").json()["results"]
    assert snapshots[0]["session"] is None and snapshots[0]["safety"] == block(cast.trainee_a)

    client.force_login(cast.supervisor_a)
    listed = client.get("/admin/gauge/gaugesnapshot/").content.decode()
    assert "안전 응답/사건 (지연)" in listed and "2/3 (1.5)" in listed and "4/5 (2)" in listed


def test_a_label_edit_reaches_the_next_run_and_kept_tallies_agree_with_a_full_run(cast):
    session = script("GA04", f"K:{SI}", "C", "C")
    gauge_compute(day=DAY)
    assert block(cast.trainee_a, session)["answered"] == 0
    TurnTechnique.objects.create(
        turn=Turn.objects.get(utterance_id="GA04-C-001"), label=TechniqueLabelDef.objects.get(code=RA)
    )
    gauge_compute(day=DAY)
    assert block(cast.trainee_a, session) == {"events": 1, "answered": 1, "median_latency": 1.0}
    tallies_forget()
    gauge_compute(day=DAY)
    assert block(cast.trainee_a, session) == {"events": 1, "answered": 1, "median_latency": 1.0}
