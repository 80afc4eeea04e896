"""A big night split into chunk tasks (supervision/nightly.py) gives the same stored rows whoever runs it: in
one process without chunks, through one real Celery worker, through two (as on two machines). And a
second night sent while one runs does nothing."""

from __future__ import annotations

import datetime
import os
import re
import tempfile
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings

from portal.celery import app
from portal.testing import Worker
from supervision import nightly
from supervision.gauge.locks import LOCK_NAME
from supervision.gauge.models import GaugeSnapshot, SessionTally
from supervision.gauge.tests import two_backends
from supervision.gauge.tests.conftest import (  # noqa: F401 (target_bands is a fixture)
    DAY,
    session_s1,
    session_s2,
    session_s3_outside_window,
    session_s4,
    target_bands,
)
from supervision.importing.services import import_transcripts
from supervision.importing.sources import rows_from_path
from supervision.models import Session, SupervisorComment
from supervision.safety.models import SuggestedRevision
from supervision.tags.models import FedSession, TraineeTag
from supervision.testing import database_url_under_test, golden_session, write_jsonl
from supervision.trajectory.models import AuditedRevision, TrajectoryAudit

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]
CHUNK_SESSIONS = 2
TALLIES = "supervision.gauge.aggregate.tallies_prepare"
TECHNIQUES = ["reflection", "empathy", "facilitative_question", "cognitive_restructuring", "psychoeducation"]


