"""The persona answer key (CONTRACT §10) at size: the transition table over 500,000 golden turns against one
hand-written GROUP BY of the same triples, and scoring a 100,000-turn persona file, in the same run.

    make bench-transitions      # or: DATABASE_URL=… .venv/bin/python benchmarks/bench_transitions.py

Runs against DATABASE_URL (default the separate `portal_bench` database, created if missing), never the test
database. The golden set (1,000 sessions of 500 turns, counselor and client alternating; 0–2 techniques per
counselor turn, 0–2 client states per client turn, one client turn in five unlabelled) is imported once through
the import service and reused. Bars (DESIGN.md): table ≤ 3 × the GROUP BY; scoring ≥ 50,000 turns/s net of
start-up (the process's Django set-up is not timed; reading, checking, counting and comparing are).
The golden counts are kept in the cache under the sessions' revision marks: the table is timed counted afresh
(cache cleared) against the baseline, and then kept; scoring is timed both ways.

The baseline is a statement a person would write for the same triples, independently of ours: the labelled
client turns with LAG for the previous one, the counselor turns between by a range join on seq, the states
of both ends joined, one GROUP BY. It must give the same counts (checked), so it is a fair floor.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import use_bench_database

use_bench_database()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

import django  # noqa: E402

django.setup()

from benchmarks.bench_db import queue_follow_up_jobs_without_running_them  # noqa: E402

queue_follow_up_jobs_without_running_them()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from supervision.importing.services import import_transcripts  # noqa: E402
from supervision.models import Session, Turn  # noqa: E402
from supervision.transitions import counting, services  # noqa: E402
from supervision.transitions.reading import read_persona  # noqa: E402
from taxonomy import catalogue  # noqa: E402

SESSIONS, PER_SESSION = 1_000, 500
TURNS = SESSIONS * PER_SESSION
PREFIX = "TRB"
PERSONA_SESSIONS, PERSONA_PER_SESSION = 2_000, 50
REPEATS = 3

BASELINE_SQL = """
WITH labelled AS (
    SELECT t.id, t.session_id, t.seq,
           LAG(t.id) OVER w AS prev_id, LAG(t.seq) OVER w AS prev_seq
      FROM turns t
     WHERE t.speaker = 'client' AND EXISTS (SELECT 1 FROM turn_client_state x WHERE x.turn_id = t.id)
    WINDOW w AS (PARTITION BY t.session_id ORDER BY t.seq)
),
moves AS (
    SELECT DISTINCT l.id AS pair, {move} AS move
      FROM labelled l
      JOIN turns c ON c.session_id = l.session_id AND c.seq > l.prev_seq AND c.seq < l.seq AND c.speaker = 'counselor'
      JOIN turn_technique tt ON tt.turn_id = c.id
      JOIN technique_label_def d ON d.id = tt.label_id
     WHERE l.prev_id IS NOT NULL
)
SELECT a.code, m.move, b.code, COUNT(*)
  FROM moves m
  JOIN labelled l ON l.id = m.pair
  JOIN turn_client_state pa ON pa.turn_id = l.prev_id JOIN client_state_def a ON a.id = pa.label_id
  JOIN turn_client_state pb ON pb.turn_id = l.id JOIN client_state_def b ON b.id = pb.label_id
 GROUP BY 1, 2, 3
