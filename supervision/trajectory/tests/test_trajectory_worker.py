"""The scheduled night runs in a Celery prefork child, which may not start processes: a first night's
audits are shared with the worker's other children as chunk tasks (supervision.nightly_chunk), and end as
one process ends."""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest
from django.conf import settings

from portal.testing import Worker
from supervision.models import Session
from supervision.testing import database_url_under_test, golden_session, import_lines
from supervision.trajectory.models import AuditedRevision, TrajectoryAudit
from supervision.trajectory.services import trajectory_nightly

DAY = dt.date(2026, 11, 30)


def stored_rows() -> list[tuple]:
    return list(
        TrajectoryAudit.objects.order_by("session_id", "window_index").values_list(
            "session_id", "window_index", "label", "score", "explanation", "states", "sycophancy_turns"
        )
    )


@pytest.mark.celery_worker
def test_a_prefork_worker_shares_a_first_night_between_its_children(cast, transactional_db, tmp_path):
    from portal.celery import app

    count = 14
    for k in range(count):
        import_lines(golden_session(f"TW{k:02d}", 12 + k), trainee="trainee_a")
    sessions = set(Session.objects.values_list("pk", flat=True))
    assert len(sessions) == count
    expected = trajectory_nightly(day=DAY, full=True, processes=1)
    assert expected["sessions"] == count
    one_process = stored_rows()
    TrajectoryAudit.objects.all().delete()
    AuditedRevision.objects.all().delete()

    assert settings.REDIS_URL, "the worker test needs REDIS_URL"
    app.control.purge()
    env = {
        **os.environ,
        "DATABASE_URL": database_url_under_test(),
        "DJANGO_CONN_MAX_AGE": "0",
        "TRAJECTORY_AUDIT_PROCESSES": "2",
        "NIGHTLY_CHUNK_SESSIONS": "3",
    }
    worker = Worker(env=env, pool="prefork", concurrency=2).start(tmp_path / "worker.log")
    try:
        result = app.send_task("supervision.nightly_review", kwargs={"day": DAY.isoformat()}).get(timeout=180)
        # every session audited in a chunk task, none left for the step itself
        assert result["chunks"]["trajectory_prepare"] == count, result
        assert result["steps"]["supervision.trajectory.services.trajectory_nightly"]["sessions"] == 0, result
        assert set(AuditedRevision.objects.values_list("session_id", flat=True)) == sessions
        # the chunks ran in both children, besides each other
        children = re.findall(r"/([\w-]+)\] Task supervision\.nightly_chunk\[[^\]]+\] succeeded", worker.log())
        assert len(children) == 5 and len(set(children)) == 2, worker.log()[-3000:]
    finally:
        worker.stop()
    assert stored_rows() == one_process
