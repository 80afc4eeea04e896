"""Shared test fixtures: a fixed cast of users, the services tests start (helpers: supervision/testing.py).

The cast: trainee_a (supervised by supervisor_a), trainee_b (supervised by supervisor_b), and
staff (the staff importer). Tests run against real PostgreSQL and Redis (see `make test`).
"""

from __future__ import annotations

import os

import pytest
from django.db import connection

from supervision.testing import CHROMIUM, CHROMIUM_ARGS, database_url_under_test, make_cast
from taxonomy.seeding import sync_catalogue


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


@pytest.fixture(autouse=True)
def _no_pages_kept_from_before():
    """Kept trainee pages are keyed by user ids, and each test database hands the same ids out again: no
    test may be served a page another test (or run) left in Redis."""
    from supervision import pagecache

    pagecache.forget_all()


@pytest.fixture
def taxonomy_tables(db):
    """Code tables filled from the catalogue (transactional tests flush the migration's seed)."""
    sync_catalogue()


@pytest.fixture
def cast(db):
    return make_cast()


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
            database_url=database_url or database_url_under_test(),
            redis_url=redis_url,
            static_root=static_root,
            **extra,
        )
        server = Gunicorn(env=env, workers=workers)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def worker(transactional_db, tmp_path):
    """A real `celery -A portal worker` on the real Redis, against the test database."""
    from django.conf import settings

    from portal.celery import app
    from portal.testing import Worker

    assert settings.REDIS_URL, "the worker test needs REDIS_URL"
    app.control.purge()
    env = {**os.environ, "DATABASE_URL": database_url_under_test(), "DJANGO_CONN_MAX_AGE": "0"}
    # Worker.start waits for the worker's "ready." line: it consumes from then on. No app.control.ping here:
    # the ping leaves a reply consumer with a BRPOP in flight in this process's broker pool, and a process
    # forked later (the trajectory audit's workers) would hang in kombu's after-fork clean-up waiting for it.
    started = Worker(env=env).start(tmp_path / "worker.log")
    try:
        yield started.process
    finally:
        started.stop()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright, one per test module."""
    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test itself are safe.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def http_settings(settings):
    """The live server speaks plain HTTP: cookies marked Secure would never be sent back."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False


@pytest.fixture
def csp_violations():
    """Every Content-Security-Policy violation Chromium reports on any page of the test; must stay empty."""
    seen: list[str] = []

    def watch(context):
        def on_page(page):
            page.on(
                "console",
                lambda msg: seen.append(f"{page.url}: {msg.text}") if "Content Security Policy" in msg.text else None,
            )

        context.on("page", on_page)
        return context

    watch.seen = seen
    yield watch
    assert seen == [], "\n".join(seen)
