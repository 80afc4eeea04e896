"""Import benchmark: a 100,000-turn csv and xlsx through the real importer, against a raw COPY; the csv also
without the label suggester, for its cost (CONTRACT §9: at most 25 % slower with suggestions).

    make bench-import            # DATABASE_URL defaults to a separate bench database, never the test one
    python benchmarks/bench_import.py --turns 100000
    make bench-import BENCH_ARGS="--turns 20000 --rounds 5"   # the suggester's cost, 5 rounds in turn

Prints, per format: seconds, turns/s, the ratio to a raw PostgreSQL COPY of the same rows (turns and
label links and comments, measured in the same run), the importer's CPU time and the peak RSS of the
process. Synthetic data only. On a shared machine compare the CPU time too: wall time follows the load.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

from supervision.importing.columns import FIELD_NAMES

TURNS_PER_SESSION = 200
HEADER = list(FIELD_NAMES)  # CONTRACT §3, in the template's order
# Labels as people type them: codes, Korean names, surface labels, spaces and case varied.
TECHNIQUE_CELLS = [
    "reflection",
    "공감",
    "정서 반영; 탐색질문",
    "Validation",
    "동의확인, 동기수준 확인",
    "reflection\nempathy",
]
STATE_CELLS = ["affect_contact", "방어", "", "involuntary"]
STAGES = ["라포", "탐색", "개입", "정리"]


def synthetic_rows(turns: int, prefix: str):
    """Yields §3 rows (English keys); sessions of 200 turns, about one turn in 20 carries a rationale."""
    for n in range(turns):
        session = f"{prefix}{n // TURNS_PER_SESSION:05d}"
        seq = n % TURNS_PER_SESSION
        counselor = seq % 2 == 0
        yield [
            session,
            f"{session}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}",
            seq,
            "상담자" if counselor else "내담자",
            STAGES[seq * 4 // TURNS_PER_SESSION],
            f"합성 발화 {n}: 요즘 마음이 어떤지 조금 더 이야기해 볼까요? 그때 어떤 느낌이 드셨어요?",
            TECHNIQUE_CELLS[n % len(TECHNIQUE_CELLS)] if counselor else "",
            "" if counselor else STATE_CELLS[n % len(STATE_CELLS)],
            "(끄덕임)" if n % 7 == 0 else "",
            "inform" if n % 3 else "question",
            "bench_synthetic",
            "내담자의 정서를 정확히 되돌려 줌" if n % 20 == 0 else "",
            "",
            "",
            "2026-11-02",
        ]


def write_csv(path: Path, turns: int, prefix: str) -> None:
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(HEADER)
        writer.writerows(synthetic_rows(turns, prefix))


def write_xlsx(path: Path, turns: int, prefix: str) -> None:
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("transcripts")
    sheet.append(HEADER)
    for row in synthetic_rows(turns, prefix):
        sheet.append(row)
    workbook.save(path)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def raw_copy_seconds(turns: int, prefix: str) -> float:
    """COPY of the same turns, label links and comments into the real tables, rolled back: the floor."""
    from django.db import connection, transaction
    from django.utils import timezone

    from supervision.models import Session
    from taxonomy.lookup import LabelIndex

    index = LabelIndex.load()
    technique_id = index.technique_ids["reflection"]
    state_id = index.client_state_ids["affect_contact"]
    rows = list(synthetic_rows(turns, prefix))
    with transaction.atomic():
        codes = sorted({row[0] for row in rows})
        Session.objects.bulk_create([Session(code=c, title=c, source="bench_synthetic") for c in codes])
        session_ids = dict(Session.objects.filter(code__in=codes).values_list("code", "id"))
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval(pg_get_serial_sequence('turns', 'id')) FROM generate_series(1, %s)", [turns])
            ids = [r[0] for r in cursor.fetchall()]
        now = timezone.now()
        started = time.perf_counter()
        raw = connection.connection
        with raw.cursor() as cursor:
            with cursor.copy(
                "COPY turns (id, session_id, seq, utterance_id, speaker, stage, text, nonverbal, dialog_act) FROM STDIN"
            ) as copy:
                for turn_id, row in zip(ids, rows, strict=True):
                    speaker = "counselor" if row[3] == "상담자" else "client"
                    copy.write_row(
                        (turn_id, session_ids[row[0]], row[2], row[1], speaker, row[4], row[5], "[]", row[9])
                    )
            with cursor.copy("COPY turn_technique (turn_id, label_id) FROM STDIN") as copy:
                for turn_id, row in zip(ids, rows, strict=True):
                    if row[6]:
                        copy.write_row((turn_id, technique_id))
            with cursor.copy("COPY turn_client_state (turn_id, label_id) FROM STDIN") as copy:
                for turn_id, row in zip(ids, rows, strict=True):
                    if row[7]:
                        copy.write_row((turn_id, state_id))
            with cursor.copy(
                "COPY supervisor_comment (turn_id, kind, text, intent_deviation, author, is_suggestion, "
                "suggestion_key, created_at, updated_at) FROM STDIN"
            ) as copy:
                for turn_id, row in zip(ids, rows, strict=True):
                    if row[11]:
                        copy.write_row((turn_id, "rationale", row[11], "{}", "supervisor", False, "", now, now))
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred seq check, as a commit would run it
        elapsed = time.perf_counter() - started
        transaction.set_rollback(True)
    return elapsed


def fresh_tables(prefix: str) -> None:
    """The bench's sessions deleted and the tables vacuumed, so every import starts from the same tables: a
    delete leaves its rows dead until a vacuum, and without one each import wrote into tables and indexes
    bloated by every delete before it (560,000 dead turns after five rounds of 20,000)."""
    from django.db import connection

    from supervision.models import Session

    Session.objects.filter(code__startswith=prefix).delete()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # outside a transaction: Django's autocommit


def suggestion_cost(path: Path, prefix: str, rounds: int = 1) -> tuple[list[float], list[float]]:
    """The same fresh import without the suggester (its model file refused, as when it is missing) and with
    it, ``rounds`` times in turn (on a shared machine the load changes between imports), the one without first
    in even rounds and second in odd ones, so that the load drifting within a round falls on both sides alike.
    (seconds without, seconds with), one per round."""
    from django.conf import settings

    from supervision.importing.services import import_file
    from supervision.suggesting.loading import current_model, forget_loaded_models

    timings: tuple[list[float], list[float]] = ([], [])
    for round_ in range(rounds):
        order = (("/nonexistent/suggester.json", timings[0]), ("", timings[1]))
        for model, found in order if round_ % 2 == 0 else order[::-1]:
            fresh_tables(prefix)
            settings.SUGGESTER_MODEL_PATH = model
            forget_loaded_models()
            current_model()  # loaded before the clock starts: a process loads it once
            started = time.perf_counter()
            report = import_file(path)
            found.append(time.perf_counter() - started)
            if report.errors:
                sys.exit(f"import failed: {report.errors[:5]}")
    settings.SUGGESTER_MODEL_PATH = ""
    forget_loaded_models()
    return timings


def _seconds(timings: list[float]) -> str:
    return f"best {min(timings):.2f} s, median {statistics.median(timings):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument(
        "--rounds", type=int, default=1, help="imports without and with the suggester, in turn, for its cost"
    )
    args = parser.parse_args()

    from benchmarks.bench_db import use_bench_database

    use_bench_database()
    import django

    django.setup()
    from benchmarks.bench_db import queue_follow_up_jobs_without_running_them

    queue_follow_up_jobs_without_running_them()
    from django.conf import settings
    from django.db import connection

    from supervision.importing.services import import_file

    if connection.vendor != "postgresql":
        sys.exit("bench-import needs PostgreSQL (DATABASE_URL)")
    if connection.settings_dict["NAME"].startswith("test_"):
        sys.exit("refusing to run against a test database")
    settings.IMPORT_MAX_BYTES = max(settings.IMPORT_MAX_BYTES, 200 * 1024 * 1024)
    settings.IMPORT_MAX_ROWS = max(settings.IMPORT_MAX_ROWS, args.turns)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from supervision.suggesting.loading import current_model

    current_model()  # the suggester, loaded once per process (not on the first import's clock)

    print(f"database {connection.settings_dict['NAME']}, {args.turns:,} turns per file")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, writer in (("csv", write_csv), ("xlsx", write_xlsx)):
            prefix = f"BENCH{fmt.upper()}"
            path = Path(tmp) / f"bench.{fmt}"
            started = time.perf_counter()
            writer(path, args.turns, prefix)
            made = time.perf_counter() - started
            copy_seconds = raw_copy_seconds(args.turns, "RAWCOPY")
            fresh_tables(prefix)  # the COPY's rolled-back rows are dead too
            phases: dict[str, float] = {}

            def progress(phase: str, done: int, total: int, phases=phases) -> None:
                phases.setdefault(phase, time.perf_counter())

            started, cpu_started = time.perf_counter(), time.process_time()
            report = import_file(path, progress=progress)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            read_and_check = phases.get("write", started + seconds) - started
            if report.errors:
                sys.exit(f"{fmt}: import failed: {report.errors[:5]}")
            started = time.perf_counter()
            again = import_file(path)
            reimport = time.perf_counter() - started
            if fmt == "csv":
                without, with_again = suggestion_cost(path, prefix, args.rounds)
            results.append((fmt, path.stat().st_size, made, seconds, copy_seconds, reimport, report, again))
            fresh_tables(prefix)
            print(
                f"{fmt:>4}: file {path.stat().st_size / 1_048_576:6.1f} MB (written in {made:.1f} s) | "
                f"import {seconds:6.2f} s = {args.turns / seconds:8,.0f} turns/s | raw COPY {copy_seconds:5.2f} s | "
                f"ratio {seconds / copy_seconds:4.1f}x | read+validate {read_and_check:5.2f} s, "
                f"write {seconds - read_and_check:5.2f} s | importer CPU {cpu:5.2f} s | created {report.created:,} | "
                f"re-import {reimport:5.2f} s, created {again.created} updated {again.updated} | "
                f"peak RSS so far {peak_rss_mb():,.0f} MB",
                flush=True,
            )
            if fmt == "csv":
                slowdown = min(seconds, *with_again) / min(without) - 1
                print(
                    f"      suggestions (CONTRACT §9): import without them {min(without):6.2f} s, with them "
                    f"{seconds:6.2f} s and {min(with_again):6.2f} s → {slowdown:+.1%} (best of each; bar: at most +25 %)",
                    flush=True,
                )
                if args.rounds > 1:
                    ratios = sorted(w / o - 1 for o, w in zip(without, with_again, strict=True))
                    print(
                        f"      {args.rounds} rounds without/with in turn: without {_seconds(without)}, with "
                        f"{_seconds(with_again)}; per round, sorted, {', '.join(f'{r:+.1%}' for r in ratios)} "
                        f"(median {statistics.median(ratios):+.1%}), best against best "
                        f"{min(with_again) / min(without) - 1:+.1%}",
                        flush=True,
                    )
    print(f"peak RSS {peak_rss_mb():,.0f} MB (whole process: file generation, COPY baseline and both imports)")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")


if __name__ == "__main__":
    main()
