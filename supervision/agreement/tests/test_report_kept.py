"""A run's report is worked out when the run is saved (services.RUN_REPORT_KEPT_AT_SAVE): whoever opens it
first, staff or a supervisor, gets it without reading the golden labels or any run's answers, and sees
exactly what the page worked out on the spot shows."""

from __future__ import annotations

import re
import time

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from supervision.agreement import keeping, services, tasks
from supervision.agreement.models import AnnotationRun, RunUpload
from supervision.agreement.tests.conftest import golden_lines, import_lines, run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.agreement.tests.test_admin import jsonl, upload
from supervision.labelling import turn_labels_update
from supervision.models import Turn


@pytest.fixture(autouse=True)
def _no_refresh_pending():
    """A refresh another test queued (then purged with its worker's queue) would hold this test's back."""
    tasks.forget_pending_refresh()


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def report_page(user, run: AnnotationRun) -> tuple[str, list[str]]:
    """The report as ``user`` sees it (without the per-response CSRF token) and the SQL it ran."""
    with CaptureQueriesContext(connection) as queries:
        response = client_for(user).get(f"/admin/agreement/annotationrun/{run.pk}/report/")
    assert response.status_code == 200
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", response.content.decode())
    return page, [q["sql"] for q in queries.captured_queries]


def golden_or_answer_reads(sql: list[str]) -> list[str]:
    return [q for q in sql if '"turn_technique"' in q or ('FROM "annotation_run_turn"' in q and '"client_states"' in q)]


def test_saving_a_run_keeps_its_report_for_staff_and_each_supervisor(cast, golden, django_capture_on_commit_callbacks):
    earlier = saved_run(run_lines("AG01"), rater="eval-ai-3")  # a version before: the trend and α use it
    other_rater = saved_run(run_lines("AG02"), rater="annotator-2", kind="human")
    with django_capture_on_commit_callbacks(execute=True):
        run = saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")
    viewers = (cast.staff, cast.supervisor_a, cast.supervisor_b)
    kept = {}
    for user in viewers:
        kept[user.username], sql = report_page(user, run)
        assert not golden_or_answer_reads(sql), user.username
    cache.clear()
    for user in viewers:
        worked_out, sql = report_page(user, run)
        assert golden_or_answer_reads(sql)  # nothing kept now: the page works its figures out
        assert worked_out == kept[user.username], user.username
    # each supervisor's report is their own trainees' (one session each), staff's covers both
    assert services.run_report(run, cast.supervisor_a).figures["turns"] == 6
    assert services.run_report(run, None).figures["turns"] == 12
    # the kept page holds the earlier version's trend and the other rater in α
    assert f"#{earlier.pk} " in kept["staff"] and other_rater.rater in kept["staff"]