"""


def session_lines(rng: random.Random, code: str, turns: int, *, golden: bool):
    """One session: a client whose state tends to persist, a counselor with 0–2 techniques a turn."""
    state = rng.choice(catalogue.CLIENT_STATE_CODES)
    for seq in range(turns):
        counselor = seq % 2 == 0
        if counselor:
            labels = rng.sample(catalogue.TECHNIQUE_CODES, rng.choice((0, 1, 1, 1, 2)))
        else:
            if rng.random() < 0.35:
                state = rng.choice(catalogue.CLIENT_STATE_CODES)
            labels = (
                []
                if rng.random() < 0.2
                else sorted({state, *rng.sample(catalogue.CLIENT_STATE_CODES, rng.choice((0, 0, 1)))})
            )
        line = {
            "utterance_id": f"{code}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}",
            "seq": seq,
            "speaker": "counselor" if counselor else "client",
            "techniques": labels if counselor else [],
            "client_states": [] if counselor else labels,
        }
        if golden:
            line.update(
                stage=catalogue.STAGE_CODES[min(3, seq * 4 // turns)], text=f"합성 발화 {seq}", source="bench_synthetic"
            )
        yield line


def ensure_golden() -> None:
    if Turn.objects.filter(session__code__startswith=PREFIX).count() == TURNS and Session.objects.count() == SESSIONS:
        return
    Session.objects.all().delete()  # the bench database holds this golden set only: the table reads every session
    rng = random.Random(34)

    def lines():
        for s in range(SESSIONS):
            yield from session_lines(rng, f"{PREFIX}{s:05d}", PER_SESSION, golden=True)

    report = import_transcripts(rows=enumerate(lines(), start=1))
    assert report.ok, report.errors[:5]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def baseline(by: str) -> Counter:
    with connection.cursor() as cursor:
        cursor.execute(BASELINE_SQL.format(move="d.category" if by == counting.BY_CATEGORY else "d.code"))
        return Counter({(a, m, b): n for a, m, b, n in cursor.fetchall()})


def _fmt(times: list[float]) -> str:
    return ", ".join(f"{t:.3f}" for t in times)


def bench_table() -> None:
    for by in counting.BY_CHOICES:
        base_times, ours_times = [], []
        for _ in range(REPEATS):
            took, expected = timed(lambda by=by: baseline(by))
            base_times.append(took)
            cache.clear()  # counted afresh, as after any write to the golden sessions
            took, table = timed(lambda by=by: services.transition_table(by=by))
            ours_times.append(took)
        kept_times = [timed(lambda by=by: services.transition_table(by=by))[0] for _ in range(REPEATS)]
        got = Counter({(c["state"], c["move"], n): k for c in table["contexts"] for n, k in c["next"].items()})
        assert got == expected, "the table and the hand-written statement disagree"
        base, ours = statistics.median(base_times), statistics.median(ours_times)
        print(
            f"table --by {by}: {table['transitions']:,} transitions in {len(table['contexts']):,} contexts over "
            f"{table['sessions']:,} sessions (same counts as the GROUP BY: checked)"
        )
        print(f"  hand-written GROUP BY: median {base:.3f} s (runs: {_fmt(base_times)})")
        print(f"  transition_table:      median {ours:.3f} s (runs: {_fmt(ours_times)})")
        print(f"  ratio {ours / base:.2f}x (bar: 3x) — {'MET' if ours <= 3 * base else 'NOT MET'}")
        kept = statistics.median(kept_times)
        print(f"  then kept (nothing written since): median {kept:.3f} s (runs: {_fmt(kept_times)})")


def bench_persona() -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "persona.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for s in range(PERSONA_SESSIONS):
                for line in session_lines(rng, f"PB{s:05d}", PERSONA_PER_SESSION, golden=False):
                    handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        turns = PERSONA_SESSIONS * PERSONA_PER_SESSION
        print(f"persona file: {turns:,} turns, {path.stat().st_size / 1_048_576:.1f} MB")

        def parse_only():
            with path.open("rb") as handle:
                return [json.loads(line) for line in handle]

        floor = statistics.median(timed(parse_only)[0] for _ in range(REPEATS))
        print(
            f"  json.loads of every line alone (how busy the machine is): {floor:.3f} s = {turns / floor:,.0f} lines/s"
        )
        for by in counting.BY_CHOICES:
            cache.clear()
            took, _ = timed(lambda by=by: services.score_persona(read_persona(path), rater="bench-persona", by=by))
            print(f"  score_persona --by {by}, golden table counted first: {took:.3f} s = {turns / took:,.0f} turns/s")
            times = []
            for _ in range(REPEATS):

                def score(by=by):
                    persona = read_persona(path)
                    assert persona.ok, persona.errors[:5]
                    return services.score_persona(persona, rater="bench-persona", by=by)[0]

                took, figures = timed(score)
                times.append(took)
            took = statistics.median(times)
            print(
                f"  score_persona --by {by}, golden table kept: median {took:.3f} s = {turns / took:,.0f} turns/s (runs: {_fmt(times)}); "
                f"jsd {figures['jsd']}, coverage {figures['coverage']}, {figures['contexts']} contexts compared"
            )
            print(f"  bar 50,000 turns/s — {'MET' if turns / took >= 50_000 else 'NOT MET'}")
        # The same through the command in this process (argument parsing and JSON output included).
        with open(os.devnull, "w") as sink:
            took, _ = timed(lambda: call_command("score_persona", str(path), "--rater", "bench-persona", stdout=sink))
        print(f"  the command in-process: {took:.3f} s = {turns / took:,.0f} turns/s")


def main() -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    ensure_golden()
    print(f"golden set: {TURNS:,} turns in {SESSIONS:,} sessions ready in {time.perf_counter() - started:.1f} s")
    bench_table()
    bench_persona()


if __name__ == "__main__":
    main()
