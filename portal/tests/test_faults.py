"""Fault tests with real processes (issue 14, item 7): a Celery worker killed with SIGKILL in the middle of
an import job and of the nightly review, and the nightly task's database connection terminated mid-run.
Each runs a real `celery -A portal worker` on a private redis-server, against the test database; a table lock
held by the test stops the job at a known point so the fault lands mid-run every time. (Redis stopped under
gunicorn: portal/tests/test_redis_down.py.)"""

from __future__ import annotations

import contextlib
import os
import time

import psycopg
import pytest
import redis

from portal.testing import Worker, sender, wait_until
from supervision.gauge.locks import LOCK_NAME
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.tests.conftest import DAY, fixture_sessions, target_bands  # noqa: F401 (fixtures)
from supervision.importing import jobs
from supervision.importing.models import ImportJob
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session, Turn
from supervision.testing import database_url_under_test

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]
NIGHTLY = "supervision.nightly_review"
VISIBILITY_SECONDS = 2


@pytest.fixture
def workers(private_redis, tmp_path):
    """Starts workers on the private Redis (``start(**env)``); every one is stopped at the end."""
    started: list[Worker] = []
    base = {
        **os.environ,
        "DATABASE_URL": database_url_under_test(),
        "REDIS_URL": private_redis.url,
        "DJANGO_CONN_MAX_AGE": "0",
    }

    def start(**env: str) -> Worker:
        worker = Worker(env={**base, **env}).start(tmp_path / f"worker-{len(started)}.log")
        started.append(worker)
        return worker

    start.sender = sender(private_redis.url)
    yield start
    for worker in started:
        worker.stop()


@contextlib.contextmanager
def table_locked(table: str, mode: str):
    """Holds ``LOCK TABLE`` on a connection of the test's own until the block ends."""
    with psycopg.connect(database_url_under_test()) as conn:
        conn.execute(f"LOCK TABLE {table} IN {mode} MODE")
        yield conn
        conn.rollback()


def backends_waiting_on_a_lock() -> list[int]:
    with psycopg.connect(database_url_under_test(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchall()
    return [pid for (pid,) in rows]


def backend_gone(pid: int) -> bool:
    with psycopg.connect(database_url_under_test(), autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()[0] == 0


def test_a_worker_killed_mid_import_leaves_no_half_file_and_the_job_is_redone(cast, workers, tmp_path):
    rows = 3000
    path = write_csv(tmp_path / "big.csv", ENGLISH_HEADER, session_rows("KILL1", rows))
    job = jobs.import_job_create(name="big.csv", data=path.read_bytes(), created_by=cast.staff)
    ImportJob.objects.filter(pk=job.pk).update(mode=ImportJob.Mode.WRITE, status=ImportJob.Status.QUEUED)
    worker = workers()

    with table_locked("turns", "SHARE"):
        workers.sender.send_task("importing.run_import_job", args=[job.pk])
        # The worker is inside the import's transaction, about to write the file's turns: kill it there.
        wait_until(lambda: backends_waiting_on_a_lock(), 60, "the import did not reach its writes")
        assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.RUNNING
        (blocked,) = backends_waiting_on_a_lock()
        worker.kill()
        killed_at = time.monotonic()
    # Its database session ends with the process: PostgreSQL rolls the whole import back.
    wait_until(lambda: backend_gone(blocked), 30, "the killed worker's database session lingered")
    assert not Session.objects.filter(code="KILL1").exists()
    assert not Turn.objects.filter(session__code="KILL1").exists()
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.RUNNING  # abandoned, not finished

    # The task was acknowledged late, so the broker still holds it: a new worker takes it up again once the
    # visibility timeout has passed and redoes the whole file. Kombu (5.7) looks for such messages when a worker
    # starts, then only every 100 s: the new worker starts once the message is past its timeout.
    time.sleep(max(0.0, killed_at + VISIBILITY_SECONDS + 0.5 - time.monotonic()))
    workers(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_SECONDS))
    wait_until(lambda: ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.DONE, 120, "no redo")
    assert Turn.objects.filter(session__code="KILL1").count() == rows
    assert Session.objects.filter(code="KILL1").count() == 1


def snapshot_figures() -> dict:
    fields = [f.name for f in GaugeSnapshot._meta.fields if f.name not in ("id", "computed_at", "created_at")]
    return {
        (s["trainee"], s["date"], s["session"]): s
        for s in GaugeSnapshot.objects.values(*fields)
        for s in [{k: v for k, v in s.items() if not k.endswith("_at")}]
    }


@pytest.mark.usefixtures("fixture_sessions")
def test_the_nightly_retries_after_its_connection_is_terminated_and_the_figures_match(workers):
    worker = workers(NIGHTLY_RETRY_BACKOFF_SECONDS="1")
    with table_locked("gauge_snapshot", "ACCESS EXCLUSIVE"):
        result = workers.sender.send_task(NIGHTLY, kwargs={"day": DAY.isoformat()})
        wait_until(lambda: backends_waiting_on_a_lock(), 60, "the nightly did not reach the snapshots")
        (blocked,) = backends_waiting_on_a_lock()
        with psycopg.connect(database_url_under_test(), autocommit=True) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s)", [blocked]).fetchone()[0]
    outcome = result.get(timeout=120)
    assert "skipped" not in outcome
    assert "Retry in" in worker.log(), worker.log()
    disturbed = snapshot_figures()
    assert disturbed
    count = GaugeSnapshot.objects.count()

    # The same day again, undisturbed and in-process: the same figures, and no second snapshot of anything.
    from supervision.gauge.tasks import nightly_review

    nightly_review.apply(kwargs={"day": DAY.isoformat()}).get()
    assert GaugeSnapshot.objects.count() == count
    assert snapshot_figures() == disturbed


@pytest.mark.usefixtures("fixture_sessions")
def test_the_overlap_lock_of_a_crashed_worker_expires_so_the_next_night_runs(workers, private_redis, settings):
    settings.REDIS_URL = private_redis.url
    lock_seconds = "20"
    worker = workers(NIGHTLY_REVIEW_LOCK_SECONDS=lock_seconds)
    locks = redis.Redis.from_url(private_redis.url)
    with table_locked("gauge_snapshot", "ACCESS EXCLUSIVE"):
        workers.sender.send_task(NIGHTLY, kwargs={"day": DAY.isoformat()})
        wait_until(lambda: backends_waiting_on_a_lock(), 60, "the nightly did not reach the snapshots")
        assert locks.exists(LOCK_NAME)
        worker.kill()  # holding the overlap lock
    assert 0 < locks.ttl(LOCK_NAME) <= 20

    workers(NIGHTLY_REVIEW_LOCK_SECONDS=lock_seconds)
    skipped = workers.sender.send_task(NIGHTLY, kwargs={"day": DAY.isoformat()}).get(timeout=60)
    assert skipped["skipped"] == "locked"  # the dead run's lock still stands ...
    wait_until(lambda: not locks.exists(LOCK_NAME), 30, "the lock did not expire")
    ran = workers.sender.send_task(NIGHTLY, kwargs={"day": DAY.isoformat()}).get(timeout=120)
    assert "skipped" not in ran  # ... and the next night runs
    assert GaugeSnapshot.objects.filter(date=DAY).exists()
