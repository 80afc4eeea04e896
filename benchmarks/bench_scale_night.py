"""The whole nightly job at scale, step by step, against one GROUP BY over the turns; then the audit command.

    make bench-scale-night
    BENCH_DATABASE_URL=postgres://…/portal_bench_x .venv/bin/python benchmarks/bench_scale_night.py \
        [--sessions 1000] [--turns-per-session 500] [--changed 0.02] [--windows 6000] [--repeat 3]

In its own database (DATABASE_URL, which the Makefile sets from BENCH_DATABASE_URL; never a test_ database),
rebuilt on every run: 1,000 sessions of 500 turns (500,000) with realistic rows — synthetic Korean text of
about 60 characters (fragments of the hand-written window files in benchmarks/trajectory/), 0.75 technique
links and 0.35 client-state links per turn, an accepted cross-category critique on one counselor turn in 100
— loaded with COPY. Then, against the baseline, one hand-written GROUP BY over the turns (technique labels
per trainee and category, median of --repeat, measured in the same run):

0. every session suggested, as its import would have (timed for the record: the work of the night after a
   retrained model's deploy), not part of any night;
1. the first night (nothing derived yet: every session gauged, tagged, audited, its safety suggestions made)
   through real Celery workers on REDIS_URL, the way production runs it: ``supervision.nightly_review`` sent
   by name and waited for, split into chunk tasks (supervision/nightly.py). Once with one worker process,
   then, every derived row deleted, with two (two solo workers, as on two machines); both side by side with
   the ratio. Aims (issue 35): two workers ≤ 0.6× one; the first night ≤ 150× the GROUP BY.
2. a night with nothing changed, each step of ``settings.NIGHTLY_REVIEW_STEPS`` called here and timed;
3. an ordinary night after 2 % of the sessions were re-imported with other labels (their technique and
   client-state links replaced, one text changed per session). As after a real import, their audits are
   queued for a worker that is running (production's worker does them long before 03:00), and the queue is
   drained before the night is timed, step by step here. Aim: ≤ 3× the GROUP BY.

Then where the trajectory audit's time goes (reading, engine, storing; one process, 125 sessions). Last,
``manage.py audit_trajectories --input`` on --windows ten-turn windows cut from the stored sessions, net of
start-up (the same command on 10 windows): aim ≥ 2,000 windows/s.

Needs REDIS_URL (the workers' broker; use a Redis database of the bench's own: the queue is purged).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DAY = datetime.date(2026, 11, 30)
TRAINEES = 50
WINDOWS = ROOT / "benchmarks" / "trajectory"
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def fragments() -> dict[str, list[str]]:
    """Korean utterances of the hand-written window files, by speaker (all synthetic)."""
    pools: dict[str, list[str]] = {"counselor": [], "client": []}
    for path in sorted(WINDOWS.glob("development-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            for turn in json.loads(line)["turns"]:
                text = (turn.get("text") or "").strip()
                if (
                    text
                    and turn.get("speaker") in pools
                    and len(_HANGUL.findall(text)) >= 0.5 * len(text.replace(" ", ""))
                ):
                    pools[turn["speaker"]].append(text)
    return pools


def text_of(rng: random.Random, pool: list[str]) -> str:
    """About 60 characters: fragments joined until the text is long enough."""
    out = rng.choice(pool)
    while len(out) < 55:
        out += " " + rng.choice(pool)
    return out[:70]


def build(args) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from taxonomy import catalogue

    t0 = time.perf_counter()
    rng = random.Random(19)
    pools = fragments()
    User = get_user_model()
    User.objects.bulk_create([User(username=f"night_trainee_{n:03d}") for n in range(TRAINEES)], ignore_conflicts=True)
    trainee_ids = list(User.objects.filter(username__startswith="night_trainee_").values_list("id", flat=True))
    per = args.turns_per_session
    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE sessions, gauge_snapshot, gauge_dismissed_suggestion, gauge_session_tally, "
            "gauge_session_revision, trainee_tag RESTART IDENTITY CASCADE"
        )
        cur.execute(
            "INSERT INTO sessions (code, title, trainee_id, held_on, source, taxonomy_version, created_at, updated_at) "
            "SELECT 'N' || g, 'bench', (%(trainees)s::int[])[1 + g %% %(n)s], %(day)s::date - (g %% 30), "
            "'bench_synthetic', %(version)s, now(), now() FROM generate_series(1, %(sessions)s) g",
            {"trainees": trainee_ids, "n": len(trainee_ids), "day": DAY, "version": catalogue.TAXONOMY_VERSION,
             "sessions": args.sessions},
        )  # fmt: skip
        cur.execute("SELECT id, code FROM sessions ORDER BY id")
        sessions = cur.fetchall()
        stages = list(catalogue.STAGE_CODES)
        acts = [a for a in catalogue.DIALOG_ACT_CODES if a != catalogue.SILENCE_ACT]
        with cur.cursor.copy(
            "COPY turns (session_id, seq, utterance_id, speaker, stage, text, nonverbal, dialog_act) FROM STDIN"
        ) as copy:
            for session_id, code in sessions:
                for seq in range(per):
                    counselor = seq % 2 == 0
                    speaker = catalogue.COUNSELOR if counselor else catalogue.CLIENT
                    uid = f"{code}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}"
                    text = text_of(rng, pools["counselor" if counselor else "client"])
                    copy.write_row(
                        (session_id, seq, uid, speaker, stages[seq * 4 // per], text, "[]", rng.choice(acts))
                    )
        link_labels(cur, "")
        cur.execute(
            "INSERT INTO supervisor_comment (turn_id, kind, text, intent_deviation, author, is_suggestion, "
            "suggestion_key, created_at, updated_at) "
            "SELECT t.id, 'critique', '합성 논평', jsonb_build_object('severity', (ARRAY['minor','moderate','major'])[1 + t.id %% 3], "
            "'dimension', 'bench', 'expected', 'cognitive_restructuring', 'actual', 'validation'), 'supervisor', false, '', "
            "now(), now() FROM turns t WHERE t.speaker = %s AND (t.id / 2) %% 100 = 0",
            [catalogue.COUNSELOR],
        )  # fmt: skip
        cur.execute("ANALYZE")
        cur.execute(
            "SELECT count(*), (SELECT count(*) FROM turn_technique), (SELECT count(*) FROM turn_client_state), "
            "avg(char_length(text)) FROM turns"
        )
        turns, techniques, states, chars = cur.fetchone()
    print(
        f"built {turns:,} turns in {args.sessions:,} sessions: {techniques / turns:.2f} technique and "
        f"{states / turns:.2f} client-state links per turn, {chars:.0f} characters per text "
        f"({time.perf_counter() - t0:.1f} s, turns by COPY)",
        flush=True,
    )


def link_labels(cur, where: str, shift: int = 0, ids: list[int] | None = None) -> None:
    """0.75 technique links per turn (1.5 per counselor turn) and 0.35 client-state links (0.7 per client
    turn), picked from the turn id (``shift`` picks other labels: a re-import with other labels)."""
    from taxonomy import catalogue

    cur.execute(
        "INSERT INTO turn_technique (turn_id, label_id) "
        "SELECT t.id, l.id FROM turns t "
        "JOIN LATERAL (SELECT DISTINCT unnest(CASE WHEN (t.id / 2) %% 2 = 0 "
        "     THEN ARRAY[(t.id + %(shift)s) %% 30, (t.id * 7 + 3 + %(shift)s) %% 30] ELSE ARRAY[(t.id + %(shift)s) %% 30] END) AS k) pick ON true "
        "JOIN technique_label_def l ON l.position = (SELECT min(position) FROM technique_label_def) + pick.k "
        f"WHERE t.speaker = %(counselor)s {where}",
        {"shift": shift, "counselor": catalogue.COUNSELOR, "ids": ids},
    )  # fmt: skip
    cur.execute(
        "INSERT INTO turn_client_state (turn_id, label_id) "
        "SELECT t.id, l.id FROM turns t "
        "JOIN client_state_def l ON l.position = (SELECT min(position) FROM client_state_def) + (t.id + %(shift)s) %% 20 "
        f"WHERE t.speaker = %(client)s AND (t.id / 2) %% 10 < 7 {where}",
        {"shift": shift, "client": catalogue.CLIENT, "ids": ids},
    )  # fmt: skip


def reimport(fraction: float) -> list[int]:
    """What re-importing a fraction of the sessions with other labels does to the rows: their technique and
    client-state links replaced, one client text changed."""
    from django.db import connection, transaction

    from supervision.models import Session

    ids = list(Session.objects.order_by("id").values_list("id", flat=True))
    ids = ids[:: max(1, round(1 / fraction))]
    where = "AND t.session_id = ANY(%(ids)s)"
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"DELETE FROM turn_technique tt USING turns t WHERE t.id = tt.turn_id {where}", {"ids": ids})
        cur.execute(f"DELETE FROM turn_client_state tc USING turns t WHERE t.id = tc.turn_id {where}", {"ids": ids})
        link_labels(cur, where, shift=7, ids=ids)
        cur.execute(
            f"UPDATE turns t SET text = '요즘은 다 소용없다는 생각만 들어요. 제가 뭘 해도 달라지지 않아요.' WHERE t.seq = 3 {where}",
            {"ids": ids},
        )
    return ids


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns-per-session", type=int, default=500)
    parser.add_argument("--changed", type=float, default=0.02, help="fraction of sessions re-imported")
    parser.add_argument("--windows", type=int, default=6000, help="ten-turn windows for the audit command")
    parser.add_argument("--repeat", type=int, default=3, help="baseline runs (median)")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL") or os.environ.get("BENCH_DATABASE_URL") or ""
    if not url or urlsplit(url).path.lstrip("/").startswith("test_"):
        sys.exit(f"set DATABASE_URL (or BENCH_DATABASE_URL) to a bench database, not {url!r}")
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL: the nights run through real Celery workers (a Redis database of the bench's own)")
    os.environ["DATABASE_URL"] = url
    from benchmarks.bench_db import use_bench_database

    use_bench_database()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils.module_loading import import_string

    from taxonomy import catalogue

    call_command("migrate", verbosity=0)
    build(args)
    # Every import suggests its turns with the model in use, so in production the nights find every session
    # suggested; only the night after a retrained model's deploy suggests them all (the first step's work,
    # timed here for the record, not part of any night below; the audits it queues are purged).
    from supervision.suggesting.nightly import suggestions_nightly

    started = time.perf_counter()
    done = suggestions_nightly(day=DAY)
    print(
        f"suggested {done['turns']:,} turns of {done['sessions']:,} sessions with {done['model_version']}, as their "
        f"imports would have: {time.perf_counter() - started:.1f} s (a newly deployed version's first night)",
        flush=True,
    )

    def baseline() -> float:
        start = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("SET LOCAL work_mem = '256MB'")
            cur.execute(
                "SELECT s.trainee_id, l.category, count(*) FROM turn_technique tt JOIN turns t ON t.id = tt.turn_id "
                "JOIN sessions s ON s.id = t.session_id JOIN technique_label_def l ON l.id = tt.label_id "
                "WHERE t.speaker = %s GROUP BY s.trainee_id, l.category",
                [catalogue.COUNSELOR],
            )
            cur.fetchall()
        return time.perf_counter() - start

    def measured_baseline(when: str) -> float:
        # measured again right before each night: on a machine shared with other jobs the load moves, and
        # a ratio to a GROUP BY timed minutes earlier would measure the load as much as the night
        base = statistics.median(baseline() for _ in range(args.repeat))
        print(f"baseline {when}: one GROUP BY over the turns (technique labels per trainee and category): {base:.3f} s")
        return base

    measured_baseline("after the build")

    def night(name: str, day: datetime.date, aim: float | None) -> dict[str, float]:
        base = measured_baseline("before this night")
        total = 0.0
        spent_by_step = {}
        print(f"== {name} ({day})")
        for dotted in settings.NIGHTLY_REVIEW_STEPS:
            start = time.perf_counter()
            result = import_string(dotted)(day=day)
            spent = time.perf_counter() - start
            total += spent
            spent_by_step[dotted] = spent
            summary = result.summary() if hasattr(result, "summary") else result
            shown = {k: v for k, v in (summary.items() if isinstance(summary, dict) else []) if k != "day"}
            print(f"  {dotted.rsplit('.', 1)[-1]:<24} {spent:8.2f} s = {spent / base:7.1f}x   {shown}")
        verdict = "" if aim is None else f"  (aim <= {aim:.0f}x: {'met' if total / base <= aim else 'NOT met'})"
        print(f"  {'whole night':<24} {total:8.2f} s = {total / base:7.1f}x GROUP BY{verdict}\n", flush=True)
        return spent_by_step

    first_nights(args, measured_baseline)
    night("a night with nothing changed", DAY + datetime.timedelta(days=1), 3)
    with Workers(1) as workers:
        changed, drained = reimport_and_drain(args.changed)
        print(
            f"re-imported {len(changed)} sessions ({args.changed:.0%}) with other labels; their audits, queued as an "
            f"import queues them, done by the running worker before the night ({drained:.2f} s, not counted)"
        )
        night("ordinary night (a worker running, its queue drained)", DAY + datetime.timedelta(days=2), 3)
        workers.check()
    trajectory_anatomy(args)
    audit_command(args)


class Workers:
    """``count`` solo Celery workers (``celery -A portal worker``, as on as many machines) on REDIS_URL against
    the bench database, started before any timing (each is up once it logs "ready.")."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.started: list = []
        self.logs = Path(tempfile.mkdtemp(prefix="bench-night-workers-"))

    def __enter__(self) -> Workers:
        from portal.celery import app
        from portal.testing import Worker

        app.control.purge()
        env = {**os.environ, "DJANGO_CONN_MAX_AGE": "0"}
        for n in range(self.count):
            self.started.append(Worker(env=env).start(self.logs / f"worker-{n}.log"))
        return self

    def chunks_by_worker(self) -> list[int]:
        pattern = r"Task supervision\.nightly_chunk\[[^\]]+\] succeeded"
        return [len(re.findall(pattern, worker.log())) for worker in self.started]

    def check(self) -> None:
        for worker in self.started:
            failed = [line for line in worker.log().splitlines() if " ERROR/" in line]
            assert not failed, failed[:3]

    def __exit__(self, kind, *exc) -> None:
        for worker in self.started:
            worker.stop()
        if kind is None:  # the logs are kept only when something went wrong
            shutil.rmtree(self.logs, ignore_errors=True)


