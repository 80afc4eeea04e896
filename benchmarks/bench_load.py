"""Load on a production-like server: gunicorn (2 sync workers, DJANGO_DEBUG=0, static files collected) on this
machine, 8 and then 32 concurrent logged-in trainees asking for `/feedback/`, then their own session page, then
`/api/v1/sessions/` (one page at a time, each client its own trainee's page), each page and level for
BENCH_LOAD_SECONDS (default 60) in BENCH_LOAD_ROUNDS rounds (default 6) of log-in page, dashboard, session page,
API. Baseline in the same run, rounds and concurrency: the log-in page (one template, no database work). Each page's cost is printed as the log-in page's req/s over the page's: the aim
is at most 3x. Gunicorn and the private Redis listen on free loopback ports (nothing fixed to collide with).

Run with `make bench-load` (PostgreSQL from DATABASE_URL: a throw-away test database is created and dropped;
a private redis-server on a free port serves the cache and broker). Loopback only; every client loop stops
by itself at its deadline or after BENCH_LOAD_MAX_REQUESTS requests, whichever comes first.
"""

from __future__ import annotations

import http.client
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

import django

django.setup()

from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from portal.testing import (  # noqa: E402
    PRODUCTION_SECRET_KEY,
    Gunicorn,
    PrivateRedis,
    collectstatic,
    production_env,
)

SECONDS = float(os.environ.get("BENCH_LOAD_SECONDS", "60"))
BASELINE_SECONDS = float(os.environ.get("BENCH_LOAD_BASELINE_SECONDS", str(SECONDS)))
MAX_REQUESTS = int(os.environ.get("BENCH_LOAD_MAX_REQUESTS", "200000"))
LEVELS = (8, 32)
# Each trainee page is measured on its own, each client asking for its own trainee's page back to back.
PAGES = (("dashboard /feedback/", 0), ("session page", 1), ("/api/v1/sessions/", 2))
AIM = 3.0
ROUNDS = int(os.environ.get("BENCH_LOAD_ROUNDS", "6"))
TRAINEES = 32
WORKERS = 2


def logged_in_cookie(user) -> str:
    """A session as the log-in form leaves it (the password hasher's second per log-in is not measured)."""
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "portal.lockout.LockoutResettingModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return f"sessionid={store.session_key}"


def client_loop(server: Gunicorn, paths: list[str], cookie: str, deadline: float, budget: int, out: list) -> None:
    headers = {"Host": "127.0.0.1", "X-Forwarded-Proto": "https", "Cookie": cookie}
    n = 0
    while time.monotonic() < deadline and n < budget:
        path = paths[n % len(paths)]
        n += 1
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            conn.close()
            ok = response.status == 200
        except OSError:
            ok = False
        out.append(((time.perf_counter() - start) * 1000, ok))


