"""Where a trainee page's time goes: the dashboard, the session page and /api/v1/sessions/ for a trainee with
three 60-turn sessions (bench-load's trainee), each requested in-process through Django's test client.
Prints, per page: server time (median of BENCH_PROFILE_REPEAT, default 20), queries and their time, and the
top functions by cumulative time under cProfile. Run: `make profile-pages` (a throw-away test database)."""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

REPEAT = int(os.environ.get("BENCH_PROFILE_REPEAT", "20"))


def main() -> int:
    from django.conf import settings

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    settings.SECURE_SSL_REDIRECT = False
    settings.DEBUG_PROPAGATE_EXCEPTIONS = True
    # static files from the source folders: the hashed manifest is production's (bench-load measures that)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        from supervision.feedback.tests.factories import make_session
        from supervision.gauge.services import gauge_compute
        from supervision.people.services import portal_user_create_or_update
        from supervision.roles import Role
        from supervision.trajectory.services import trajectory_nightly
        from taxonomy.seeding import sync_catalogue

        sync_catalogue()
        portal_user_create_or_update(username="prof_supervisor", role=Role.SUPERVISOR)
        trainee = portal_user_create_or_update(
            username="prof_trainee", role=Role.TRAINEE, supervisor_username="prof_supervisor"
        )
        sessions = [
            make_session(f"PROF_{k}", 60, trainee="prof_trainee", held_on=f"2026-11-{k + 1:02d}") for k in range(3)
        ]
        day = django.utils.timezone.localdate()
        gauge_compute(day=day)
        trajectory_nightly(day=day)
        client = Client()
        client.force_login(trainee)
        pages = {
            "login": "/accounts/login/",
            "dashboard": "/feedback/",
            "session": f"/feedback/sessions/{sessions[-1].pk}/",
            "api sessions": "/api/v1/sessions/",
        }
        for name, path in pages.items():
            anonymous = Client() if name == "login" else client
            assert anonymous.get(path).status_code == 200, path
            times = []
            for _ in range(REPEAT):
                start = time.perf_counter()
                anonymous.get(path)
                times.append((time.perf_counter() - start) * 1000)
            with CaptureQueriesContext(connection) as queries:
                anonymous.get(path)
            sql_ms = sum(float(q["time"]) for q in queries.captured_queries) * 1000
            profile = cProfile.Profile()
            profile.enable()
            anonymous.get(path)
            profile.disable()
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
            print(
                f"=== {name} {path}: median {statistics.median(times):.1f} ms, {len(queries)} queries, {sql_ms:.1f} ms SQL"
            )
            print("\n".join(line for line in out.getvalue().splitlines()[6:40] if line.strip()))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
