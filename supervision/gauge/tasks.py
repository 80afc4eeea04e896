"""Celery tasks of the nightly review (scheduled in ``settings.CELERY_BEAT_SCHEDULE["nightly-review"]``).

``supervision.nightly_review`` takes the overlap lock and looks at what the night holds. A small night (an
ordinary one: the few sessions imported or edited since) runs right there. A big one (the first night, a
new engine version) is split into chunk tasks (``supervision.nightly_chunk``, see ``supervision.nightly``)
that every worker takes, on any number of machines; the last of them triggers ``supervision.nightly_finish``
(a chord), which runs the steps in order, as on any night, and releases the lock. The nightly task is
replaced by that chord, so whoever waits on its result gets the finished night's.
"""

from __future__ import annotations

import datetime
import logging

from celery import chord, shared_task
from celery.exceptions import Ignore
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from supervision import nightly
from supervision.gauge.locks import acquire_token, holds_token, release_token

logger = logging.getLogger(__name__)
TASK_NAME = "supervision.nightly_review"
CHUNK_TASK_NAME = "supervision.nightly_chunk"
FINISH_TASK_NAME = "supervision.nightly_finish"

# A database restart or a dropped connection at 03:00 is worth waiting out; anything else is a bug.
_RETRIES = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": settings.NIGHTLY_RETRY_BACKOFF_SECONDS,
    "retry_backoff_max": 30 * 60,
    "retry_jitter": True,
    "max_retries": 6,
}


@shared_task(name=TASK_NAME, bind=True, **_RETRIES)
def nightly_review(self, day: str | None = None) -> dict:
    """Runs ``supervision.nightly.nightly_review`` for ``day`` (ISO date; default today in ``PORTAL_TIME_ZONE``),
    unless another run holds the lock, in which case it logs and skips; a big night through chunk tasks."""
    target = datetime.date.fromisoformat(day) if day else timezone.localdate()
    token = acquire_token()
    if token is None:
        logger.warning("nightly review for %s skipped: another run holds the lock", target)
        return {"day": target.isoformat(), "skipped": "locked"}
    handed_over = False
    try:
        chunks = nightly.plan(nightly.pending_work(day=target), size=settings.NIGHTLY_CHUNK_SESSIONS)
        if len(chunks) > 1:
            logger.info("nightly review for %s: %d chunk tasks", target, len(chunks))
            finish = nightly_finish.s(day=target.isoformat(), token=token).on_error(nightly_abandon.s(token=token))
            handed_over = True  # the lock is the chord's from here: its last task releases it
            try:
                return self.replace(chord([nightly_chunk.s(target.isoformat(), work) for work in chunks], finish))
            except Ignore:  # sent: this task ends here, the chord carries on
                raise
            except Exception:
                handed_over = False
                raise
        return _summary(target, nightly.nightly_review(day=target))
    finally:
        if not handed_over:
            release_token(token)


@shared_task(name=CHUNK_TASK_NAME, acks_late=True, **_RETRIES)
def nightly_chunk(day: str, work: dict[str, list[int]]) -> dict:
    """One chunk of a big night's per-session work (one transaction)."""
    return nightly.prepare_chunk(day=datetime.date.fromisoformat(day), work=work)


@shared_task(name=FINISH_TASK_NAME, acks_late=True, **_RETRIES)
def nightly_finish(chunk_results: list[dict], day: str, token: str) -> dict:
    """After every chunk: the steps in order (they find the chunks' sessions done), then the lock released.

    If the lock expired meanwhile (a chunk redelivered hours later), the steps run only if it can be taken
    again: a newer night that holds it does this work itself."""
    target = datetime.date.fromisoformat(day)
    if not holds_token(token):
        token = acquire_token()
        if token is None:
            logger.warning("nightly review for %s: finish skipped, another run holds the lock", target)
            return {"day": day, "skipped": "locked"}
    try:
        results = nightly.nightly_review(day=target)
    finally:
        release_token(token)
    summary = _summary(target, results)
    summary["chunks"] = {"tasks": len(chunk_results), **_chunk_totals(chunk_results)}
    return summary


@shared_task(name="supervision.nightly_abandon")
def nightly_abandon(failed_task_id: str | None = None, *, token: str) -> None:
    """A chunk failed for good: the finish will not run, so the lock is released now. What the failed
    chunk was doing was rolled back; its sessions are pending again for the next night."""
    logger.error("nightly review abandoned after a failed chunk (%s)", failed_task_id)
    release_token(token)


def _summary(day: datetime.date, results: dict) -> dict:
    return {
        "day": day.isoformat(),
        "steps": {name: (r.summary() if hasattr(r, "summary") else r) for name, r in results.items()},
    }


def _chunk_totals(chunk_results: list[dict]) -> dict[str, int]:
    """Sessions each per-session part did over all chunks, keyed by the part's service name."""
    totals: dict[str, int] = {}
    for result in chunk_results:
        for prepare, done in result.items():
            name = prepare.rsplit(".", 1)[-1]
            totals[name] = totals.get(name, 0) + int(done.get("sessions", 0))
    return totals


def queue_nightly_reviews(days) -> int:
    """지금 다시 계산: queues the nightly review for each day (ISO dates or dates), not in-process when the
    queue is down (raises ``portal.queue.QueueUnavailable``: a web request must not run the whole night's
    work). The snapshot admin's action and the import done page call this."""
    from portal.queue import enqueue

    isodays = sorted({d if isinstance(d, str) else d.isoformat() for d in days})
    for day in isodays:
        enqueue(nightly_review, day, in_process_if_down=False)
    return len(isodays)