def test_a_golden_label_written_after_the_save_is_in_the_next_view(cast, golden, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")
    before, _ = report_page(cast.supervisor_a, run)
    turn_labels_update(
        turn=Turn.objects.get(utterance_id="AG01-C-003"),
        changed_by=cast.supervisor_a,
        via="admin",
        techniques=["empathy"],
    )  # no refresh: its transaction's on-commit work is not run here
    after, sql = report_page(cast.supervisor_a, run)
    assert golden_or_answer_reads(sql) and after != before
    # supervisor_b's trainees were not written: their report is still the kept one
    _, sql = report_page(cast.supervisor_b, run)
    assert not golden_or_answer_reads(sql)


def test_a_golden_label_write_has_the_reports_it_changes_worked_out_again(
    cast, golden, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")
        unrelated = saved_run(run_lines("AG02"), rater="annotator-2", kind="human")
    before = {user.username: report_page(user, run)[0] for user in (cast.staff, cast.supervisor_a)}
    with django_capture_on_commit_callbacks(execute=True):
        turn_labels_update(
            turn=Turn.objects.get(utterance_id="AG01-C-003"),
            changed_by=cast.supervisor_a,
            via="admin",
            techniques=["empathy"],
        )
    assert keeping.runs_rating({Turn.objects.get(utterance_id="AG01-C-003").session_id}) == [run]
    kept = {}
    for user in (cast.staff, cast.supervisor_a, cast.supervisor_b):
        kept[user.username], sql = report_page(user, run)
        assert not golden_or_answer_reads(sql), user.username
    assert kept["staff"] != before["staff"] and kept["supervisor_a"] != before["supervisor_a"]
    # a run of supervisor_b's trainee only: nothing of what they see of it was written, it is still kept
    assert not golden_or_answer_reads(report_page(cast.supervisor_b, unrelated)[1])
    cache.clear()
    for user in (cast.staff, cast.supervisor_a, cast.supervisor_b):
        assert report_page(user, run)[0] == kept[user.username], user.username


def test_a_reimported_session_has_the_reports_of_its_runs_worked_out_again(
    cast, golden, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = saved_run(run_lines("AG01"), rater="eval-ai-3")
    before, _ = report_page(cast.supervisor_a, run)
    lines = golden_lines("AG01")
    lines[2]["techniques"] = ["empathy"]  # C-003, "none of these" before
    with django_capture_on_commit_callbacks(execute=True):
        import_lines(lines, "trainee_a")
    after, sql = report_page(cast.supervisor_a, run)
    assert not golden_or_answer_reads(sql) and after != before


def test_the_report_is_kept_only_for_those_who_may_open_it(cast, golden):
    import_lines(golden_lines("AG03"), "trainee_a")
    run = saved_run(run_lines("AG01") + run_lines("AG03"), rater="eval-ai-3")
    assert keeping.run_report_viewers(run) == [None, cast.supervisor_a]


def test_a_broker_that_does_not_answer_leaves_the_report_to_its_first_view(
    cast, golden, settings, caplog, django_capture_on_commit_callbacks
):
    from portal.celery import app

    before = app.conf.task_always_eager, app.conf.broker_url
    settings.REDIS_URL = app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens there
    app.conf.task_always_eager = False
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run = saved_run(run_lines("AG01"), rater="eval-ai-3")
    finally:
        app.conf.task_always_eager, app.conf.broker_url = before
    assert f"the report of annotation run {run.pk} is worked out when first opened" in caplog.text
    page, sql = report_page(cast.staff, run)
    assert golden_or_answer_reads(sql) and "eval-ai-3" in page


@pytest.mark.celery_worker
def test_a_worker_keeps_the_report_of_a_run_staff_upload(cast, worker, golden, tmp_path):
    client = client_for(cast.staff)
    upload(client, jsonl(run_lines("AG01") + run_lines("AG02")))
    with CaptureQueriesContext(connection) as queries:
        # the save redirects to the report, which waits for the worker rather than work it out beside it
        response = client.post(f"/admin/agreement/annotationrun/upload/{RunUpload.objects.get().pk}/", follow=True)
    assert response.status_code == 200 and response.redirect_chain[-1][0].endswith("/report/")
    assert not golden_or_answer_reads([q["sql"] for q in queries.captured_queries])
    wait_for_task(tmp_path / "worker.log", "agreement_report_keep")  # the ``worker`` fixture's log
    run = AnnotationRun.objects.get()
    for user in (cast.staff, cast.supervisor_a, cast.supervisor_b):
        _, sql = report_page(user, run)
        assert not golden_or_answer_reads(sql), user.username


@pytest.mark.celery_worker
def test_a_burst_of_label_writes_is_refreshed_by_one_job(cast, worker, golden, tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "REFRESH_DELAY_SECONDS", 1)  # (the worker fixture first: it purges the queue)
    log = tmp_path / "worker.log"  # the ``worker`` fixture's
    run = saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")
    wait_for_task(log, "agreement_report_keep")
    wait_for_task(log, "agreement_reports_refresh")  # the one the golden import queued
    for uid, techniques in (("AG01-C-003", ["empathy"]), ("AG01-C-004", ["empathy", "holding"])):
        turn_labels_update(
            turn=Turn.objects.get(utterance_id=uid), changed_by=cast.supervisor_a, via="admin", techniques=techniques
        )
    wait_for_task(log, "agreement_reports_refresh", times=2)
    time.sleep(tasks.REFRESH_DELAY_SECONDS + 1)  # a third refresh, had one been queued, would have run by now
    assert len(succeeded(log, "agreement_reports_refresh")) == 2
    kept, sql = report_page(cast.supervisor_a, run)
    assert not golden_or_answer_reads(sql)
    cache.clear()
    assert report_page(cast.supervisor_a, run)[0] == kept


def succeeded(log, name: str) -> list[str]:
    return re.findall(rf"Task supervision\.{name}\[[^\]]+\] succeeded", log.read_text())


def wait_for_task(log, name: str, *, times: int = 1, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(succeeded(log, name)) < times:
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.2)


def test_the_report_waits_for_a_running_keep_job_but_not_for_one_no_worker_took(cast, golden, monkeypatch, settings):
    from portal.celery import app

    run = saved_run(run_lines("AG01"), rater="eval-ai-3")
    monkeypatch.setattr(tasks, "KEEP_PICKUP_SECONDS", 0.3)
    before = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager, app.conf.broker_url = False, "memory://"  # queued where no worker listens
    settings.REDIS_URL = ""
    try:
        tasks.queue_run_report_keep(run.pk)
    finally:
        app.conf.task_always_eager, app.conf.broker_url = before
    started = time.monotonic()
    tasks.wait_for_keep(run.pk)
    assert 0.3 <= time.monotonic() - started < 2  # gave a worker its moment, then stopped waiting
    cache.set(tasks._KEEPING.format(run_id=run.pk), tasks._RUNNING)  # a worker is on it
    started = time.monotonic()
    tasks.wait_for_keep(run.pk, timeout=1)
    assert time.monotonic() - started >= 1