def other_sessions() -> list[dict]:
    """Ten sessions of two trainees held on DAY, of different lengths and technique mixes; in the even ones
    the client's second half turns hopeless with disclosures (harmful windows, safety events)."""
    lines = []
    for k in range(10):
        code = f"SO{k}"
        session = golden_session(
            code, 12 + 3 * k, trainee="trainee_a" if k % 3 else "trainee_b", held_on=DAY.isoformat()
        )
        for line in session:
            if line["speaker"] == "counselor":
                line["techniques"] = [TECHNIQUES[(line["seq"] // 2 + k) % (2 + k % 4)]]
            elif k % 2 == 0 and line["seq"] >= len(session) // 2:
                line["text"] = "I'm worthless. Nothing will ever change and I want to die."
                line["client_states"] = ["suicidal_ideation_admit"]
        lines += session
    return lines


def import_all() -> None:
    lines = session_s1() + session_s2() + session_s3_outside_window() + session_s4() + other_sessions()
    with tempfile.TemporaryDirectory() as tmp:
        report = import_transcripts(rows=rows_from_path(write_jsonl(Path(tmp) / "night.jsonl", lines)))
    assert not report.errors, report.errors


def forget_the_night() -> None:
    """Every row a night derives, gone: the next night is a first night again."""
    for model in (TrajectoryAudit, AuditedRevision, SessionTally, GaugeSnapshot, FedSession, SuggestedRevision):
        model.objects.all().delete()
    TraineeTag.objects.all().delete()
    SupervisorComment.objects.filter(is_suggestion=True).delete()


def stored_night() -> dict:
    """The night's rows without database ids or moments: snapshots, suggestions and tags (with their
    evidence and contradictions) as the two-backend test compares them, and every audit and kept mark."""
    code = dict(Session.objects.values_list("id", "code"))
    audits = {
        (code[row["session_id"]], row["window_index"]): {k: v for k, v in row.items() if k not in ("id", "computed_at")}
        for row in TrajectoryAudit.objects.values()
    }
    for row in audits.values():
        row.pop("session_id")
    tallies = {
        code[s]: (tally, events)
        for s, tally, events in SessionTally.objects.values_list("session_id", "tally", "events")
    }
    return {
        **two_backends.dump(),
        "audits": audits,
        "tallies": tallies,
        "audited": sorted((code[s], v) for s, v in AuditedRevision.objects.values_list("session_id", "engine_version")),
        "fed": sorted((code[s], d) for s, d in FedSession.objects.values_list("session_id", "figures_digest")),
        "suggested": sorted(code[s] for s in SuggestedRevision.objects.values_list("session_id", flat=True)),
    }


def start_worker(tmp_path, name: str) -> Worker:
    env = {
        **os.environ,
        "DATABASE_URL": database_url_under_test(),
        "DJANGO_CONN_MAX_AGE": "0",
        "NIGHTLY_CHUNK_SESSIONS": str(CHUNK_SESSIONS),
        "NIGHTLY_CHUNK_TRAINEES": "1",
    }
    return Worker(env=env).start(tmp_path / f"{name}.log")


def chunks_run(worker: Worker) -> int:
    return len(re.findall(r"Task supervision\.nightly_chunk\[[^\]]+\] succeeded", worker.log()))


def night_through() -> dict:
    result = app.send_task("supervision.nightly_review", kwargs={"day": DAY.isoformat()}).get(timeout=240)
    assert "skipped" not in result, result
    return result


@pytest.mark.usefixtures("target_bands")
def test_a_first_night_through_two_workers_stores_what_one_worker_and_one_process_store(cast, tmp_path):
    assert settings.REDIS_URL, "the worker test needs REDIS_URL"
    import_all()
    sessions = Session.objects.count()
    work = nightly.pending_work(day=DAY)
    assert len(nightly.plan(work, size=CHUNK_SESSIONS)) >= sessions // CHUNK_SESSIONS

    # the reference: the steps in this process, no chunks
    forget_the_night()
    nightly.nightly_review(day=DAY)
    in_process = stored_night()
    assert in_process["audits"] and in_process["tags"] and in_process["suggestions"] and in_process["snapshots"]
    assert any(key.split()[1].startswith("safety:") for key in in_process["suggestions"])

    forget_the_night()
    app.control.purge()  # the imports queued their audits: the nights start from nothing derived
    one = start_worker(tmp_path, "one")
    try:
        result = night_through()
    finally:
        one.stop()
    chunks = result["chunks"]
    # a round of session chunks, then, once the gauge step has written the snapshots, one chunk per trainee
    assert chunks["tasks"] == len(nightly.plan(work, size=CHUNK_SESSIONS)) + 2 and chunks["tasks"] > 4, result
    assert chunks["tags_prepare"] == 2, result
    assert chunks["trajectory_prepare"] == sessions, result  # every session audited in a chunk ...
    steps = result["steps"]
    assert steps["supervision.trajectory.services.trajectory_nightly"]["sessions"] == 0, result  # ... none after
    assert steps["supervision.tags.nightly.tags_nightly"]["snapshots"] == 0, result  # the trainees' chunks read them
    assert chunks_run(one) == chunks["tasks"]
    through_one = stored_night()
    assert through_one == in_process

    forget_the_night()
    first, second = start_worker(tmp_path, "first"), start_worker(tmp_path, "second")
    try:
        # two nights sent at once: one runs, the other finds the lock held and does nothing
        sent = [app.send_task("supervision.nightly_review", kwargs={"day": DAY.isoformat()}) for _ in range(2)]
        outcomes = [r.get(timeout=240) for r in sent]
    finally:
        first.stop()
        second.stop()
    assert sorted("skipped" in outcome for outcome in outcomes) == [False, True], outcomes
    ran = next(outcome for outcome in outcomes if "skipped" not in outcome)
    assert ran["chunks"] == chunks
    assert chunks_run(first) > 0 and chunks_run(second) > 0, (chunks_run(first), chunks_run(second))
    assert chunks_run(first) + chunks_run(second) == chunks["tasks"]
    assert stored_night() == in_process
    assert not redis.Redis.from_url(settings.REDIS_URL).exists(LOCK_NAME)  # released by the night's last task


@pytest.mark.usefixtures("target_bands")
def test_a_night_with_a_failed_chunk_releases_the_lock_and_the_next_night_repairs_it(cast, tmp_path):
    """A chunk that fails rolls back whole: nothing half-written, the lock is released, and the next night
    does those sessions again and ends where an undisturbed night ends."""
    import_all()
    forget_the_night()
    nightly.nightly_review(day=DAY)
    undisturbed = stored_night()
    forget_the_night()
    app.control.purge()
    # one chunk fails at its very end: a trigger refuses the last row its transaction writes, the mark that
    # one session's safety suggestions were made (its tallies and audits are written by then)
    victim = nightly.pending_work(day=DAY)["supervision.safety.services.safety_prepare"][CHUNK_SESSIONS]
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION night_test_refuse() RETURNS trigger AS $$ BEGIN "
            f"IF NEW.session_id = {victim} THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END; "
            "$$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER night_test_refuse BEFORE INSERT ON safety_suggested_revision "
            "FOR EACH ROW EXECUTE FUNCTION night_test_refuse()"
        )
    planned = nightly.plan(nightly.pending_work(day=DAY), size=CHUNK_SESSIONS)
    (failed,) = [chunk for chunk in planned if any(victim in ids for ids in chunk.values())]
    worker = start_worker(tmp_path, "failing")
    try:
        result = app.send_task("supervision.nightly_review", kwargs={"day": DAY.isoformat()})
        with pytest.raises(Exception, match="refused for the test"):
            result.get(timeout=240)
        locks = redis.Redis.from_url(settings.REDIS_URL)
        deadline = datetime.datetime.now() + datetime.timedelta(seconds=60)
        while locks.exists(LOCK_NAME):
            assert datetime.datetime.now() < deadline, "the failed night kept the lock"
            time.sleep(0.2)
        # the failed chunk left none of its rows (its sessions are pending again, for every part); the others
        # are done and stay done
        assert nightly.pending_work(day=DAY) == {
            part: failed.get(part, []) for _pending, part in settings.NIGHTLY_SESSION_WORK
        }
        assert not TrajectoryAudit.objects.filter(session_id__in={s for ids in failed.values() for s in ids}).exists()
        assert not SessionTally.objects.filter(session_id__in=failed.get(TALLIES, [])).exists()
        assert TrajectoryAudit.objects.exists()
        with connection.cursor() as cursor:
            cursor.execute(
                "DROP TRIGGER night_test_refuse ON safety_suggested_revision; DROP FUNCTION night_test_refuse()"
            )
        repaired = app.send_task("supervision.nightly_review", kwargs={"day": DAY.isoformat()}).get(timeout=240)
    finally:
        worker.stop()
    assert "skipped" not in repaired
    assert stored_night() == undisturbed
