from celery import shared_task

from supervision.importing.jobs import import_job_run


@shared_task(name="importing.run_import_job")
def run_import_job(job_id: int) -> str:
    return import_job_run(job_id=job_id).status
