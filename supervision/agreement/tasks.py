"""The agreement reports' background work (see keeping.py)."""

from __future__ import annotations

import logging
import time

import redis
from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from portal.queue import QueueUnavailable, enqueue

from .keeping import run_report_keep, run_reports_refresh
from .models import AnnotationRun

logger = logging.getLogger(__name__)

# The sessions written since the last refresh started (a Redis set), and the mark of a refresh queued and not
# started yet: a supervisor adjudicating writes a label every few seconds, and each refresh covers them all.
_WRITTEN = "portal:agreement:refresh:sessions"
_QUEUED = "portal:agreement:refresh:queued"
REFRESH_DELAY_SECONDS = 5


# While a run's keep job is running, or was queued a moment ago: the report page waits for it
# (``wait_for_keep``) rather than work the same figures out beside it on the same cores (the uploader follows
# the save's redirect to the report at once). A job no worker has taken within ``KEEP_PICKUP_SECONDS`` (the
# workers are down or busy) is not waited for.
_KEEPING = "agreement:keeping:{run_id}"
_QUEUED_AT, _RUNNING = "queued:", "running"
KEEPING_SECONDS = 60  # a job that died holds no page after this
KEEP_PICKUP_SECONDS = 2
KEEP_WAIT_SECONDS = 10


@shared_task(name="supervision.agreement_report_keep", acks_late=True)
def keep_run_report(run_id: int) -> int:
    """Works out a just-saved run's report for everyone who may open it."""
    key = _KEEPING.format(run_id=run_id)
    cache.set(key, _RUNNING, KEEPING_SECONDS)
    try:
        run = AnnotationRun.objects.filter(pk=run_id).first()
        return run_report_keep(run) if run is not None else 0
    finally:
        cache.delete(key)


def wait_for_keep(run_id: int, *, timeout: float = KEEP_WAIT_SECONDS) -> None:
    """Returns once no keep job of this run is running or just queued (``timeout`` at most)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = cache.get(_KEEPING.format(run_id=run_id))
        if not state:
            return
        if state != _RUNNING and time.time() - float(state.removeprefix(_QUEUED_AT)) > KEEP_PICKUP_SECONDS:
            return  # queued, and no worker took it
        time.sleep(0.1)


@shared_task(name="supervision.agreement_reports_refresh", acks_late=True)
def refresh_run_reports() -> int:
    """Works out again the reports that the golden labels written since the last refresh changed."""
    client = _client()
    client.delete(_QUEUED)  # first: a write from now on queues the next refresh
    with client.pipeline() as pipe:  # take the set and empty it at once
        pipe.smembers(_WRITTEN)
        pipe.delete(_WRITTEN)
        written, _ = pipe.execute()
    return run_reports_refresh({int(sid) for sid in written}) if written else 0


def queue_run_report_keep(run_id: int) -> None:
    """Hands ``keep_run_report`` to a worker (call it from ``transaction.on_commit``). With the broker down
    nothing runs here: the report is then worked out when it is first opened."""
    cache.set(_KEEPING.format(run_id=run_id), f"{_QUEUED_AT}{time.time()}", KEEPING_SECONDS)
    try:
        enqueue(keep_run_report, run_id, in_process_if_down=False)
    except QueueUnavailable:
        cache.delete(_KEEPING.format(run_id=run_id))
        logger.warning("broker down: the report of annotation run %s is worked out when first opened", run_id)


def golden_labels_changed(sender, session_ids: list[int], **kwargs) -> None:
    """Receives ``supervision.signals.golden_labels_changed``: notes the sessions and queues one refresh
    (unless one is queued and not started yet), a few seconds later, so that a burst of edits costs one."""
    if not settings.REDIS_URL:
        return  # the embedded `make run`: reports are worked out when opened
    try:
        client = _client()
        with client.pipeline() as pipe:
            pipe.sadd(_WRITTEN, *session_ids)
            pipe.set(_QUEUED, "1", nx=True, ex=120)  # expires: a lost task holds the next one back 2 min at most
            _, newly_queued = pipe.execute()
        if newly_queued:
            enqueue(refresh_run_reports, in_process_if_down=False, countdown=REFRESH_DELAY_SECONDS)
    except (redis.RedisError, QueueUnavailable) as exc:
        logger.warning("agreement reports not refreshed after a label write (%s)", exc.__class__.__name__)


def forget_pending_refresh() -> None:
    """Drops the sessions noted for the next refresh and its queued mark (tests: a refresh queued on a
    broker that was then purged)."""
    if settings.REDIS_URL:
        _client().delete(_WRITTEN, _QUEUED)


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=2)
