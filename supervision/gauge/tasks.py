"""Celery tasks of the nightly review (scheduled in ``settings.CELERY_BEAT_SCHEDULE["nightly-review"]``).

``supervision.nightly_review`` takes the overlap lock and looks at what the night holds. A small night (an
ordinary one: the few sessions imported or edited since) runs right there. A big one (the first night, a
new engine version) is split into chunk tasks (``supervision.nightly_chunk``, see ``supervision.nightly``)
that every worker takes, on any number of machines; the last of them triggers ``supervision.nightly_finish``
(a chord), which runs the steps in order, as on any night, and releases the lock; before a step with a
part of its own (the tags, per trainee) it may hand the rest of the night to one more round of chunks the
same way. The nightly task is replaced by these chords, so whoever waits on its result gets the finished
night's.
"""

from __future__ import annotations

import datetime
import logging

from celery import chord, shared_task
from celery.exceptions import Ignore
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone
from django.utils.module_loading import import_string

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
    """Runs the steps of ``settings.NIGHTLY_REVIEW_STEPS`` for ``day`` (ISO date; default today in
    ``PORTAL_TIME_ZONE``) as ``supervision.nightly.nightly_review`` does, a big night through chunk tasks
    first; unless another run holds the lock, in which case it logs and skips."""
    target = datetime.date.fromisoformat(day) if day else timezone.localdate()
    token = acquire_token()
    if token is None:
        logger.warning("nightly review for %s skipped: another run holds the lock", target)
        return {"day": target.isoformat(), "skipped": "locked"}
    try:
        chunks = nightly.plan(nightly.pending_work(day=target), size=settings.NIGHTLY_CHUNK_SESSIONS)
    except Exception:  # a lost connection: the retry takes the lock again
        release_token(token)
        raise
    if len(chunks) <= 1:
        return _steps(self, target, token, start=0, prepared=False, done={}, totals={})
    return _fan_out(self, target, token, chunks, start=0, done={}, totals={})


@shared_task(name=CHUNK_TASK_NAME, acks_late=True, **_RETRIES)
def nightly_chunk(day: str, work: dict[str, list[int]]) -> dict:
    """One chunk of a big night's work (one transaction)."""
    return nightly.prepare_chunk(day=datetime.date.fromisoformat(day), work=work)


@shared_task(name=FINISH_TASK_NAME, bind=True, acks_late=True, **_RETRIES)
def nightly_finish(
    self, chunk_results: list[dict], day: str, token: str, start: int = 0, done=None, totals=None
) -> dict:
    """After a round of chunks: the steps in order from ``start`` (the chunks' work is done; the step at
    ``start`` had its part done by them), then the lock released.

    If the lock expired meanwhile (a chunk redelivered hours later), the steps run only if it can be taken
    again: a newer night that holds it does this work itself."""
    target = datetime.date.fromisoformat(day)
    if not holds_token(token):
        token = acquire_token()
        if token is None:
            logger.warning("nightly review for %s: finish skipped, another run holds the lock", target)
            return {"day": day, "skipped": "locked"}
    totals = _add_totals(dict(totals or {}), chunk_results)
    return _steps(self, target, token, start=start, prepared=True, done=dict(done or {}), totals=totals)


@shared_task(name="supervision.nightly_abandon")
def nightly_abandon(failed_task_id: str | None = None, *, token: str) -> None:
    """A chunk failed for good: the rest of the night will not run, so the lock is released now. What the
    failed chunk was doing was rolled back; its sessions are pending again for the next night."""
    logger.error("nightly review abandoned after a failed chunk (%s)", failed_task_id)
    release_token(token)


def _steps(task, day: datetime.date, token: str, *, start: int, prepared: bool, done: dict, totals: dict) -> dict:
    """Runs the steps from ``start`` on; before a step with a part (``settings.NIGHTLY_STEP_PARTS``) that
    makes more than one chunk, hands the rest of the night to a round of chunk tasks instead. Releases the
    lock at the end (or hands it over with the rest of the night)."""
    handed_over = False
    try:
        steps = settings.NIGHTLY_REVIEW_STEPS
        for index in range(start, len(steps)):
            if not (prepared and index == start):
                work = nightly.step_work(day=day, step=steps[index])
                chunks = nightly.plan(work, size=settings.NIGHTLY_CHUNK_TRAINEES) if work else []
                if len(chunks) > 1:
                    handed_over = True
                    return _fan_out(task, day, token, chunks, start=index, done=done, totals=totals)
            result = import_string(steps[index])(day=day)
            done[steps[index]] = result.summary() if hasattr(result, "summary") else result
    finally:
        if not handed_over:
            release_token(token)
    summary = {"day": day.isoformat(), "steps": done}
    if totals:
        summary["chunks"] = totals
    return summary


def _fan_out(task, day: datetime.date, token: str, chunks: list, *, start: int, done: dict, totals: dict):
    """Replaces ``task`` by a chord: the chunk tasks, then ``nightly_finish`` from step ``start`` on, which
    gets the lock's token (released by ``nightly_abandon`` if a chunk fails). Whoever waits on the nightly
    task's result gets the finished night's. In case of a failure before the chord is sent, the lock is
    released."""
    logger.info("nightly review for %s: %d chunk tasks before step %d", day, len(chunks), start)
    finish = nightly_finish.s(day=day.isoformat(), token=token, start=start, done=done, totals=totals)
    try:
        return task.replace(
            chord(
                [nightly_chunk.s(day.isoformat(), work) for work in chunks],
                finish.on_error(nightly_abandon.s(token=token)),
            )
        )
    except Ignore:  # sent: this task ends here and the chord carries the night (and the lock) on
        raise
    except Exception:
        release_token(token)
        raise


def _add_totals(totals: dict, chunk_results: list[dict]) -> dict:
    """Chunk tasks run and, per part (by its service's name), the sessions or trainees they were given."""
    totals["tasks"] = totals.get("tasks", 0) + len(chunk_results)
    for result in chunk_results:
        for prepare, outcome in result.items():
            name = prepare.rsplit(".", 1)[-1]
            totals[name] = totals.get(name, 0) + outcome["ids"]
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
