"""Handing work to the Celery workers when the broker (Redis) may be down.

With Redis away a page must still answer (CONTRACT §1): a job either runs in-process right away (short work
whose result the person is waiting for anyway) or is refused with ``QUEUE_DOWN_MESSAGE`` (long work that
would hold a web worker for minutes). Celery's own publish, when the broker does not answer, retries for
seconds and its Redis result backend for about 20 s; a one-packet ping with a short time-out decides first.
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings

from portal.celery import app

logger = logging.getLogger(__name__)

QUEUE_DOWN_MESSAGE = (
    "작업 대기열(Redis)에 연결할 수 없어 지금은 이 작업을 백그라운드로 시작할 수 없습니다. "
    "잠시 뒤 다시 시도해 주세요. 계속되면 포털을 운영하는 서버 담당자에게 알려 주세요."
)


class QueueUnavailable(Exception):
    """The broker does not answer; ``str()`` is the Korean message for the person."""

    def __init__(self, message: str = QUEUE_DOWN_MESSAGE):
        super().__init__(message)


def runs_in_process() -> bool:
    """No broker configured (embedded `make run`), or tasks forced eager (tests): ``delay`` runs in-process."""
    return bool(app.conf.task_always_eager) or not settings.REDIS_URL


def broker_answers() -> bool:
    if runs_in_process():
        return True
    if app.conf.broker_url.startswith("memory://"):
        return True  # kombu's in-process broker (the benchmarks queue jobs nobody runs): nothing to ping
    client = redis.Redis.from_url(app.conf.broker_url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        return bool(client.ping())
    except redis.RedisError as exc:
        logger.warning("Celery broker unavailable (%s)", exc.__class__.__name__)
        return False
    finally:
        client.close()


def enqueue(task, *args, in_process_if_down: bool, countdown: float | None = None, **kwargs) -> str:
    """Queues ``task(*args, **kwargs)`` for a worker and answers ``"queued"``; with the broker down runs it
    here (``"in_process"``) when ``in_process_if_down``, else raises :class:`QueueUnavailable`. A worker
    starts it ``countdown`` seconds from now at the earliest (in-process: at once)."""
    if runs_in_process():
        task.delay(*args, **kwargs)
        return "in_process"
    if broker_answers():
        try:
            # Fire and forget: nothing waits on the result, so the result backend is never touched here.
            task.apply_async(args, kwargs, retry=False, ignore_result=True, countdown=countdown)
            return "queued"
        except Exception as exc:  # kombu's OperationalError, redis errors: the broker went away just now
            logger.warning("could not queue %s (%s)", task.name, exc.__class__.__name__)
    if not in_process_if_down:
        raise QueueUnavailable
    logger.warning("broker down: running %s in-process", task.name)
    task.apply(args, kwargs, throw=True)
    return "in_process"
