"""Celery task of the nightly review (scheduled in ``settings.CELERY_BEAT_SCHEDULE["nightly-review"]``)."""

from __future__ import annotations

import datetime
import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from supervision import nightly
from supervision.gauge.locks import nightly_lock

logger = logging.getLogger(__name__)
TASK_NAME = "supervision.nightly_review"


@shared_task(
    name=TASK_NAME,
    # A database restart or a dropped connection at 03:00 is worth waiting out; anything else is a bug.
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=settings.NIGHTLY_RETRY_BACKOFF_SECONDS,
    retry_backoff_max=30 * 60,
    retry_jitter=True,
    max_retries=6,
)
def nightly_review(day: str | None = None) -> dict:
    """Runs ``supervision.nightly.nightly_review`` for ``day`` (ISO date; default today in ``PORTAL_TIME_ZONE``),
    unless another run holds the lock, in which case it logs and skips."""
    target = datetime.date.fromisoformat(day) if day else timezone.localdate()
    with nightly_lock() as acquired:
        if not acquired:
            logger.warning("nightly review for %s skipped: another run holds the lock", target)
            return {"day": target.isoformat(), "skipped": "locked"}
        results = nightly.nightly_review(day=target)
    return {
        "day": target.isoformat(),
        "steps": {name: (r.summary() if hasattr(r, "summary") else r) for name, r in results.items()},
    }


def queue_nightly_reviews(days) -> int:
    """지금 다시 계산: queues the nightly review for each day (ISO dates or dates), not in-process when the
    queue is down (raises ``portal.queue.QueueUnavailable``: a web request must not run the whole night's
    work). The snapshot admin's action and the import done page call this."""
    from portal.queue import enqueue

    isodays = sorted({d if isinstance(d, str) else d.isoformat() for d in days})
    for day in isodays:
        enqueue(nightly_review, day, in_process_if_down=False)
    return len(isodays)
