"""Where a trainee page's time goes: the dashboard, the session page and /api/v1/sessions/ for a trainee with
three 60-turn sessions (bench-load's trainee), each requested in-process through Django's test client.

Per page, twice: *built* (the kept pages dropped before each request, so the page is computed from the
database, as on the first view after a write) and *kept* (the trainee's page as the cache holds it,
supervision/pagecache.py). Prints server time (median of BENCH_PROFILE_REPEAT, default 20), queries and their
time, the self time of the built page by area (SQL driver, ORM, templates, charts, ...) and the top functions
by cumulative time under cProfile. Run: `make profile-pages` (a throw-away test database)."""

from __future__ import annotations

import contextlib
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
from django.test.utils import setup_test_environment  # noqa: E402

REPEAT = int(os.environ.get("BENCH_PROFILE_REPEAT", "20"))

# Where the self time of a request is spent, by the file a function lives in (first match wins).
AREAS = (
    ("SQL (psycopg)", ("psycopg",)),
    ("ORM", ("django/db/",)),
    ("templates", ("django/template/", "django/utils/html", "django/utils/safestring", "templatetags")),
    ("charts", ("supervision/feedback/charts.py", "supervision/presentation")),
    ("audit text", ("supervision/trajectory/",)),
    ("serializers (DRF)", ("rest_framework/",)),
    ("cache (Redis)", ("redis/", "django/core/cache", "portal/cache.py", "supervision/pagecache.py")),
    ("other project code", ("/supervision/", "/portal/", "/taxonomy/")),
)


def by_area(stats: pstats.Stats) -> list[tuple[str, float]]:
    totals: dict[str, float] = {}
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
        area = next((a for a, needles in AREAS if any(n in filename for n in needles)), "Django, Python and the rest")
        totals[area] = totals.get(area, 0.0) + tottime * 1000
    return sorted(totals.items(), key=lambda item: -item[1])


@contextlib.contextmanager
def counted_queries():
    """Queries and their time through the connection's execute wrapper (whatever DEBUG says)."""
    seen = {"n": 0, "ms": 0.0}

    def wrapper(execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            seen["n"] += 1
            seen["ms"] += (time.perf_counter() - start) * 1000

    with connection.execute_wrapper(wrapper):
        yield seen


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
        from supervision import pagecache
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
            for state in ("built", "kept") if name != "login" else ("",):
                built = state == "built"
                times = []
                for _ in range(REPEAT):
                    if built:
                        pagecache.forget_all()
                    start = time.perf_counter()
                    anonymous.get(path)
                    times.append((time.perf_counter() - start) * 1000)
                if built:
                    pagecache.forget_all()
                with counted_queries() as queries:
                    anonymous.get(path)
                if built:
                    pagecache.forget_all()
                profile = cProfile.Profile()
                profile.enable()
                anonymous.get(path)
                profile.disable()
                print(
                    f"=== {name} {state} {path}: median {statistics.median(times):.1f} ms, "
                    f"{queries['n']} queries, {queries['ms']:.1f} ms SQL"
                )
                if name == "login" or not built:
                    continue
                stats = pstats.Stats(profile)
                print("  self time by area: " + ", ".join(f"{a} {ms:.1f} ms" for a, ms in by_area(stats)))
                out = io.StringIO()
                stats.stream = out
                stats.sort_stats("cumulative").print_stats(r"supervision|portal|template/(loader|base)\.py:166", 18)
                print("\n".join(line for line in out.getvalue().splitlines()[8:] if line.strip()))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