def forget_the_night() -> None:
    """Every row a night derives, gone: the next night is a first night again."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE gauge_snapshot, gauge_session_tally, gauge_dismissed_suggestion, trainee_tag, "
            "trajectory_audit, trajectory_audited_revision, safety_suggested_revision, tags_fed_session CASCADE"
        )
        cur.execute("DELETE FROM supervisor_comment WHERE is_suggestion")
        cur.execute("VACUUM ANALYZE")


def first_nights(args, measured_baseline) -> None:
    """The first night through one worker, then through two; both from nothing derived, each against the
    GROUP BY measured right before it (the workers started and idle)."""
    from portal.celery import app
    from supervision.gauge.tasks import TASK_NAME

    runs = []
    for count in (1, 2):
        forget_the_night()
        with Workers(count) as workers:
            base = measured_baseline(f"before the first night through {count} worker(s)")
            start = time.perf_counter()
            result = app.send_task(TASK_NAME, kwargs={"day": DAY.isoformat()}).get(timeout=4 * 3600)
            spent = time.perf_counter() - start
            workers.check()
            assert "skipped" not in result, result
            runs.append((count, spent, result, workers.chunks_by_worker(), base))
    print(f"== first night: nothing derived yet ({DAY}), through real Celery workers (nightly_review sent, waited for)")
    for count, spent, _result, chunks, base in runs:
        print(
            f"  {count} worker{'s' if count > 1 else ' '}  {spent:8.2f} s = {spent / base:7.1f}x GROUP BY"
            f"  (aim <= 150x: {'met' if spent / base <= 150 else 'NOT met'});  chunk tasks per worker {chunks}"
        )
    (_, one, result, _, _), (_, two, _, _, _) = runs
    print(f"  two workers / one worker: {two / one:.2f}  (aim <= 0.60: {'met' if two / one <= 0.6 else 'NOT met'})")
    print(f"  per-session parts done in chunks: {result['chunks']}")
    for dotted, summary in result["steps"].items():
        shown = {k: v for k, v in (summary.items() if isinstance(summary, dict) else []) if k != "day"}
        print(f"  then {dotted.rsplit('.', 1)[-1]:<24} {shown}")
    print(
        f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"NIGHTLY_CHUNK_SESSIONS={os.environ.get('NIGHTLY_CHUNK_SESSIONS', 'default')}\n",
        flush=True,
    )


def reimport_and_drain(fraction: float) -> tuple[list[int], float]:
    """``reimport``, then the audits an import queues for its sessions (``queue_session_audits``), waited
    for until the worker has done them all."""
    from supervision.trajectory.services import sessions_to_audit
    from supervision.trajectory.tasks import queue_session_audits

    ids = reimport(fraction)
    start = time.perf_counter()
    queue_session_audits(ids)
    deadline = time.monotonic() + 600
    while sessions_to_audit():
        assert time.monotonic() < deadline, "the worker did not drain the queued audits"
        time.sleep(0.05)
    return ids, time.perf_counter() - start


def trajectory_anatomy(args) -> None:
    """Where the trajectory step's time goes, in one process on one batch of sessions (best of 3): reading the
    turns, the engine, storing the rows."""
    from django.utils import timezone

    from supervision.models import Session
    from supervision.trajectory import services
    from supervision.trajectory.engine.resources import engine_version

    sample = min(args.sessions, 125)
    ids = list(Session.objects.order_by("id").values_list("id", flat=True)[:sample])
    version = engine_version()
    best = {"read": float("inf"), "engine": float("inf"), "store": float("inf")}
    for _ in range(3):
        start = time.perf_counter()
        revisions, sessions = services._read_batch(ids)
        read_done = time.perf_counter()
        batch = services.audit_rows(sessions, version, timezone.now())
        engine_done = time.perf_counter()
        services._store(batch, revisions, version)
        store_done = time.perf_counter()
        for part, spent in (
            ("read", read_done - start),
            ("engine", engine_done - read_done),
            ("store", store_done - engine_done),
        ):
            best[part] = min(best[part], spent)
    whole = sum(best.values())
    print(f"== the trajectory step in one process, {sample} sessions ({len(batch.rows):,} windows), best of 3")
    for part, spent in best.items():
        print(f"  {part:<8} {spent:6.2f} s  {spent / whole:4.0%}")
    print(flush=True)


def write_windows(path: Path, count: int) -> int:
    """``count`` ten-turn windows (CONTRACT §4 input) cut from the stored sessions, §2 fields."""
    from supervision.models import Session
    from supervision.trajectory.services import _read_batch

    written = 0
    with path.open("w", encoding="utf-8") as out:
        for session_id in Session.objects.order_by("id").values_list("id", flat=True).iterator():
            _revisions, sessions = _read_batch([session_id])
            turns = sessions[0][1]
            for start in range(0, len(turns) - 9, 10):
                window = [
                    {"seq": k, "utterance_id": uid, "speaker": speaker, "text": text, "nonverbal": nonverbal,
                     "techniques": techniques, "client_states": states}
                    for k, (_seq, uid, speaker, text, nonverbal, techniques, states) in enumerate(turns[start : start + 10])
                ]  # fmt: skip
                out.write(json.dumps({"window_id": f"W{written:05d}", "turns": window}, ensure_ascii=False) + "\n")
                written += 1
                if written == count:
                    return written
    return written


def audit_command(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full, small = Path(tmp) / "windows.jsonl", Path(tmp) / "ten.jsonl"
        windows = write_windows(full, args.windows)
        with full.open(encoding="utf-8") as handle:
            small.write_text("".join(next(handle) for _ in range(10)), encoding="utf-8")

        def run(path: Path) -> float:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "manage.py", "audit_trajectories", "--input", str(path)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                check=True,
            )
            spent = time.perf_counter() - start
            assert len(done.stdout.splitlines()) == (10 if path == small else windows)
            return spent

        startup = min(run(small) for _ in range(2))
        whole = min(run(full) for _ in range(2))
    net = whole - startup
    rate = windows / net
    print(f"== audit_trajectories --input, {windows:,} ten-turn windows (best of 2)")
    print(f"  start-up (10 windows) {startup:.2f} s, whole {whole:.2f} s, net {net:.2f} s")
    print(
        f"  {rate:,.0f} windows/s net of start-up (aim >= 2,000: {'met' if rate >= 2000 else 'NOT met'}); "
        f"TRAJECTORY_AUDIT_PROCESSES={os.environ.get('TRAJECTORY_AUDIT_PROCESSES', 'default: cores')}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
