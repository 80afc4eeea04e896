"""Shared test fixtures: a fixed cast of users and helpers to build golden lines.

The cast: trainee_a (supervised by supervisor_a), trainee_b (supervised by supervisor_b), and
staff (the staff importer). Tests run against real PostgreSQL and Redis (see `make test`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from supervision.roles import Role
from supervision.services import portal_user_create_or_update
from taxonomy.seeding import sync_catalogue

PASSWORD = "test-pass-2026"
ROOT = Path(__file__).resolve().parent


def pytest_configure(config):
    from django.conf import settings

    # HTTP in tests; production redirects to HTTPS behind the proxy.
    settings.SECURE_SSL_REDIRECT = False
    # The cast's passwords cost about a second each with the production hasher; no test here is about
    # hashing strength (the log-in flows still go through Django's real authentication).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Static files straight from the source folders, as under DEBUG; the hashed, compressed copies of
    # production are tested through a real gunicorn after a real collectstatic (portal/tests/test_production.py).
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _postgres_only(request):
    if "django_db_setup" in request.fixturenames or request.node.get_closest_marker("django_db"):
        assert connection.vendor == "postgresql", "the suite runs against PostgreSQL (see make test)"


@pytest.fixture(autouse=True)
def _tasks_in_process(request):
    """Tasks queued by the code under test run in-process, so nothing lingers on the shared Redis broker;
    tests marked ``celery_worker`` talk to a real worker instead."""
    from portal.celery import app

    if request.node.get_closest_marker("celery_worker"):
        yield
        return
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = eager


@pytest.fixture
def taxonomy_tables(db):
    """Code tables filled from the catalogue (transactional tests flush the migration's seed)."""
    sync_catalogue()


@pytest.fixture
def cast(db, taxonomy_tables):
    supervisor_a = portal_user_create_or_update(username="supervisor_a", role=Role.SUPERVISOR, password=PASSWORD)
    supervisor_b = portal_user_create_or_update(username="supervisor_b", role=Role.SUPERVISOR, password=PASSWORD)
    trainee_a = portal_user_create_or_update(
        username="trainee_a", role=Role.TRAINEE, password=PASSWORD, supervisor_username="supervisor_a"
    )
    trainee_b = portal_user_create_or_update(
        username="trainee_b", role=Role.TRAINEE, password=PASSWORD, supervisor_username="supervisor_b"
    )
    staff = portal_user_create_or_update(username="staff", role=Role.STAFF, password=PASSWORD)

    class Cast:
        pass

    c = Cast()
    c.supervisor_a, c.supervisor_b, c.trainee_a, c.trainee_b, c.staff = (
        supervisor_a,
        supervisor_b,
        trainee_a,
        trainee_b,
        staff,
    )
    return c


def golden_line(session: str, seq: int, speaker: str = "", **fields) -> dict:
    """One valid golden line; counselor on even seqs, client on odd ones unless ``speaker`` says."""
    speaker = speaker or ("counselor" if seq % 2 == 0 else "client")
    letter = "C" if speaker == "counselor" else "K"
    line = {
        "utterance_id": f"{session}-{letter}-{seq // 2 + 1:03d}",
        "speaker": speaker,
        "stage": "탐색",
        "seq": seq,
        "text": f"합성 발화 {seq}",
        "techniques": ["reflection"] if speaker == "counselor" else [],
        "client_states": ["affect_contact"] if speaker == "client" else [],
        "comments": [],
        "nonverbal": [],
        "source": "test_synthetic",
    }
    line.update(fields)
    return line


def golden_session(session: str, turns: int, **fields) -> list[dict]:
    return [golden_line(session, seq, **fields) for seq in range(turns)]


def write_jsonl(path: Path, lines: list[dict | str]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n")
    return path


def _test_database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def private_redis():
    """A redis-server of the test's own on a free loopback port, which the test may kill."""
    from portal.testing import PrivateRedis

    server = PrivateRedis().start()
    yield server
    if server.process and server.process.poll() is None:
        server.process.kill()
        server.process.wait(timeout=10)


@pytest.fixture(scope="session")
def static_root(tmp_path_factory):
    """What `python manage.py collectstatic --noinput` gathers with DJANGO_DEBUG=0, once per run."""
    from portal.testing import collectstatic

    root = tmp_path_factory.mktemp("production") / "static"
    collectstatic(root)
    return root


@pytest.fixture
def production_server(transactional_db, static_root):
    """Starts ``gunicorn portal.wsgi:application`` with DJANGO_DEBUG=0 on the test database; call it with
    ``redis_url=`` (None: no Redis configured) and any other environment variables."""
    from portal.testing import Gunicorn, production_env

    servers = []

    def start(*, redis_url, database_url=None, workers=1, **extra):
        env = production_env(
            database_url=database_url or _test_database_url(), redis_url=redis_url, static_root=static_root, **extra
        )
        server = Gunicorn(env=env, workers=workers)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def worker(transactional_db):
    """A real `celery -A portal worker` on the real Redis, against the test database."""
    from django.conf import settings

    from portal.celery import app

    assert settings.REDIS_URL, "the worker test needs REDIS_URL"
    app.control.purge()
    env = {**os.environ, "DATABASE_URL": _test_database_url(), "DJANGO_CONN_MAX_AGE": "0"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"test-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if app.control.ping(timeout=1.0):
                break
            assert process.poll() is None, process.stdout.read()
        else:
            pytest.fail("the celery worker did not answer a ping within 60 s")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
