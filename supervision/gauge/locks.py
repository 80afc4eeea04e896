"""The overlap lock of the nightly review: a Redis lock shared by every worker and the command."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from django.conf import settings
from redis.exceptions import LockError

logger = logging.getLogger(__name__)
LOCK_NAME = "portal:nightly-review:lock"


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@contextmanager
def nightly_lock(*, wait_seconds: float | None = None) -> Iterator[bool]:
    """Yields whether the lock was acquired; ``wait_seconds`` None means do not wait.

    The lock expires after ``NIGHTLY_REVIEW_LOCK_SECONDS`` so a killed worker cannot block later nights.
    Without ``REDIS_URL`` (the embedded ``make run``) jobs run in-process, one at a time, and no lock is needed.
    """
    if not settings.REDIS_URL:
        yield True
        return
    lock = _client().lock(
        LOCK_NAME,
        timeout=settings.NIGHTLY_REVIEW_LOCK_SECONDS,
        blocking=wait_seconds is not None,
        blocking_timeout=wait_seconds,
    )
    acquired = lock.acquire()
    try:
        yield acquired
    finally:
        if acquired:
            try:
                lock.release()
            except LockError:  # expired while running: nothing of ours to release
                logger.warning("nightly review lock had expired before release")
