"""Import jobs: an upload kept for preview → confirm, run in the request (small files) or by Celery.

Services here follow the house rule (keyword-only, one transaction each); the Celery task only passes
the job id to ``import_job_run``.
"""

from __future__ import annotations

import datetime
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone

from portal.queue import QUEUE_DOWN_MESSAGE, QueueUnavailable, broker_answers, enqueue
from supervision.importing.models import ImportJob
from supervision.importing.records import RowError
from supervision.importing.services import ImportReport, import_file
from supervision.importing.sources import READERS

SPREADSHEET_SUFFIXES = tuple(sorted(READERS))
PROGRESS_SECONDS = 0.5


class UploadRefused(Exception):
    """The upload is refused before anything is read (type or size); the message is for the user."""


def check_upload(*, name: str, size: int) -> str:
    suffix = Path(name).suffix.lower()
    if suffix not in SPREADSHEET_SUFFIXES:
        raise UploadRefused(
            f"지원하지 않는 파일 형식 '{suffix or name}'입니다({', '.join(SPREADSHEET_SUFFIXES)} 중 하나)."
        )
    if size == 0:
        raise UploadRefused("파일이 비어 있습니다.")
    if size > settings.IMPORT_MAX_BYTES:
        raise UploadRefused(upload_too_large_message(size))
    return suffix


def upload_too_large_message(size: int) -> str:
    """The byte cap is the web upload's (the upload is kept in the database until it is written); the command
    line streams any file up to ``IMPORT_MAX_ROWS`` rows."""
    return (
        f"파일이 너무 큽니다({size / 1_048_576:.1f} MB). 웹으로 올릴 수 있는 한도는 "
        f"{settings.IMPORT_MAX_BYTES / 1_048_576:.0f} MB이며, 서버 설정 IMPORT_MAX_BYTES로 늘릴 수 있습니다. "
        "더 큰 파일은 서버에서 'python manage.py import_transcripts 파일'로 가져오세요."
    )


@transaction.atomic
def import_job_create(*, name: str, data: bytes, trainee_username: str = "", created_by=None) -> ImportJob:
    """Keeps the upload (refused before parsing when its type or size is wrong)."""
    suffix = check_upload(name=name, size=len(data))
    estimate = max(data.count(b"\n") - 1, 0) if suffix in (".csv", ".jsonl") else 0
    return ImportJob.objects.create(
        filename=Path(name).name[:255],
        size=len(data),
        data=data,
        trainee_username=trainee_username.strip(),
        created_by=created_by,
        total=estimate,
    )


@transaction.atomic
def import_jobs_forget_stale_uploads(*, now=None) -> int:
    """Drops the bytes of uploads never written (previewed, refused or failed) once they are older than
    ``IMPORT_UPLOAD_RETENTION_DAYS``; their jobs stay listed, marked expired, with their reports. A job still
    queued or running is left alone. Returns how many uploads were dropped."""
    cutoff = (now or timezone.now()) - datetime.timedelta(days=settings.IMPORT_UPLOAD_RETENTION_DAYS)
    return ImportJob.objects.filter(
        created_at__lt=cutoff,
        status__in=[ImportJob.Status.PREVIEWED, ImportJob.Status.INVALID, ImportJob.Status.FAILED],
    ).update(data=b"", status=ImportJob.Status.EXPIRED)


def runs_in_background(job: ImportJob) -> bool:
    return job.size > settings.IMPORT_ASYNC_THRESHOLD_BYTES


