"""The nightly trajectory step audits only what changed (counted), stores what a full recompute stores, and
gives the same rows whether it runs in one process or spreads the sessions over several."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command

from supervision.models import Session, TurnClientState
from supervision.testing import golden_session, write_jsonl
from supervision.trajectory.models import AuditedRevision, TrajectoryAudit
from supervision.trajectory.services import sessions_to_audit, trajectory_audit_sessions, trajectory_nightly

pytestmark = pytest.mark.django_db
DAY = dt.date(2026, 11, 30)


def import_lines(tmp_path, code: str, turns: int, *, worse: bool, trainee: str = "trainee_a") -> list[dict]:
    lines = golden_session(code, turns)
    for line in lines:
        if line["speaker"] == "client" and line["seq"] >= turns // 2 and worse:
            line["text"] = "I'm worthless. Nothing will ever change and I want to die."
            line["client_states"] = ["suicidal_ideation_admit"]
    call_command("import_transcripts", str(write_jsonl(tmp_path / f"{code}.jsonl", lines)), trainee=trainee)
    return lines


def stored_rows() -> list[tuple]:
    """Every stored audit, without the moment it was computed."""
    return list(
        TrajectoryAudit.objects.order_by("session_id", "window_index").values_list(
            "session_id",
            "window_index",
            "first_seq",
            "last_seq",
            "label",
            "score",
            "explanation",
            "states",
            "sycophancy_turns",
            "engine_version",
        )
    )


@pytest.fixture
def three_sessions(cast, tmp_path):
    for k, code in enumerate(("TN1", "TN2", "TN3")):
        import_lines(tmp_path, code, 14 + 3 * k, worse=k == 1)
    return {s.code: s.pk for s in Session.objects.filter(code__in=("TN1", "TN2", "TN3"))}


def test_it_audits_only_the_sessions_whose_rows_changed(three_sessions, tmp_path):
    first = trajectory_nightly(day=DAY)
    assert (first["sessions"], first["windows"]) == (3, 2 + 3 + 3)

    quiet = trajectory_nightly(day=DAY + dt.timedelta(days=1))
    assert quiet == {"day": "2026-12-01", "sessions": 0, "windows": 0, "turns": 0, "removed": 0, "queued": 0}

    # TN2 is re-imported with other labels and words, shorter; TN3 loses one client-state link
    lines = import_lines(tmp_path, "TN2", 9, worse=False)
    assert len(lines) == 9
    TurnClientState.objects.filter(turn__session_id=three_sessions["TN3"]).first().delete()
    assert sessions_to_audit() == sorted([three_sessions["TN2"], three_sessions["TN3"]])

    second = trajectory_nightly(day=DAY + dt.timedelta(days=2))
    assert (second["sessions"], second["turns"]) == (2, 9 + 20)
    assert second["removed"] == 2  # TN2 went from three windows to one
    incremental = stored_rows()

    full = trajectory_nightly(day=DAY + dt.timedelta(days=2), full=True)
    assert full["sessions"] == 3
    assert stored_rows() == incremental


def test_a_new_engine_version_audits_every_session_again(three_sessions):
    trajectory_nightly(day=DAY)
    AuditedRevision.objects.filter(session_id=three_sessions["TN1"]).update(engine_version="desg-0.9+old")
    assert trajectory_nightly(day=DAY)["sessions"] == 1


def test_an_audit_after_import_counts_as_done_for_the_night(three_sessions):
    trajectory_audit_sessions(session_ids=[three_sessions["TN1"]])
    assert trajectory_nightly(day=DAY)["sessions"] == 2


def test_worker_processes_store_the_same_rows_as_one_process(cast, transactional_db, tmp_path, monkeypatch):
    """Committed rows (transactional_db): the workers read and write on connections of their own."""
    from supervision.trajectory import services

    monkeypatch.setattr(services, "POOL_MIN_SESSIONS", 2)
    monkeypatch.setattr(services, "MIN_POOL_BATCH", 1)  # several batches per worker
    for k in range(6):
        import_lines(tmp_path, f"TP{k}", 11 + 4 * k, worse=k % 2 == 0)
    # committed imports queued their own audits: start the night from none
    TrajectoryAudit.objects.all().delete()
    AuditedRevision.objects.all().delete()
    one = trajectory_nightly(day=DAY, processes=1)
    assert one["sessions"] == 6
    serial = stored_rows()
    revisions = sorted(AuditedRevision.objects.values_list("session_id", "revision", "engine_version"))
    TrajectoryAudit.objects.all().delete()
    AuditedRevision.objects.all().delete()
    assert services._pool_size(6, 2) == 2
    spread = trajectory_nightly(day=DAY, processes=2)
    assert spread == one
    # read back on this process's connection, which the workers' start must have left working
    assert stored_rows() == serial
    assert sorted(AuditedRevision.objects.values_list("session_id", "revision", "engine_version")) == revisions
    assert trajectory_nightly(day=DAY, processes=2)["sessions"] == 0


def test_inside_a_transaction_the_audit_stays_in_this_process(cast, tmp_path, monkeypatch):
    """Workers with connections of their own would not see uncommitted rows: one process audits them."""
    from supervision.trajectory import services

    monkeypatch.setattr(services, "POOL_MIN_SESSIONS", 2)
    for k in range(3):
        import_lines(tmp_path, f"TQ{k}", 12, worse=k == 0)
    assert services._pool_size(3, 2) == 1
    assert trajectory_nightly(day=DAY, processes=2)["sessions"] == 3
    assert TrajectoryAudit.objects.filter(session__code="TQ0").exists()
