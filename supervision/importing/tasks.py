from celery import shared_task

from supervision.importing.jobs import import_job_run, import_jobs_forget_stale_uploads


@shared_task(name="importing.run_import_job")
def run_import_job(job_id: int) -> str:
    return import_job_run(job_id=job_id).status


@shared_task(name="importing.forget_stale_uploads")
def forget_stale_uploads() -> int:
    """Daily (beat): see ``import_jobs_forget_stale_uploads``."""
    return import_jobs_forget_stale_uploads()
