"""Scale benchmark of the transcript importer, from outside: the ``import_transcripts`` command on 100,000- and
500,000-row CSVs, against two COPY floors measured in the same run.

    make bench-scale-import                          # both sizes (BENCH_DATABASE_URL, never a test database)
    python benchmarks/bench_scale_import.py --sizes 100000

Rows are realistic and synthetic: about 60 Korean characters of text, 0.75 technique links and 0.35 client-state
links per turn, labels typed as people type them (codes, Korean names, surface labels), one rationale in 20.

For each size it prints
- the command's wall time net of start-up (a 2-row import through the same command, same run), rows/s, µs/row
  and the child's peak RSS;
- floor (a), as in ``bench_import.py``: COPY of the same rows written from Python (``write_row``), committed;
- floor (b), the stricter one: ``COPY … FROM STDIN`` of prepared text files (built beforehand, untimed) into the
  real tables with their constraints and triggers, committed;
- the ratios to both floors, and the per-row cost of each size against the first one.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

from supervision.importing.columns import FIELD_NAMES  # noqa: E402 (plain Python, no Django)

TURNS_PER_SESSION = 200
SOURCE = "bench_synthetic"
HEADER = list(FIELD_NAMES)  # CONTRACT §3, in the template's order
# (cell as typed, codes it means): 1.5 links per counselor turn = 0.75 per turn.
TECHNIQUE_CELLS = [
    ("reflection", ["reflection"]),
    ("공감; 탐색질문", ["empathy", "exploration"]),
    ("정서 반영; 탐색질문", ["reflection", "exploration"]),
    ("Validation", ["validation"]),
    ("reflection\nempathy", ["reflection", "empathy"]),
    ("명료화", ["clarification"]),
]
# 0.7 links per client turn = 0.35 per turn.
STATE_CELLS = [
    ("affect_contact", ["affect_contact"]),
    ("방어", ["defensive"]),
    ("", []),
    ("involuntary", ["involuntary"]),
    ("", []),
    ("affect_contact; 방어", ["affect_contact", "defensive"]),
    ("", []),
    ("생각 정리", ["thought_organizing"]),
    ("", []),
    ("방어", ["defensive"]),
]
STAGES = [("rapport", "라포"), ("탐색", "탐색"), ("개입", "개입"), ("정리", "정리")]
_PHRASE = (
    "요즘 마음이 어떤지 조금 더 이야기해 볼까요 그때 어떤 느낌이 드셨어요 회사에서 친구와 가족이 "
    "답답하고 불안했어요 잠을 잘 못 자고 생각이 많아서 힘들었던 것 같아요 그런 마음이 드는 게 이해가 돼요 "
    "스스로를 탓하게 되는 순간이 있었군요 어떻게 하고 싶으신지 말씀해 주시겠어요 지난주와 비교하면 조금 "
    "나아진 것도 있어요 화가 나기도 하고 서운하기도 했어요"
)
WORDS = tuple(_PHRASE.split(" "))


def text_for(rng: random.Random) -> str:
    words: list[str] = []
    length = 0
    while length < 60:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


def synthetic_rows(turns: int, prefix: str, seed: int = 19):
    """Yields (csv row, prepared row): the row as a person writes it and the values the tables will hold."""
    rng = random.Random(seed)
    for n in range(turns):
        session = f"{prefix}{n // TURNS_PER_SESSION:05d}"
        seq = n % TURNS_PER_SESSION
        counselor = seq % 2 == 0
        technique_cell, techniques = TECHNIQUE_CELLS[(n // 2) % len(TECHNIQUE_CELLS)] if counselor else ("", [])
        state_cell, states = ("", []) if counselor else STATE_CELLS[(n // 2) % len(STATE_CELLS)]
        stage_typed, stage = STAGES[seq * 4 // TURNS_PER_SESSION]
        text = text_for(rng)
        nonverbal = "(끄덕임)" if n % 7 == 0 else ""
        act = "inform" if n % 3 else "question"
        rationale = "내담자의 정서를 정확히 되돌려 줌" if n % 20 == 0 else ""
        uid = f"{session}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}"
        yield (
            [
                session,
                uid,
                seq,
                "상담자" if counselor else "내담자",
                stage_typed,
                text,
                technique_cell,
                state_cell,
                nonverbal,
                act,
                SOURCE,
                rationale,
                "",
                "",
                "2026-11-02",
            ],
            (
                session,
                uid,
                seq,
                "counselor" if counselor else "client",
                stage,
                text,
                techniques,
                states,
                [nonverbal] if nonverbal else [],
                act,
                rationale,
            ),
        )


def write_csv(path: Path, turns: int, prefix: str) -> None:
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(HEADER)
        for row, _prepared in synthetic_rows(turns, prefix):
            writer.writerow(row)


def _copy_text(value) -> str:
    if value is None:
        return "\\N"
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def prepared_rows(turns: int, prefix: str, session_ids: dict[str, int], first_id: int, ids: dict[str, int]):
    """The table rows of the file, ready for COPY: (turns, turn_technique, turn_client_state, comments)."""
    turn_rows, technique_rows, state_rows, comment_rows = [], [], [], []
    now = "2026-12-01 00:00:00+00"
    for turn_id, (_row, p) in enumerate(synthetic_rows(turns, prefix), start=first_id):
        session, uid, seq, speaker, stage, text, techniques, states, nonverbal, act, rationale = p
        turn_rows.append(
            (
                turn_id,
                session_ids[session],
                seq,
                uid,
                speaker,
                stage,
                text,
                json.dumps(nonverbal, ensure_ascii=False),
                act,
            )
        )
        technique_rows += [(turn_id, ids["technique", code]) for code in techniques]
        state_rows += [(turn_id, ids["state", code]) for code in states]
        if rationale:
            comment_rows.append((turn_id, "rationale", rationale, "{}", "supervisor", None, False, "", now, now))
    return turn_rows, technique_rows, state_rows, comment_rows


COPY_TARGETS = (
    "turns (id, session_id, seq, utterance_id, speaker, stage, text, nonverbal, dialog_act)",
    "turn_technique (turn_id, label_id)",
    "turn_client_state (turn_id, label_id)",
    "supervisor_comment (turn_id, kind, text, intent_deviation, author, written_by_id, is_suggestion, "
    "suggestion_key, created_at, updated_at)",
)


def _prepare_floor(turns: int, prefix: str):
    """Sessions created and turn ids drawn from the sequence beforehand (untimed), as a loader would."""
    from django.db import connection, transaction

    from supervision.models import Session
    from taxonomy.lookup import LabelIndex

    drop_sessions(prefix)
    index = LabelIndex.load()
    ids = {("technique", code): pk for code, pk in index.technique_ids.items()}
    ids.update({("state", code): pk for code, pk in index.client_state_ids.items()})
    codes = [f"{prefix}{n:05d}" for n in range((turns + TURNS_PER_SESSION - 1) // TURNS_PER_SESSION)]
    with transaction.atomic():
        Session.objects.bulk_create([Session(code=c, title="", source=SOURCE) for c in codes], batch_size=1000)
    session_ids = dict(Session.objects.filter(code__in=codes).values_list("code", "id"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence('turns', 'id')) FROM generate_series(1, %s)", [turns])
        turn_ids = [row[0] for row in cursor.fetchall()]
    # Consecutive ids (nobody else draws from this database's sequence while the benchmark runs).
    assert turn_ids[-1] - turn_ids[0] == turns - 1
    return prepared_rows(turns, prefix, session_ids, turn_ids[0], ids)


def floor_python_copy(turns: int, prefix: str) -> float:
    """Floor (a), as bench_import.py: the rows written from Python with COPY (``write_row``), committed."""
    from django.db import connection, transaction

    tables = _prepare_floor(turns, prefix)
    started = time.perf_counter()
    with transaction.atomic(), connection.connection.cursor() as cursor:
        for target, rows in zip(COPY_TARGETS, tables, strict=True):
            with cursor.copy(f"COPY {target} FROM STDIN") as copy:
                write_row = copy.write_row
                for row in rows:
                    write_row(row)
    return time.perf_counter() - started


def floor_prepared_files(turns: int, prefix: str, folder: Path) -> float:
    """Floor (b): ``COPY … FROM STDIN`` of prepared text files (written beforehand, untimed), committed."""
    from django.db import connection, transaction

    tables = _prepare_floor(turns, prefix)
    files = []
    for position, rows in enumerate(tables):
        path = folder / f"floor_{position}.tsv"
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write("\t".join(_copy_text(value) for value in row) + "\n")
        files.append(path)
    del tables
    started = time.perf_counter()
    with transaction.atomic(), connection.connection.cursor() as cursor:
        for target, path in zip(COPY_TARGETS, files, strict=True):
            with cursor.copy(f"COPY {target} FROM STDIN") as copy, path.open("rb") as handle:
                while block := handle.read(1 << 20):
                    copy.write(block)
    seconds = time.perf_counter() - started
    for path in files:
        path.unlink()
    return seconds


def drop_sessions(prefix: str) -> None:
    """Removes what a run wrote (untimed), with plain SQL: the ORM's cascade would load every turn."""
    from django.db import connection, transaction

    turns_of = "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.code LIKE %s"
    like = prefix + "%"
    with transaction.atomic(), connection.cursor() as cursor:
        for table in ("supervisor_comment", "turn_technique", "turn_client_state"):
            cursor.execute(f"DELETE FROM {table} WHERE turn_id IN ({turns_of})", [like])
        cursor.execute("DELETE FROM turns WHERE session_id IN (SELECT id FROM sessions WHERE code LIKE %s)", [like])
        cursor.execute("DELETE FROM sessions WHERE code LIKE %s", [like])