def import_job_start(*, job: ImportJob, mode: str) -> None:
    """Validates (``preview``) or writes (``write``) the upload: in the request for a small file, as a
    Celery job above ``IMPORT_ASYNC_THRESHOLD_BYTES`` (in-process too when there is no broker)."""
    if job.status == ImportJob.Status.EXPIRED:
        raise UploadRefused(
            f"올린 파일은 보관 기간({settings.IMPORT_UPLOAD_RETENTION_DAYS}일)이 지나 지워졌습니다. 파일을 다시 올려 주세요."
        )
    if mode == ImportJob.Mode.WRITE and job.status != ImportJob.Status.PREVIEWED:
        raise UploadRefused("미리보기에서 오류가 없는 파일만 가져올 수 있습니다.")
    background = runs_in_background(job)
    if background and not broker_answers():
        # Minutes of work cannot hold a web worker: refused, and nothing about the job changes but that.
        if mode == ImportJob.Mode.WRITE:
            raise UploadRefused(QUEUE_DOWN_MESSAGE)
        _fail_queueing(job, previous=job.status)
        return
    previous = job.status
    ImportJob.objects.filter(pk=job.pk).update(mode=mode, status=ImportJob.Status.QUEUED, done=0, phase="")
    if background:
        from supervision.importing.tasks import run_import_job

        def queue():
            try:
                enqueue(run_import_job, job.pk, in_process_if_down=False)
            except QueueUnavailable:  # the broker went away between the ping and the publish
                _fail_queueing(job, previous=previous)

        transaction.on_commit(queue)
    else:
        import_job_run(job_id=job.pk)


def _fail_queueing(job: ImportJob, *, previous: str) -> None:
    """A preview that could not be queued ends failed, saying why; a confirmed write goes back to previewed,
    so the person can press confirm again once the queue is back."""
    if previous == ImportJob.Status.PREVIEWED:
        ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.PREVIEWED)
        return
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJob.Status.FAILED,
        report={"errors": [RowError(0, "file", QUEUE_DOWN_MESSAGE).as_dict()]},
        finished_at=timezone.now(),
    )


def import_job_run(*, job_id: int) -> ImportJob:
    """Runs the job through the same ``import_file`` as the command line; all or nothing."""
    job = ImportJob.objects.get(pk=job_id)
    if job.status not in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING):
        return job  # a redelivered task: the job already finished
    dry_run = job.mode == ImportJob.Mode.PREVIEW
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, phase="read")
    progress = _ProgressWriter(job)
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"upload{Path(job.filename).suffix.lower()}"
            path.write_bytes(bytes(job.data))
            report = import_file(
                path,
                trainee_username=job.trainee_username or None,
                created_by=job.created_by,
                dry_run=dry_run,
                progress=progress,
            )
    except Exception as exc:  # recorded for the person watching the progress bar, then re-raised for the log
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.FAILED,
            report={
                "errors": [RowError(0, "file", f"가져오기 중 오류가 났습니다({exc.__class__.__name__}).").as_dict()]
            },
            finished_at=timezone.now(),
        )
        raise
    finally:
        progress.close()
    _finish(job, report, dry_run)
    job.refresh_from_db()
    return job


SESSION_LINK_IDS = 200  # the done page links to these sessions in the admin change list


def _finish(job: ImportJob, report: ImportReport, dry_run: bool) -> None:
    if report.errors:
        status = ImportJob.Status.INVALID
    else:
        status = ImportJob.Status.PREVIEWED if dry_run else ImportJob.Status.DONE
    summary = {
        "sessions": report.sessions,
        "turns": report.turns,
        "created": report.created,
        "updated": report.updated,
        "deleted": report.deleted,
        "warnings": [w.as_dict() for w in report.warnings],
        "errors": [e.as_dict() for e in report.errors],
        "previews": report.previews,
        "session_ids": report.session_ids[:SESSION_LINK_IDS],
    }
    fields = {"status": status, "report": summary, "finished_at": timezone.now(), "phase": ""}
    if status == ImportJob.Status.DONE:
        fields["data"] = b""  # written: the upload is no longer needed
    ImportJob.objects.filter(pk=job.pk).update(**fields)


class _ProgressWriter:
    """Writes progress on its own connection, so the page polling it sees it while the import's
    transaction is still open (on SQLite, where only the in-process mode runs, it is skipped)."""

    def __init__(self, job: ImportJob) -> None:
        self.job_id = job.pk
        self.estimate = job.total
        self.last = 0.0
        self.side = connections.create_connection("default") if connection.vendor == "postgresql" else None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if self.side is None or (now - self.last < PROGRESS_SECONDS and done != total):
            return
        self.last = now
        total = total or max(self.estimate, done)
        with self.side.cursor() as cursor:
            cursor.execute(
                f"UPDATE {ImportJob._meta.db_table} SET phase = %s, done = %s, total = %s WHERE id = %s",
                [phase, done, total, self.job_id],
            )

    def close(self) -> None:
        if self.side is not None:
            self.side.close()
