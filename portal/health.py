"""``GET /healthz`` for a load balancer (CONTRACT §1), on django-health-check's own probes.

200 ``{"status": "ok", "checks": {"database": "ok", "redis": "ok"}}`` when both answer, 503 with the failing
one marked ``"error"`` otherwise. Nothing else is said: no host, no version, no error text (the reason goes
to the log, where django-health-check writes it).
"""

from __future__ import annotations

import asyncio
import datetime

from django.conf import settings
from django.http import JsonResponse
from django.utils.cache import add_never_cache_headers
from health_check.checks import Database
from health_check.contrib.redis import Redis
from health_check.views import HealthCheckView
from redis.asyncio import Redis as RedisClient

PROBE_TIMEOUT = datetime.timedelta(seconds=2)


def _redis_client() -> RedisClient:
    return RedisClient.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1, retry_on_timeout=False)


class HealthzView(HealthCheckView):
    http_method_names = ["get", "head"]

    def probes(self) -> dict[str, object]:
        database = Database()
        database.timeout = PROBE_TIMEOUT
        probes = {"database": database}
        # The embedded `make run` has no Redis at all (jobs run in-process): nothing to probe there.
        if settings.REDIS_URL:
            redis = Redis(client_factory=_redis_client)
            redis.timeout = PROBE_TIMEOUT
            probes["redis"] = redis
        return probes

    async def get(self, request, *args, **kwargs):
        probes = self.probes()
        results = await asyncio.gather(*(probe.get_result() for probe in probes.values()))
        checks = {name: "error" if result.error else "ok" for name, result in zip(probes, results, strict=True)}
        healthy = all(state == "ok" for state in checks.values())
        response = JsonResponse(
            {"status": "ok" if healthy else "error", "checks": checks}, status=200 if healthy else 503
        )
        add_never_cache_headers(response)
        return response
