"""Large uploads run as a Celery job (ImportJob) whose progress the page can read while it runs."""

import datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections, transaction
from django.urls import reverse
from django.utils import timezone

from portal.celery import app
from supervision.importing import jobs
from supervision.importing.models import ImportJob
from supervision.importing.tasks import run_import_job
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Turn
from supervision.testing import PASSWORD

IMPORT_URL = reverse("admin:supervision_session_import")


@pytest.fixture
def eager_celery():
    """Tasks run in-process, as they do without REDIS_URL (the broker is not what is tested here)."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.mark.django_db
def test_a_large_upload_is_previewed_and_written_by_a_background_job(
    client, cast, settings, tmp_path, eager_celery, django_capture_on_commit_callbacks, monkeypatch
):
    settings.IMPORT_ASYNC_THRESHOLD_BYTES = 100
    delayed = []
    real_delay = run_import_job.delay
    monkeypatch.setattr(run_import_job, "delay", lambda job_id: delayed.append(job_id) or real_delay(job_id))
    path = write_csv(tmp_path / "large.csv", ENGLISH_HEADER, session_rows("JOB1", 40))
    assert client.login(username="staff", password=PASSWORD)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(IMPORT_URL, {"file": SimpleUploadedFile("large.csv", path.read_bytes())})
    job = ImportJob.objects.get()
    assert delayed == [job.pk]
    assert job.status == ImportJob.Status.PREVIEWED
    assert job.total == 40  # estimated from the upload before it was parsed, for the progress bar
    assert job.report["created"] == 40
    assert not Turn.objects.exists()

    progress = client.get(reverse("admin:supervision_session_import_progress", args=[job.pk])).json()
    assert progress == {"status": "previewed", "mode": "preview", "phase": "", "done": 0, "total": 40, "percent": 100}

    with django_capture_on_commit_callbacks(execute=True):
        client.post(response["Location"])
    job.refresh_from_db()
    assert delayed == [job.pk, job.pk]
    assert job.status == ImportJob.Status.DONE
    assert Turn.objects.filter(session__code="JOB1").count() == 40


@pytest.mark.django_db(transaction=True)
def test_progress_is_visible_while_the_import_transaction_is_still_open(cast):
    job = jobs.import_job_create(name="t.csv", data=b"a\nb\nc\n", created_by=cast.staff)
    writer = jobs._ProgressWriter(job)
    page = connections.create_connection("default")  # the polling page's own connection
    try:
        with transaction.atomic():
            writer("write", 2, 3)
            # The page sees it although the import's transaction has not committed.
            with page.cursor() as cursor:
                cursor.execute("SELECT phase, done, total FROM importing_importjob WHERE id = %s", [job.pk])
                assert cursor.fetchone() == ("write", 2, 3)
    finally:
        writer.close()
        page.close()


@pytest.mark.django_db
def test_confirming_is_refused_until_a_preview_passed(cast):
    job = jobs.import_job_create(name="t.csv", data=b"x\n", created_by=cast.staff)
    with pytest.raises(jobs.UploadRefused):
        jobs.import_job_start(job=job, mode=ImportJob.Mode.WRITE)


@pytest.mark.django_db
def test_uploads_never_written_are_forgotten_after_the_retention_days(cast, settings):
    settings.IMPORT_UPLOAD_RETENTION_DAYS = 7
    now = timezone.now()

    def job(status, days_old):
        made = jobs.import_job_create(name="t.csv", data=b"synthetic\n", created_by=cast.staff)
        ImportJob.objects.filter(pk=made.pk).update(status=status, created_at=now - datetime.timedelta(days=days_old))
        return made.pk

    old_preview = job(ImportJob.Status.PREVIEWED, 8)
    old_invalid = job(ImportJob.Status.INVALID, 30)
    recent_preview = job(ImportJob.Status.PREVIEWED, 6)
    old_running = job(ImportJob.Status.RUNNING, 8)

    assert jobs.import_jobs_forget_stale_uploads(now=now) == 2
    state = {pk: (status, bytes(data)) for pk, status, data in ImportJob.objects.values_list("pk", "status", "data")}
    assert state[old_preview] == state[old_invalid] == (ImportJob.Status.EXPIRED, b"")
    assert state[recent_preview] == (ImportJob.Status.PREVIEWED, b"synthetic\n")
    assert state[old_running] == (ImportJob.Status.RUNNING, b"synthetic\n")

    with pytest.raises(jobs.UploadRefused, match="보관 기간\\(7일\\)이 지나"):
        jobs.import_job_start(job=ImportJob.objects.get(pk=old_preview), mode=ImportJob.Mode.WRITE)


def test_the_daily_beat_entry_forgets_stale_uploads():
    entry = app.conf.beat_schedule["forget-stale-uploads"]
    assert entry["task"] == "importing.forget_stale_uploads" in app.tasks
    assert (entry["schedule"].hour, entry["schedule"].minute) == ({4}, {30})
