"""A 500-turn session page: query count (must equal the 10-turn page's) and server time (bar: < 300 ms).

Run with `make bench-pages` (PostgreSQL from DATABASE_URL; a throw-away test database is created and
dropped). The baseline, measured in the same run through the same client, is the log-in page: a template
with no database work, so the difference is what the transcript costs.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
# The page is rendered with DEBUG off (below), but its static files are the sources, as in the test suite:
# the hashed manifest exists only after collectstatic.
os.environ.setdefault("DJANGO_DEBUG", "1")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

BAR_MS = 300.0
RUNS = 15


def timed(client: Client, url: str) -> tuple[float, int]:
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return statistics.median(timings), len(queries)


def main() -> int:
    setup_test_environment()
    settings.SECURE_SSL_REDIRECT = False
    settings.DEBUG = False
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        from supervision.feedback.tests.factories import make_session
        from supervision.people.services import portal_user_create_or_update
        from supervision.roles import Role
        from taxonomy.seeding import sync_catalogue

        sync_catalogue()
        portal_user_create_or_update(username="bench_supervisor", role=Role.SUPERVISOR, password="bench-pass-2026")
        trainee = portal_user_create_or_update(
            username="bench_trainee",
            role=Role.TRAINEE,
            password="bench-pass-2026",
            supervisor_username="bench_supervisor",
        )
        small = make_session("BENCH_10", 10, trainee="bench_trainee")
        large = make_session("BENCH_500", 500, trainee="bench_trainee", critique_every=4)
        client = Client()
        client.force_login(trainee)
        client.get("/feedback/")

        baseline_ms, baseline_q = timed(Client(), "/accounts/login/")
        small_ms, small_q = timed(client, f"/feedback/sessions/{small.pk}/")
        large_ms, large_q = timed(client, f"/feedback/sessions/{large.pk}/")
        print(f"baseline (log-in page, no DB work): {baseline_ms:7.1f} ms median, {baseline_q} queries")
        print(f"session page,  10 turns:            {small_ms:7.1f} ms median, {small_q} queries")
        print(f"session page, 500 turns:            {large_ms:7.1f} ms median, {large_q} queries (125 critiques)")
        print(f"500-turn page minus baseline:       {large_ms - baseline_ms:7.1f} ms; bar {BAR_MS:.0f} ms")
        ok = large_q == small_q and large_ms < BAR_MS
        print("OK" if ok else "FAILED: queries grow with turns or the page is over the bar")
        return 0 if ok else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
