"""Times `import_transcripts` on a 10,000-line golden JSONL file (issue 2 bar: under 2 seconds).

Runs against DATABASE_URL (default: a separate `portal_bench` database, created if missing) — never the
test database. Prints the import time, turns/s, and a baseline from the same run: json-parsing the same
file, the floor any importer has to pay.

    make bench-golden
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import use_bench_database

use_bench_database()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

import django  # noqa: E402

django.setup()

from benchmarks.bench_db import queue_follow_up_jobs_without_running_them  # noqa: E402

queue_follow_up_jobs_without_running_them()

from django.core.management import call_command  # noqa: E402

from supervision.importing.readers import read_jsonl  # noqa: E402
from supervision.importing.services import import_transcripts  # noqa: E402
from supervision.models import Session  # noqa: E402

TURNS = 10_000
PER_SESSION = 50


def make_file(path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for s in range(TURNS // PER_SESSION):
            code = f"BENCH{s:04d}"
            for seq in range(PER_SESSION):
                counselor = seq % 2 == 0
                line = {
                    "utterance_id": f"{code}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}",
                    "speaker": "counselor" if counselor else "client",
                    "stage": "탐색",
                    "seq": seq,
                    "text": f"합성 발화 {seq} — 요즘 마음이 어떤지 조금 더 이야기해 볼까요?",
                    "techniques": ["reflection", "정서 반영"][:1] + (["탐색질문"] if seq % 4 == 0 else [])
                    if counselor
                    else [],
                    "client_states": [] if counselor else ["affect_contact"],
                    "comments": [{"kind": "critique", "text": "질문이 닫혀 있음", "severity": "minor"}]
                    if seq % 10 == 0
                    else [],
                    "nonverbal": ["(한숨)"] if seq % 7 == 0 else [],
                    "source": "bench_synthetic",
                    "dialog_act": "inform",
                }
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def main() -> None:
    call_command("migrate", verbosity=0)
    Session.objects.filter(code__startswith="BENCH").delete()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "golden.jsonl"
        make_file(path)
        start = time.perf_counter()
        for _ in read_jsonl(path):
            pass
        parse_s = time.perf_counter() - start

        start = time.perf_counter()
        report = import_transcripts(rows=read_jsonl(path))
        first_s = time.perf_counter() - start
        assert report.ok and report.created == TURNS, report.summary()

        start = time.perf_counter()
        report = import_transcripts(rows=read_jsonl(path))
        again_s = time.perf_counter() - start
        assert report.created == 0
    Session.objects.filter(code__startswith="BENCH").delete()
    print(f"golden JSONL import, {TURNS:,} lines")
    print(f"  baseline json parse   {parse_s * 1000:8.0f} ms")
    print(
        f"  first import          {first_s * 1000:8.0f} ms  ({TURNS / first_s:,.0f} turns/s, {first_s / parse_s:.1f}x parse)"
    )
    print(f"  re-import (no change) {again_s * 1000:8.0f} ms  ({TURNS / again_s:,.0f} turns/s)")
    print(f"  bar: first import < 2,000 ms -> {'PASS' if first_s < 2 else 'FAIL'}")


if __name__ == "__main__":
    main()