def run_slice(server: Gunicorn, clients: list[tuple[list[str], str]], seconds: float) -> tuple[list, float]:
    """(samples, seconds taken) of ``clients`` browsing for ``seconds``."""
    results: list[list] = [[] for _ in clients]
    deadline = time.monotonic() + seconds
    budget = max(1, MAX_REQUESTS // len(clients))
    threads = [
        threading.Thread(target=client_loop, args=(server, paths, cookie, deadline, budget, results[i]), daemon=True)
        for i, (paths, cookie) in enumerate(clients)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    return [s for r in results for s in r], time.monotonic() - started


def summary(samples: list, elapsed: float) -> dict:
    times = sorted(ms for ms, _ in samples)
    q = statistics.quantiles(times, n=100, method="inclusive") if len(times) >= 2 else [times[0]] * 99
    return {
        "requests": len(samples),
        "rps": len(samples) / elapsed,
        "p50": q[49],
        "p95": q[94],
        "p99": q[98],
        "errors": sum(1 for _, ok in samples if not ok),
    }


def row(label: str, clients: int, r: dict) -> str:
    return (
        f"{label:<34} {clients:>3} {r['requests']:>8} {r['rps']:>8.1f} {r['p50']:>8.1f} {r['p95']:>8.1f} "
        f"{r['p99']:>8.1f} {r['errors']:>6}"
    )


def main() -> int:
    from django.conf import settings

    setup_test_environment()
    # Sessions are signed with the key of the server that reads them.
    settings.SECRET_KEY = PRODUCTION_SECRET_KEY
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    redis_server = PrivateRedis().start()
    server = None
    try:
        from supervision.feedback.tests.factories import make_session
        from supervision.gauge.services import gauge_compute
        from supervision.people.services import portal_user_create_or_update
        from supervision.roles import Role
        from taxonomy.seeding import sync_catalogue

        sync_catalogue()
        portal_user_create_or_update(username="bench_supervisor", role=Role.SUPERVISOR)
        trainees = []
        for i in range(TRAINEES):
            name = f"bench_trainee_{i:02d}"
            trainee = portal_user_create_or_update(
                username=name, role=Role.TRAINEE, supervisor_username="bench_supervisor"
            )
            trainee.set_password(f"bench-pass-{i:02d}-2026")
            trainee.save()
            sessions = [
                make_session(f"LOAD_{i:02d}_{k}", 60, trainee=name, held_on=f"2026-11-{k + 1:02d}") for k in range(3)
            ]
            trainees.append((trainee, sessions[-1].pk))
        gauge_compute(day=django.utils.timezone.localdate())
        connection.close()

        db = connection.settings_dict
        database_url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        static_root = Path(tempfile.mkdtemp(prefix="bench-load-")) / "static"
        collectstatic(static_root)
        env = production_env(
            database_url=database_url,
            redis_url=redis_server.url,
            static_root=static_root,
            DJANGO_CONN_MAX_AGE="60",
        )
        server = Gunicorn(env=env, workers=WORKERS).start()
        browsing = [
            (["/feedback/", f"/feedback/sessions/{session_pk}/", "/api/v1/sessions/"], logged_in_cookie(trainee))
            for trainee, session_pk in trainees
        ]
        single = {}
        for paths, cookie in browsing[:1]:
            for path in ["/accounts/login/", *paths]:
                for _ in range(2):  # warm, then timed
                    start = time.perf_counter()
                    answer = server.request("GET", path, headers={"Cookie": cookie} if path in paths else {})
                    single[path.split("/")[1] + ("/sessions" if "sessions/" in path else "")] = (
                        time.perf_counter() - start
                    ) * 1000
                assert answer.status == 200, (path, answer.status, answer.headers.get("location"), server.log()[-2000:])

        # Every trainee's first view of each page builds it from the database (and keeps it, see
        # supervision/pagecache.py); timed here one at a time, so the levels below measure the pages as trainees
        # meet them when they come back (a write builds the page once again).
        first: dict[str, list[float]] = {page: [] for page, _ in PAGES}
        for paths, cookie in browsing[1:]:
            for page, pick in PAGES:
                start = time.perf_counter()
                answer = server.request("GET", paths[pick], headers={"Cookie": cookie})
                first[page].append((time.perf_counter() - start) * 1000)
                assert answer.status == 200, (paths[pick], answer.status)
        print(
            f"gunicorn portal.wsgi:application, {WORKERS} sync workers, DJANGO_DEBUG=0, on 127.0.0.1:{server.port}; "
            f"{os.cpu_count()} cores; load before the run {os.getloadavg()[0]:.2f}"
        )
        print(f"{TRAINEES} trainees with 3 sessions of 60 turns each; browsing {SECONDS:g} s per level")
        print("one request at a time, warm: " + ", ".join(f"{k} {v:.0f} ms" for k, v in single.items()))
        print(
            f"first views (built from the database), one at a time, median of {TRAINEES - 1} trainees: "
            + ", ".join(f"{page} {statistics.median(times):.0f} ms" for page, times in first.items())
        )
        print(
            f"{'':<34} {'cl':>3} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>6}"
            f" {'cost':>6}"
        )
        failed = False
        ratios = {}
        for clients in LEVELS:
            # In ROUNDS rounds of log-in page, dashboard, session page, API, so that the load other work puts on
            # the machine falls on the baseline and the pages alike.
            runs = {"baseline: log-in page": [(["/accounts/login/"], "")] * clients}
            runs |= {
                f"trainees: {page}": [([p[pick]], cookie) for p, cookie in browsing[:clients]] for page, pick in PAGES
            }
            measured = {label: ([], 0.0) for label in runs}
            for _ in range(ROUNDS):
                for label, browsers in runs.items():
                    seconds = (BASELINE_SECONDS if label.startswith("baseline") else SECONDS) / ROUNDS
                    samples, elapsed = run_slice(server, browsers, seconds)
                    measured[label] = (measured[label][0] + samples, measured[label][1] + elapsed)
            baseline = summary(*measured.pop("baseline: log-in page"))
            print(row("baseline: log-in page", clients, baseline) + f" {1:>5.2f}x")
            failed |= baseline["errors"] > 0
            for label, (samples, elapsed) in measured.items():
                result = summary(samples, elapsed)
                # The page's cost in log-in pages: how many log-in pages the server answers in the time of one.
                ratios[label, clients] = baseline["rps"] / result["rps"] if result["rps"] else float("inf")
                print(row(label, clients, result) + f" {ratios[label, clients]:>5.2f}x")
                failed |= result["errors"] > 0
        worst = max(ratios.values())
        print(
            f"highest cost {worst:.2f}x the log-in page (aim: at most {AIM:g}x): "
            + ("met" if worst <= AIM else "NOT met")
        )
        print("FAILED: errors under load" if failed else "OK: no errors")
        return 1 if failed else 0
    finally:
        if server is not None:
            server.stop()
        redis_server.kill()
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
