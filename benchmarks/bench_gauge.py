"""Review gauge over 1,000,000 turns vs one hand-written GROUP BY over the same data, in the same run.

    make bench-gauge            # or: DATABASE_URL=… .venv/bin/python benchmarks/bench_gauge.py [--turns N]

Works in a separate database (the DATABASE_URL name + "_bench", created and migrated when missing — never
the test database). The generated data is kept between runs: when the bench database already holds exactly
the sessions and turns asked for, generation is skipped (pass --regenerate to rebuild it); the gauge's own
output (snapshots, AI suggestions, dismissals) is always cleared first, so the first run measures inserts. The data is generated with INSERT … SELECT generate_series: sessions of
200 turns (counselor and client alternating, the four stages in order), about 1.3 technique labels per
counselor turn, a client state on 4 of 5 client turns, the client turns of one block of 10 turns in 7 without words
(so silent-close runs occur), and a critique
on one counselor turn in 100. Every session lies in the 30-day window, so the gauge covers every turn.

The baseline is the query a person would write for the central figure: technique labels per trainee
and category over the window. The gauge does that and every other figure, per session and trainee-wide,
and writes snapshots and suggestions. Target (DESIGN.md): gauge ≤ 3 × baseline.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DAY = datetime.date(2026, 11, 30)
TURNS_PER_SESSION = 200
TRAINEES = 100
# what changes between two nightly runs: one session in 50 (2 %) gets a critique and a changed closing act
CHANGED_EVERY = 50
NIGHTLY_CHANGE = "벤치: 야간 사이 추가된 논평"


def bench_url() -> str:
    url = os.environ.get("BENCH_DATABASE_URL") or ""
    if url:
        return url
    base = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/portal"
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_bench"))


def ensure_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--regenerate", action="store_true", help="rebuild the generated data even if present")
    args = parser.parse_args()

    url = bench_url()
    if urlsplit(url).path.lstrip("/").startswith("test_"):
        sys.exit(f"refusing to benchmark in a test database: {url}")
    ensure_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    sessions = max(1, args.turns // TURNS_PER_SESSION)
    start_day = DAY - datetime.timedelta(days=settings.GAUGE_WINDOW_DAYS - 1)

    with connection.cursor() as cur:
        cur.execute("SELECT count(*), count(*) FILTER (WHERE source = 'bench_synthetic') FROM sessions")
        cached = cur.fetchone() == (sessions, sessions)
        cur.execute("SELECT count(*) FROM turns")
        cached = cached and cur.fetchone()[0] == sessions * TURNS_PER_SESSION
    if cached and not args.regenerate:
        with connection.cursor() as cur:
            cur.execute("DELETE FROM supervisor_comment WHERE is_suggestion OR text = %s", [NIGHTLY_CHANGE])
            cur.execute("TRUNCATE gauge_snapshot, gauge_dismissed_suggestion, gauge_session_tally")
            cur.execute("VACUUM ANALYZE supervisor_comment")
        print(f"database {urlsplit(url).path.lstrip('/')}: reusing {sessions * TURNS_PER_SESSION:,} generated turns")
    else:
        generate(args, sessions, start_day)

    run_benchmark(args, start_day)


def generate(args, sessions: int, start_day: datetime.date) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection

    from taxonomy import catalogue

    print(
        f"database {connection.settings_dict['NAME']}: generating {sessions * TURNS_PER_SESSION:,} turns …", flush=True
    )
    t0 = time.perf_counter()
    User = get_user_model()
    User.objects.bulk_create([User(username=f"bench_trainee_{n:03d}") for n in range(TRAINEES)], ignore_conflicts=True)
    trainee_ids = list(User.objects.filter(username__startswith="bench_trainee_").values_list("id", flat=True))
    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE sessions, gauge_snapshot, gauge_dismissed_suggestion, gauge_session_tally, "
            "gauge_session_revision RESTART IDENTITY CASCADE"
        )
        cur.execute(
            "INSERT INTO sessions (code, title, trainee_id, held_on, source, taxonomy_version, created_at, updated_at) "
            "SELECT 'B' || g, 'bench', (%(trainees)s::int[])[1 + g %% %(n_trainees)s], "
            "%(day)s::date - (g %% %(window)s), 'bench_synthetic', %(version)s, now(), now() "
            "FROM generate_series(1, %(sessions)s) g",
            {
                "trainees": trainee_ids,
                "n_trainees": len(trainee_ids),
                "day": DAY,
                "window": settings.GAUGE_WINDOW_DAYS,
                "version": catalogue.TAXONOMY_VERSION,
                "sessions": sessions,
            },
        )
        cur.execute(
            "INSERT INTO turns (session_id, seq, utterance_id, speaker, stage, text, nonverbal, dialog_act) "
            "SELECT s.id, g, s.code || CASE WHEN g %% 2 = 0 THEN '-C-' ELSE '-K-' END || lpad((g / 2 + 1)::text, 3, '0'), "
            "CASE WHEN g %% 2 = 0 THEN %(counselor)s ELSE %(client)s END, "
            "(%(stages)s::text[])[1 + g * 4 / %(per)s], "
            "CASE WHEN g %% 2 = 1 AND (s.id + g / 10) %% 7 = 0 THEN '(침묵)' ELSE '합성 발화 ' || g END, "
            "'[]'::jsonb, "
            "CASE WHEN g %% 2 = 0 THEN NULL "
            "     WHEN (s.id + g / 10) %% 7 = 0 THEN CASE WHEN g %% 3 = 0 THEN NULL ELSE %(silence)s END "
            "     ELSE (%(acts)s::text[])[1 + (s.id * 13 + g) %% %(n_acts)s] END "
            "FROM sessions s CROSS JOIN generate_series(0, %(per)s - 1) g",
            {
                "counselor": catalogue.COUNSELOR,
                "client": catalogue.CLIENT,
                "stages": list(catalogue.STAGE_CODES),
                "per": TURNS_PER_SESSION,
                "silence": catalogue.SILENCE_ACT,
                "acts": [a for a in catalogue.DIALOG_ACT_CODES if a != catalogue.SILENCE_ACT],
                "n_acts": len(catalogue.DIALOG_ACT_CODES) - 1,
            },
        )
        cur.execute(
            "INSERT INTO turn_technique (turn_id, label_id) "
            "SELECT t.id, l.id FROM turns t "
            "JOIN LATERAL (SELECT DISTINCT unnest(CASE WHEN t.id %% 3 = 0 "
            "     THEN ARRAY[t.id %% 30, (t.id * 7 + 3) %% 30] ELSE ARRAY[t.id %% 30] END) AS k) pick ON true "
            "JOIN technique_label_def l ON l.position = (SELECT min(position) FROM technique_label_def) + pick.k "
            "WHERE t.speaker = %s",
            [catalogue.COUNSELOR],
        )
        cur.execute(
            "INSERT INTO turn_client_state (turn_id, label_id) "
            "SELECT t.id, l.id FROM turns t "
            "JOIN client_state_def l ON l.position = (SELECT min(position) FROM client_state_def) + t.id %% 20 "
            "WHERE t.speaker = %s AND t.id %% 5 <> 0",
            [catalogue.CLIENT],
        )
        cur.execute(
            "INSERT INTO supervisor_comment (turn_id, kind, text, intent_deviation, author, is_suggestion, "
            "suggestion_key, created_at, updated_at) "
            "SELECT t.id, 'critique', '합성 논평', jsonb_build_object('severity', (ARRAY['minor','moderate','major'])[1 + t.id %% 3], "
            "'dimension', 'bench', 'expected', 'reflection', 'actual', 'exploration'), 'supervisor', false, '', now(), now() "
            "FROM turns t WHERE t.speaker = %s AND t.id %% 100 = 0",
            [catalogue.COUNSELOR],
        )
        cur.execute("ANALYZE")
        cur.execute("SELECT count(*) FROM turns")
        (turns,) = cur.fetchone()
        cur.execute("SELECT count(*) FROM turn_technique")
        (links,) = cur.fetchone()
    print(f"generated {turns:,} turns, {links:,} technique labels in {time.perf_counter() - t0:.1f} s", flush=True)


def run_benchmark(args, start_day: datetime.date) -> None:
    from django.db import connection, transaction

    from supervision.gauge.services import gauge_compute, tallies_forget
    from taxonomy import catalogue

    baseline_sql = (
        "SELECT s.trainee_id, l.category, count(*) FROM turn_technique tt "
        "JOIN turns t ON t.id = tt.turn_id JOIN sessions s ON s.id = t.session_id "
        "JOIN technique_label_def l ON l.id = tt.label_id "
        "WHERE s.held_on BETWEEN %s AND %s AND t.speaker = %s GROUP BY s.trainee_id, l.category"
    )

    def baseline():
        # same memory budget as the gauge gives itself, so the comparison is like for like
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("SET LOCAL work_mem = '256MB'")
            cur.execute(baseline_sql, [start_day, DAY, catalogue.COUNSELOR])
            cur.fetchall()

    def change_sessions(night: int) -> int:
        """Between two nightly runs, what supervisors and imports do: one session in CHANGED_EVERY gets an
        accepted critique on a counselor turn and its last client turn's act changed."""
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(
                "INSERT INTO supervisor_comment (turn_id, kind, text, intent_deviation, author, is_suggestion, "
                "suggestion_key, created_at, updated_at) "
                "SELECT t.id, 'critique', %(text)s, '{\"severity\": \"minor\"}'::jsonb, 'supervisor', false, '', "
                "now(), now() FROM turns t WHERE t.seq = 2 AND t.session_id %% %(every)s = %(night)s",
                {"text": NIGHTLY_CHANGE, "every": CHANGED_EVERY, "night": night},
            )
            cur.execute(
                "UPDATE turns SET dialog_act = CASE WHEN dialog_act = %(ack)s THEN %(other)s ELSE %(ack)s END "
                "WHERE seq = %(last)s AND session_id %% %(every)s = %(night)s",
                {
                    "ack": "goodbye",
                    "other": "inform",
                    "last": TURNS_PER_SESSION - 1,
                    "every": CHANGED_EVERY,
                    "night": night,
                },
            )
            return cur.rowcount

    results: dict = {}

    def gauge(day=DAY):
        results["run"] = gauge_compute(day=day)

    def full():  # compute_gauges --full
        tallies_forget()
        gauge()

    # cold: no kept tally, snapshot or suggestion yet (what a first deployment or --full costs, plus inserts)
    first_gauge = timed(gauge)
    baseline_times = [timed(baseline) for _ in range(args.repeat)]
    gauge_times = [timed(gauge) for _ in range(args.repeat)]
    nightly_times, changed = [], 0
    for night in range(1, args.repeat + 1):
        changed = change_sessions(night)
        nightly_times.append(timed(lambda night=night: gauge(day=DAY + datetime.timedelta(days=night))))
    full_times = [timed(full) for _ in range(args.repeat)]
    base = statistics.median(baseline_times)
    run = results["run"]

    def line(name: str, times: list[float], what: str) -> None:
        median = statistics.median(times)
        runs = ", ".join(f"{t:.3f}" for t in times)
        print(f"{name:<34}: median {median:.3f} s = {median / base:5.2f}x GROUP BY  (runs: {runs})  {what}")

    print(f"gauge summary: {run.summary()}  suggestions: {run.suggestions:,}")
    print(
        f"{'hand-written GROUP BY':<34}: median {base:.3f} s            (runs: {', '.join(f'{t:.3f}' for t in baseline_times)})"
    )
    line("gauge, first run (cold)", [first_gauge], "every session aggregated; every snapshot and suggestion inserted")
    line(
        "gauge, next night (target <= 3x)",
        nightly_times,
        f"{changed} sessions changed since the last run; a new day's snapshots inserted",
    )
    line("gauge, same-day re-run", gauge_times, "nothing changed since the last run")
    line("gauge, --full re-run", full_times, "every session aggregated again; only changed rows written")


if __name__ == "__main__":
    main()
