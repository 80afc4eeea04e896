"""The shared cache on Redis, which degrades to "nothing cached" when Redis does not answer.

Throttle counters and cached values live here. Redis down must not turn a page, the API or a log-in into a
500 (CONTRACT §1): a read answers its default, a write is dropped, a warning is logged, and the request goes
on — a throttle therefore lets the request through while Redis is away. After a failure the cache does not
try Redis again for ``RETRY_AFTER_SECONDS``, so a dead Redis costs each request nothing and the log one line
per interval, not one per request.
"""

from __future__ import annotations

import functools
import logging
import threading
import time

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 10.0


class _Breaker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down_until = 0.0

    def is_open(self) -> bool:
        return time.monotonic() < self._down_until

    def trip(self, location: str, operation: str, exc: Exception) -> None:
        with self._lock:
            self._down_until = time.monotonic() + RETRY_AFTER_SECONDS
        logger.warning(
            "Redis cache unavailable (%s: %s); going on without it for %.0f s (%s)",
            operation,
            exc.__class__.__name__,
            RETRY_AFTER_SECONDS,
            location,
        )


def _degrading(fallback):
    """Runs the RedisCache method unless Redis is known to be down; on a Redis error returns ``fallback``
    (a value, or a callable of the call's arguments)."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            if not self._breaker.is_open():
                try:
                    return method(self, *args, **kwargs)
                except RedisError as exc:
                    self._breaker.trip(self._redis_location, method.__name__, exc)
            return fallback(*args, **kwargs) if callable(fallback) else fallback

        return wrapper

    return decorate


def _default_of_get(key, default=None, version=None):
    return default


def _incr_fallback(key, delta=1, version=None):
    # The key cannot be read: as if it held 0 (callers of incr count attempts).
    return delta


class DegradingRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._breaker = _Breaker()
        # Host and port only (never a password that may be in the URL), for the log line.
        self._redis_location = ",".join(s.rsplit("@", 1)[-1] for s in self._servers)

    add = _degrading(False)(RedisCache.add)
    get = _degrading(_default_of_get)(RedisCache.get)
    set = _degrading(None)(RedisCache.set)
    touch = _degrading(False)(RedisCache.touch)
    delete = _degrading(False)(RedisCache.delete)
    get_many = _degrading(lambda *a, **k: {})(RedisCache.get_many)
    has_key = _degrading(False)(RedisCache.has_key)
    incr = _degrading(_incr_fallback)(RedisCache.incr)
    set_many = _degrading(lambda *a, **k: [])(RedisCache.set_many)
    delete_many = _degrading(None)(RedisCache.delete_many)
    clear = _degrading(False)(RedisCache.clear)
