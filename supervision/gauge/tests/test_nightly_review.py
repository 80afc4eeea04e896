"""The nightly job: beat schedule, task name, overlap lock, retries, command, and a real worker on Redis."""

import datetime
import json
import logging
import os
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from celery.schedules import crontab
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import InterfaceError, OperationalError, connection

from portal.celery import app
from supervision.gauge import services, tasks
from supervision.gauge.locks import nightly_lock
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.tests.conftest import DAY

ROOT = Path(__file__).resolve().parents[3]


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
    assert settings.NIGHTLY_REVIEW_STEPS[0] == "supervision.gauge.services.gauge_compute"
    results = services.nightly_review(day=DAY)
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


def _test_database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker(transactional_db):
    """A real `celery -A portal worker` on the real Redis, against the test database."""
    assert settings.REDIS_URL, "the worker test needs REDIS_URL"
    app.control.purge()
    env = {**os.environ, "DATABASE_URL": _test_database_url(), "DJANGO_CONN_MAX_AGE": "0"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"gauge-test-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if app.control.ping(timeout=1.0):
                break
            assert process.poll() is None, process.stdout.read()
        else:
            pytest.fail("the celery worker did not answer a ping within 60 s")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
    again = app.send_task("supervision.nightly_review", kwargs={"day": "2026-11-30"}).get(timeout=120)
    assert again == result
    assert GaugeSnapshot.objects.count() == 5
