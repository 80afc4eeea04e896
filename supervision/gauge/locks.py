"""The overlap lock of the nightly review: a Redis lock shared by every worker and the command.

A night that is split into chunk tasks (``supervision.gauge.tasks``) outlives the task that took the lock:
the lock is then handed over by its token to the night's last task, which releases it (``release_token``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from django.conf import settings
from redis.exceptions import LockError

logger = logging.getLogger(__name__)
LOCK_NAME = "portal:nightly-review:lock"
# Deletes the key only while it still holds our token: a lock that expired and was taken by another night
# is that night's, not ours to release.
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


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


def acquire_token() -> str | None:
    """Takes the lock without waiting and returns its token (None: another run holds it). The holder of the
    token releases it with ``release_token``, whichever process that is. Without ``REDIS_URL`` every
    call gets a token (one process, no overlap possible)."""
    token = uuid.uuid4().hex
    if not settings.REDIS_URL:
        return token
    if _client().set(LOCK_NAME, token, nx=True, ex=settings.NIGHTLY_REVIEW_LOCK_SECONDS):
        return token
    return None


def holds_token(token: str) -> bool:
    """Whether the lock is still the one taken with ``token`` (not expired, not taken by another night)."""
    if not settings.REDIS_URL:
        return True
    held = _client().get(LOCK_NAME)
    return held is not None and held.decode() == token


def release_token(token: str) -> bool:
    """Releases the lock taken with ``token``; False when it had expired (or is another night's)."""
    if not settings.REDIS_URL:
        return True
    released = bool(_client().eval(_RELEASE, 1, LOCK_NAME, token))
    if not released:
        logger.warning("nightly review lock had expired before release")
    return released
