"""The first command shows what the README promises (issue 33): ``load_demo`` computes the demo's past nights
for its session dates through the real nightly review, so the trainee's trend has a point per night and the
tendency tags move along the lifecycle by its own rules; the dashboard says which period and sessions the
gauge covers."""

import datetime

import pytest
import time_machine

from supervision.demo import load_demo
from supervision.gauge.models import GaugeSnapshot
from supervision.models import Session
from supervision.tags.models import TraineeTag
from supervision.testing import log_in

pytestmark = pytest.mark.django_db

TODAY = datetime.datetime(2026, 12, 4, 10, 0, tzinfo=datetime.UTC)


@time_machine.travel(TODAY, tick=False)
def test_it_computes_a_night_for_every_demo_session_date_then_today(client, taxonomy_tables):
    load_demo()

    held = sorted(set(Session.objects.filter(trainee__username="trainee_a").values_list("held_on", flat=True)))
    nights = list(
        GaugeSnapshot.objects.filter(trainee__username="trainee_a", session__isnull=True)
        .order_by("date")
        .values_list("date", flat=True)
    )
    every_date = set(Session.objects.values_list("held_on", flat=True))
    # A night for each of the demo's session dates (trainee_a's own among them) and today, and no other.
    assert set(held) | {datetime.date(2026, 12, 4)} <= set(nights) <= every_date | {datetime.date(2026, 12, 4)}
    assert len(nights) >= 5  # the trend has points
    # By the lifecycle's own rules some observation became a hypothesis over those nights (no shortcut: the
    # same services as the nightly job, run for each night in order).
    statuses = set(TraineeTag.objects.filter(trainee__username="trainee_a").values_list("status", flat=True))
    assert statuses - {"observation"}, statuses

    load_demo()  # idempotent: a second load computes no second set of nights
    assert GaugeSnapshot.objects.filter(trainee__username="trainee_a", session__isnull=True).count() == len(nights)

    page = log_in(client, "trainee_a").get("/feedback/").content.decode()
    assert 'id="gauge-scope"' in page
    scope = page.split('id="gauge-scope"', 1)[1].split("</p>", 1)[0]
    assert "2026-11-05" in scope and "2026-12-04" in scope  # the 30 days ending the snapshot's date
    in_window = Session.objects.filter(
        trainee__username="trainee_a", held_on__range=(datetime.date(2026, 11, 5), datetime.date(2026, 12, 4))
    )
    assert f"회기 {in_window.count()}개" in scope
    for code in in_window.values_list("code", flat=True):
        assert code in scope