def run_command(path: Path, env: dict) -> tuple[float, dict]:
    """``manage.py import_transcripts PATH`` in a child process: (wall seconds, its last JSON line)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "import_transcripts", str(path)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = child.communicate()
    seconds = time.perf_counter() - started
    # communicate() reaped the child: its rusage is in RUSAGE_CHILDREN, taken as a difference by the caller.
    if child.returncode != 0:
        sys.exit(f"import_transcripts {path.name} failed ({child.returncode}): {err.decode()[-2000:]}")
    return seconds, json.loads(out.decode().strip().splitlines()[-1])


def measured_command(path: Path, env: dict) -> tuple[float, float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, summary = run_command(path, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: children run from small to large, and the
    # start-up runs are far smaller, so after each import it is that import's peak.
    return seconds, cpu, after.ru_maxrss / 1024, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,500000", help="comma-separated row counts (default both)")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))

    from benchmarks.bench_db import use_bench_database

    use_bench_database()
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        sys.exit("bench-scale-import needs PostgreSQL (DATABASE_URL)")
    if connection.settings_dict["NAME"].startswith("test_"):
        sys.exit("refusing to run against a test database")
    call_command("migrate", verbosity=0)
    env = dict(os.environ, IMPORT_MAX_ROWS=str(max(max(sizes), 200_000)), PYTHONHASHSEED="0")
    # No byte cap to lift: the command line streams any file up to IMPORT_MAX_ROWS rows (issue 14 item 9).
    env.pop("IMPORT_MAX_BYTES", None)
    if not env.get("REDIS_URL"):
        print("note: no REDIS_URL, the follow-up trajectory audits would run inside the command; set REDIS_URL")

    print(f"database {connection.settings_dict['NAME']}, sizes {', '.join(f'{n:,}' for n in sizes)}", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tiny = folder / "startup.csv"
        write_csv(tiny, 2, "SCSTART")
        startups = []
        for _ in range(3):
            drop_sessions("SCSTART")
            seconds, *_ = measured_command(tiny, env)
            startups.append(seconds)
        drop_sessions("SCSTART")
        startup = min(startups)
        print(f"start-up (2-row import through the command, best of 3): {startup:.2f} s", flush=True)

        for turns in sizes:
            prefix = f"SC{turns // 1000}K"
            path = folder / f"scale_{turns}.csv"
            started = time.perf_counter()
            write_csv(path, turns, prefix)
            made = time.perf_counter() - started
            drop_sessions(prefix)
            seconds, cpu, rss, summary = measured_command(path, env)
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*), (SELECT count(*) FROM turn_technique tt JOIN turns t ON t.id = tt.turn_id "
                    "JOIN sessions s ON s.id = t.session_id WHERE s.code LIKE %s), "
                    "(SELECT count(*) FROM turn_client_state tc JOIN turns t ON t.id = tc.turn_id "
                    "JOIN sessions s ON s.id = t.session_id WHERE s.code LIKE %s) "
                    "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.code LIKE %s",
                    [prefix + "%"] * 3,
                )
                stored, techniques, states = cursor.fetchone()
            assert summary["created"] == turns == stored, (summary, stored)
            drop_sessions(prefix)
            floor_a = floor_python_copy(turns, "SCFA")
            drop_sessions("SCFA")
            floor_b = floor_prepared_files(turns, "SCFB", folder)
            drop_sessions("SCFB")
            net = seconds - startup
            results.append((turns, net, floor_a, floor_b, rss))
            print(
                f"{turns:>9,} rows ({path.stat().st_size / 1_048_576:,.0f} MB, written in {made:.0f} s; "
                f"{techniques / turns:.2f} technique and {states / turns:.2f} client-state links per turn): "
                f"command {seconds:6.2f} s, net of start-up {net:6.2f} s = {turns / net:8,.0f} rows/s "
                f"= {net / turns * 1e6:5.1f} µs/row | child CPU {cpu:6.2f} s | peak RSS {rss:,.0f} MB\n"
                f"{'':>10}floor (a) COPY written from Python {floor_a:6.2f} s -> ratio {net / floor_a:4.2f}x | "
                f"floor (b) COPY of prepared text files {floor_b:6.2f} s -> ratio {net / floor_b:4.2f}x",
                flush=True,
            )
            path.unlink()
    if len(results) > 1:
        base = results[0]
        for turns, net, _floor_a, floor_b, rss in results[1:]:
            print(
                f"per-row cost at {turns:,} vs {base[0]:,}: {(net / turns) / (base[1] / base[0]):.2f}x "
                f"(prepared-COPY floor per row: {(floor_b / turns) / (base[3] / base[0]):.2f}x); "
                f"peak RSS {base[4]:,.0f} MB -> {rss:,.0f} MB"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")


if __name__ == "__main__":
    main()
