"""Redis is optional at run time (CONTRACT §1): with it down, pages, the admin, the API and token log-in keep
answering; throttles and caches let requests through with a warning; background jobs run in-process or are
refused in Korean. Never a 5xx. Each test kills a redis-server of its own (never the shared one)."""

from __future__ import annotations

import json
import logging
import time

import pytest
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from portal.celery import app
from portal.queue import QUEUE_DOWN_MESSAGE
from portal.testing import Browser, production_password
from supervision.gauge.tests.conftest import fixture_sessions, target_bands  # noqa: F401 (fixtures)
from supervision.importing.models import ImportJob
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session
from supervision.testing import PASSWORD
from supervision.trajectory.models import TrajectoryAudit

TOKEN = "/api/v1/auth/token/"


@pytest.fixture
def broker_at():
    """Points the Celery app at a broker and stops running tasks eagerly, as a production process does."""
    before = app.conf.task_always_eager, app.conf.broker_url

    def point(url: str) -> None:
        app.conf.task_always_eager = False
        app.conf.broker_url = url

    yield point
    app.conf.task_always_eager, app.conf.broker_url = before


@pytest.fixture
def redis_gone(settings, private_redis, broker_at):
    """The in-process portal configured for the private Redis (cache and broker), which is then killed."""
    settings.REDIS_URL = private_redis.url
    settings.CACHES = {
        "default": {
            "BACKEND": "portal.cache.DegradingRedisCache",
            "LOCATION": private_redis.url,
            "KEY_PREFIX": "portal",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    broker_at(private_redis.url)
    caches["default"].set("before", 1)  # the cache really was in use
    private_redis.kill()
    return private_redis


@pytest.mark.django_db
def test_the_token_log_in_answers_and_the_throttle_lets_it_through_with_a_warning(cast, redis_gone, settings, caplog):
    caplog.set_level(logging.WARNING, logger="portal.cache")
    from rest_framework.throttling import ScopedRateThrottle

    allowed, _ = ScopedRateThrottle().parse_rate(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["auth_token"])
    client = APIClient()
    started = time.monotonic()
    # More than the throttle allows from one address (a different username each time, below the lockout).
    statuses = [
        client.post(TOKEN, {"username": f"nobody{n}", "password": "guess"}, format="json").status_code
        for n in range(allowed + 2)
    ]
    assert statuses == [400] * (allowed + 2)  # counted nowhere, so never throttled: allowed rather than a 500
    good = client.post(TOKEN, {"username": "trainee_a", "password": PASSWORD}, format="json")
    assert good.status_code == 200 and good.json()["token"]
    assert time.monotonic() - started < 5
    assert any("Redis cache unavailable" in r.getMessage() for r in caplog.records)
    # One warning per interval, not one per request.
    assert sum("Redis cache unavailable" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.django_db
def test_an_import_audits_its_sessions_in_process_when_the_queue_is_down(
    cast, redis_gone, client, django_capture_on_commit_callbacks, tmp_path
):
    path = write_csv(tmp_path / "small.csv", ENGLISH_HEADER, session_rows("RDN1", 16))
    assert client.login(username="staff", password=PASSWORD)
    url = reverse("admin:supervision_session_import")
    with django_capture_on_commit_callbacks(execute=True):
        preview = client.post(url, {"file": SimpleUploadedFile("small.csv", path.read_bytes())})
    assert preview.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        written = client.post(preview["Location"])
    assert written.status_code == 302
    session = Session.objects.get(code="RDN1")
    assert TrajectoryAudit.objects.filter(session=session).exists()


@pytest.mark.django_db
def test_a_large_upload_is_refused_in_korean_when_the_queue_is_down(
    cast, redis_gone, client, settings, django_capture_on_commit_callbacks, tmp_path
):
    settings.IMPORT_ASYNC_THRESHOLD_BYTES = 100
    path = write_csv(tmp_path / "large.csv", ENGLISH_HEADER, session_rows("RDN2", 40))
    assert client.login(username="staff", password=PASSWORD)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:supervision_session_import"), {"file": SimpleUploadedFile("large.csv", path.read_bytes())}
        )
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.FAILED
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert QUEUE_DOWN_MESSAGE in page.content.decode()
    assert not Session.objects.filter(code="RDN2").exists()


@pytest.mark.django_db
def test_confirming_a_large_write_with_the_queue_down_keeps_the_preview_and_says_why(
    cast, private_redis, settings, client, broker_at, django_capture_on_commit_callbacks, tmp_path
):
    from supervision.importing import jobs

    settings.IMPORT_ASYNC_THRESHOLD_BYTES = 100
    path = write_csv(tmp_path / "large.csv", ENGLISH_HEADER, session_rows("RDN3", 40))
    job = jobs.import_job_create(name="large.csv", data=path.read_bytes(), created_by=cast.staff)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.import_job_start(job=job, mode=ImportJob.Mode.PREVIEW)  # eager: previewed in-process
    job.refresh_from_db()
    assert job.status == ImportJob.Status.PREVIEWED

    broker_at(private_redis.url)
    settings.REDIS_URL = private_redis.url
    private_redis.kill()
    assert client.login(username="staff", password=PASSWORD)
    url = reverse("admin:supervision_session_import_job", args=[job.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, follow=True)
    assert response.status_code == 200
    assert QUEUE_DOWN_MESSAGE in response.content.decode()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.PREVIEWED  # confirm again once the queue is back


@pytest.mark.django_db
def test_recomputing_gauges_with_the_queue_down_says_so_in_korean(fixture_sessions, redis_gone, client):  # noqa: F811
    from supervision.gauge.models import GaugeSnapshot
    from supervision.gauge.services import gauge_compute
    from supervision.gauge.tests.conftest import DAY

    gauge_compute(day=DAY)
    snapshot = GaugeSnapshot.objects.filter(session=None).first()
    assert client.login(username="staff", password=PASSWORD)
    url = reverse("admin:gauge_gaugesnapshot_changelist")
    response = client.post(url, {"action": "recompute", "_selected_action": [snapshot.pk]}, follow=True)
    assert response.status_code == 200
    assert QUEUE_DOWN_MESSAGE in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_with_redis_killed_gunicorn_still_serves_pages_the_admin_the_api_and_token_log_in(
    cast, production_server, private_redis
):
    for user in (cast.trainee_a, cast.staff, cast.supervisor_a):
        production_password(user, PASSWORD)
    server = production_server(redis_url=private_redis.url, workers=2)
    trainee = Browser(server)
    assert trainee.log_in("trainee_a", PASSWORD).status == 302

    private_redis.kill()
    started = time.monotonic()
    answers = {}
    answers["login page"] = server.request("GET", "/accounts/login/").status
    answers["feedback"] = trainee.get("/feedback/").status
    answers["session api"] = trainee.get("/api/v1/sessions/").status
    staff = Browser(server)
    answers["admin log-in"] = staff.log_in("staff", PASSWORD, path="/admin/login/").status
    answers["admin"] = staff.get("/admin/").status
    answers["admin sessions"] = staff.get("/admin/supervision/session/").status
    token = server.request(
        "POST",
        TOKEN,
        body=json.dumps({"username": "supervisor_a", "password": PASSWORD}),
        headers={"Content-Type": "application/json"},
    )
    answers["token"] = token.status
    bad = server.request(
        "POST",
        TOKEN,
        body='{"username": "supervisor_a", "password": "x"}',
        headers={"Content-Type": "application/json"},
    )
    answers["wrong password"] = bad.status
    answers["api with token"] = server.request(
        "GET", "/api/v1/sessions/", headers={"Authorization": f"Token {token.json()['token']}"}
    ).status
    answers["healthz"] = server.request("GET", "/healthz").status
    assert answers == {
        "login page": 200,
        "feedback": 200,
        "session api": 200,
        "admin log-in": 302,
        "admin": 200,
        "admin sessions": 200,
        "token": 200,
        "wrong password": 400,
        "api with token": 200,
        "healthz": 503,
    }, server.log()
    assert time.monotonic() - started < 20
    assert "Redis cache unavailable" in server.log()
