"""Times ``score_agreement`` on a 100,000-turn annotation run (DESIGN.md bar: within 3x of reading the same
file with json.loads plus one SQL read of the golden labels, measured in the same run).

Runs against DATABASE_URL (default: the separate `portal_bench` database, created if missing), never the
test database. The golden set (2,000 sessions of 50 turns) is imported once and reused; the run file is
generated with a fixed seed, so every run scores the same disagreements.

    make bench-agreement
"""

from __future__ import annotations

import json
import os
import random
import statistics
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

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from supervision.agreement import keeping, services  # noqa: E402
from supervision.agreement.models import AnnotationRun  # noqa: E402
from supervision.agreement.reading import read_run  # noqa: E402
from supervision.agreement.tasks import keep_run_report  # noqa: E402
from supervision.importing.services import import_transcripts  # noqa: E402
from supervision.models import Session, Turn  # noqa: E402
from taxonomy import catalogue  # noqa: E402

SESSIONS, PER_SESSION = 2_000, 50
TURNS = SESSIONS * PER_SESSION
PREFIX = "AGB"
REPEATS = 3


def golden_lines(rng: random.Random):
    techniques, states = catalogue.TECHNIQUE_CODES, catalogue.CLIENT_STATE_CODES
    for s in range(SESSIONS):
        code = f"{PREFIX}{s:05d}"
        for seq in range(PER_SESSION):
            counselor = seq % 2 == 0
            yield {
                "utterance_id": f"{code}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}",
                "speaker": "counselor" if counselor else "client",
                "stage": catalogue.STAGE_CODES[min(3, seq * 4 // PER_SESSION)],
                "seq": seq,
                "text": f"합성 발화 {seq}",
                "techniques": rng.sample(techniques, rng.randint(1, 2)) if counselor else [],
                "client_states": [] if counselor else rng.sample(states, rng.randint(0, 2)),
                "source": "bench_synthetic",
                "dialog_act": rng.choice(catalogue.DIALOG_ACT_CODES[:14]) if seq % 5 else None,
            }


def ensure_golden() -> None:
    if Turn.objects.filter(session__code__startswith=PREFIX).count() == TURNS:
        return
    Session.objects.filter(code__startswith=PREFIX).delete()
    report = import_transcripts(rows=enumerate(golden_lines(random.Random(18)), start=1))
    assert report.ok, report.errors[:5]


def run_lines(rng: random.Random):
    """The rater agrees most of the time and rates every axis of its speaker; one line in 20 leaves the
    dialog act unrated."""
    for line in golden_lines(random.Random(18)):
        counselor = line["speaker"] == "counselor"
        out = {"utterance_id": line["utterance_id"], "stage": line["stage"]}
        if rng.random() < 0.1:
            out["stage"] = rng.choice(catalogue.STAGE_CODES)
        labels = line["techniques"] if counselor else line["client_states"]
        pool = catalogue.TECHNIQUE_CODES if counselor else catalogue.CLIENT_STATE_CODES
        if rng.random() < 0.2:
            labels = rng.sample(pool, rng.randint(0, 2))
        out["techniques" if counselor else "client_states"] = labels
        out["client_states" if counselor else "techniques"] = []
        if rng.random() >= 0.05:
            out["dialog_act"] = line["dialog_act"] if rng.random() < 0.85 else rng.choice(catalogue.DIALOG_ACT_CODES)
        yield out


def baseline(path: Path) -> float:
    """json.loads of every line plus one SQL read of the golden labels of the same sessions."""
    start = time.perf_counter()
    with path.open("rb") as handle:
        lines = [json.loads(line) for line in handle]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.utterance_id, t.speaker, t.stage, t.dialog_act, tt.codes, tc.codes
              FROM turns t
              JOIN sessions s ON s.id = t.session_id
              LEFT JOIN (SELECT x.turn_id, array_agg(d.code) AS codes
                           FROM turn_technique x JOIN technique_label_def d ON d.id = x.label_id
                          GROUP BY x.turn_id) tt ON tt.turn_id = t.id
              LEFT JOIN (SELECT x.turn_id, array_agg(d.code) AS codes
                           FROM turn_client_state x JOIN client_state_def d ON d.id = x.label_id
                          GROUP BY x.turn_id) tc ON tc.turn_id = t.id
             WHERE s.code LIKE %s
            """,
            [f"{PREFIX}%"],
        )
        rows = cursor.fetchall()
    assert len(lines) == len(rows) == TURNS
    return time.perf_counter() - start


def score(path: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    run_file = read_run(path)
    assert run_file.ok, run_file.errors[:5]
    figures = services.score_ratings(run_file.ratings, run_file.session_ids, rater="bench-ai", turns=run_file.turns)
    return time.perf_counter() - start, figures


def main() -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    ensure_golden()
    print(f"golden set: {TURNS:,} turns in {SESSIONS:,} sessions ready in {time.perf_counter() - started:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for line in run_lines(random.Random(7)):
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        print(f"run file: {path.stat().st_size / 1_048_576:.1f} MB, {TURNS:,} lines")
        baselines, scores = [], []
        for _ in range(REPEATS):
            baselines.append(baseline(path))
            took, figures = score(path)
            scores.append(took)
        base, ours = statistics.median(baselines), statistics.median(scores)
        axes = figures["axes"]
        print(
            f"figures: turns {figures['turns']:,}; techniques micro-F1 {axes['techniques']['micro_f1']}, "
            f"stage accuracy {axes['stage']['accuracy']}, dialog act kappa {axes['dialog_act']['kappa']}, "
            f"safety recall {figures['safety']['recall']}"
        )
        print(f"baseline (json.loads + one SQL read of the golden labels): {base:.2f} s  (runs: {_fmt(baselines)})")
        print(f"score_agreement scoring (read, validate, golden read, figures): {ours:.2f} s  (runs: {_fmt(scores)})")
        print(f"ratio: {ours / base:.2f}x (bar: 3x) — {'MET' if ours <= 3 * base else 'NOT MET'}")
        queue_pages(path, base)


# Static URLs without the manifest that collectstatic writes for gunicorn (the pages are rendered, not served).
@override_settings(
    STORAGES={**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
)
def queue_pages(path: Path, base: float) -> None:
    """The adjudication queue of the saved run as a superuser (every trainee's turns: the longest queue there
    is), against the same baseline: the first view (every difference worked out, then kept per session), the
    first and last page after it, the run's report page (first view, kept since the save; then again), and
    the queue's page and the report after an accepted decision (one session's golden labels written).

    The save queues the job that works the report out (services.RUN_REPORT_KEPT_AT_SAVE); here it is timed in
    this process, as a worker would run it, before anyone opens the report."""
    AnnotationRun.objects.filter(rater="bench-ai").delete()
    run = services.annotation_run_create(run_file=read_run(path), rater="bench-ai", file_name=path.name)
    start = time.perf_counter()
    views = keep_run_report(run.pk)  # the task, run here as a worker runs it
    took = time.perf_counter() - start
    print(f"the save's background job, the report worked out for {views} view(s): {took:.2f} s = {took / base:.2f}x")
    user, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    url = f"/admin/agreement/annotationrun/{run.pk}/adjudicate/"

    def view(path: str = url) -> float:
        start = time.perf_counter()
        response = client.get(path, HTTP_HOST="localhost", secure=True)
        took = time.perf_counter() - start
        assert response.status_code == 200, response.status_code
        return took

    first = view()
    total = len(services.run_differences(run, user))
    print(f"adjudication queue of {total:,} differences, first view: {first:.2f} s = {first / base:.2f}x baseline")
    for label, query in (("first page", ""), ("last page", "?page=999999")):
        times = [view(url + query) for _ in range(REPEATS)]
        took = statistics.median(times)
        print(f"  then the {label}: {took:.2f} s = {took / base:.2f}x baseline (runs: {_fmt(times)})")
    report = f"/admin/agreement/annotationrun/{run.pk}/report/"
    first = view(report)
    times = [view(report) for _ in range(REPEATS)]
    print(
        f"report page, first view: {first:.2f} s = {first / base:.2f}x baseline (aim: 1 s, "
        f"{'MET' if first <= 1.0 else 'NOT MET'}); then {statistics.median(times):.2f} s"
        f" = {statistics.median(times) / base:.2f}x (runs: {_fmt(times)})"
    )
    times, decided = [], []
    for difference in services.run_differences(run, user)[:REPEATS]:
        decided.append(difference.turn_id)
        services.adjudication_decide(
            run=run,
            turn=Turn.objects.get(pk=difference.turn_id),
            axis=difference.axis,
            label=difference.label,
            outcome="accepted",
            decided_by=user,
        )
        times.append(view())
    took = statistics.median(times)
    print(
        f"  the first page after an accepted decision: {took:.2f} s = {took / base:.2f}x baseline (runs: {_fmt(times)})"
    )
    # Those decisions wrote golden labels: a worker works the changed reports out again (tasks.refresh_run_reports,
    # queued on the write's commit); timed here as the worker would run it, then the report's next view.
    written = {turn.session_id for turn in Turn.objects.filter(pk__in=decided)}
    start = time.perf_counter()
    keeping.run_reports_refresh(written)
    took = time.perf_counter() - start
    print(f"the refresh job after those decisions (golden labels written): {took:.2f} s = {took / base:.2f}x")
    took = view(report)
    print(f"report page, first view after the refresh: {took:.2f} s = {took / base:.2f}x baseline")


def _fmt(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    main()
