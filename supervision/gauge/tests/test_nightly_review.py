"""The nightly job: beat schedule, task name, overlap lock, retries, command, and a real worker on Redis."""

import datetime
import json
import logging
from io import StringIO

import pytest
import time_machine
from celery.schedules import crontab
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import InterfaceError, OperationalError

from portal.celery import app
from supervision import nightly
from supervision.gauge import services, tasks
from supervision.gauge.locks import nightly_lock
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.tests.conftest import DAY


def test_the_beat_schedule_runs_it_at_three_in_the_portal_time_zone():
    entry = app.conf.beat_schedule["nightly-review"]
    assert entry["task"] == tasks.TASK_NAME == "supervision.nightly_review"
    schedule = entry["schedule"]
    assert isinstance(schedule, crontab)
    assert (schedule.hour, schedule.minute) == ({3}, {0})
    assert app.conf.timezone == settings.TIME_ZONE == "Asia/Seoul"
    # at 02:00 Seoul (17:00 UTC) the next run is one hour away: 03:00 Seoul, not 03:00 UTC
    last_run = datetime.datetime(2026, 11, 28, 18, 0, tzinfo=datetime.UTC)  # 03:00 Seoul on the 29th
    with time_machine.travel(datetime.datetime(2026, 11, 29, 17, 0, tzinfo=datetime.UTC), tick=False):
        assert schedule.remaining_estimate(last_run) == datetime.timedelta(hours=1)
        assert not schedule.is_due(last_run).is_due
    with time_machine.travel(datetime.datetime(2026, 11, 29, 18, 0, 1, tzinfo=datetime.UTC), tick=False):
        assert schedule.is_due(last_run).is_due


def test_the_task_is_registered_by_name_with_late_acks_and_retries():
    task = app.tasks["supervision.nightly_review"]
    assert task.name == tasks.nightly_review.name
    assert app.conf.task_acks_late is True
    assert set(task.autoretry_for) == {OperationalError, InterfaceError}
    assert task.retry_backoff and task.max_retries >= 3


def test_the_nightly_steps_hook_runs_the_gauge(fixture_sessions):
    assert "supervision.gauge.services.gauge_compute" in settings.NIGHTLY_REVIEW_STEPS
    results = nightly.nightly_review(day=DAY)
    assert results["supervision.gauge.services.gauge_compute"].summary() == {"trainees": 2, "sessions": 3, "turns": 24}


def test_it_skips_with_a_log_line_while_another_run_holds_the_lock(fixture_sessions, caplog):
    with nightly_lock() as held, caplog.at_level(logging.WARNING, logger="supervision.gauge.tasks"):
        assert held
        with nightly_lock() as second:
            assert second is False
        result = tasks.nightly_review.apply(kwargs={"day": DAY.isoformat()}).get()
    assert result == {"day": "2026-11-30", "skipped": "locked"}
    assert "skipped: another run holds the lock" in caplog.text
    assert not GaugeSnapshot.objects.exists()
    # released: the next run goes ahead
    result = tasks.nightly_review.apply(kwargs={"day": DAY.isoformat()}).get()
    assert result["steps"]["supervision.gauge.services.gauge_compute"]["sessions"] == 3


def test_it_retries_when_the_database_goes_away(fixture_sessions, monkeypatch):
    real = services.gauge_compute
    calls = []

    def flaky(*, day):
        calls.append(day)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(day=day)

    monkeypatch.setattr(services, "gauge_compute", flaky)
    monkeypatch.setattr(settings, "NIGHTLY_REVIEW_STEPS", ("supervision.gauge.services.gauge_compute",))
    # eagerly, the retry runs at once inside the first attempt
    tasks.nightly_review.apply(kwargs={"day": DAY.isoformat()}, throw=False)
    assert len(calls) == 2
    assert GaugeSnapshot.objects.filter(date=DAY).count() == 5
    with nightly_lock() as held:
        assert held  # the failed attempt released the lock


def test_the_command_prints_the_summary_last_and_is_idempotent(fixture_sessions):
    for _ in range(2):
        out = StringIO()
        call_command("compute_gauges", "--date", "2026-11-30", stdout=out)
        assert json.loads(out.getvalue().strip().splitlines()[-1]) == {"trainees": 2, "sessions": 3, "turns": 24}
    assert GaugeSnapshot.objects.count() == 5


def test_the_command_rejects_a_bad_date_in_korean(db):
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("compute_gauges", "--date", "30/11/2026")


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_task_by_name_and_the_snapshots_appear(fixture_sessions, worker):
    with nightly_lock():
        skipped = app.send_task("supervision.nightly_review", kwargs={"day": "2026-11-30"}).get(timeout=60)
    assert skipped == {"day": "2026-11-30", "skipped": "locked"}
    assert not GaugeSnapshot.objects.exists()

    result = app.send_task("supervision.nightly_review", kwargs={"day": "2026-11-30"}).get(timeout=120)
    assert result["steps"]["supervision.gauge.services.gauge_compute"] == {"trainees": 2, "sessions": 3, "turns": 24}
    wide = GaugeSnapshot.objects.get(trainee=fixture_sessions.trainee_a, session=None, date=DAY)
    assert (wide.turns, wide.silent_close_events, wide.rq_band) == (20, 2, "fair")

    def snapshot_rows():
        return [
            {k: v for k, v in row.items() if k != "computed_at"}
            for row in GaugeSnapshot.objects.order_by("id").values()
        ]

    rows = snapshot_rows()
    again = app.send_task("supervision.nightly_review", kwargs={"day": "2026-11-30"}).get(timeout=120)
    # Running twice leaves the same rows (the tag step reports only what it newly recorded: nothing).
    assert again["steps"]["supervision.gauge.services.gauge_compute"] == {"trainees": 2, "sessions": 3, "turns": 24}
    assert again["steps"]["supervision.tags.nightly.tags_nightly"]["evidence"] == 0
    assert snapshot_rows() == rows
    assert GaugeSnapshot.objects.count() == 5
