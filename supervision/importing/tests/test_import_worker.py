"""A large upload runs on a real Celery worker over the real Redis, and the worker then audits the
imported sessions' trajectories (the follow-up job the importer queues after commit)."""

import time

import pytest

from supervision.importing import jobs
from supervision.importing.models import ImportJob
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session
from supervision.trajectory.models import TrajectoryAudit


def wait_for(condition, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail("the worker did not finish in time")


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_writes_a_large_upload_then_audits_its_sessions(cast, settings, tmp_path, worker):
    settings.IMPORT_ASYNC_THRESHOLD_BYTES = 100
    path = write_csv(tmp_path / "large.csv", ENGLISH_HEADER, session_rows("WRK1", 24))
    job = jobs.import_job_create(name="large.csv", data=path.read_bytes(), created_by=cast.staff)

    jobs.import_job_start(job=job, mode=ImportJob.Mode.PREVIEW)
    wait_for(lambda: ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.PREVIEWED)
    assert not Session.objects.filter(code="WRK1").exists()

    jobs.import_job_start(job=ImportJob.objects.get(pk=job.pk), mode=ImportJob.Mode.WRITE)
    wait_for(lambda: ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.DONE)
    session = Session.objects.get(code="WRK1")
    assert session.turns.count() == 24
    wait_for(lambda: TrajectoryAudit.objects.filter(session=session).count() == 4)
