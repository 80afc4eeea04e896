"""A small world for the API tests: one session per trainee, each with a supervisor's critique and an
unaccepted AI suggestion, reachable by name so that a matrix row can say ``{"pk": "session_a"}``."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from supervision.agreement.tests.factories import saved_run
from supervision.api.tests.factories import add_comments, add_disclosure
from supervision.tags.services import tag_evidence_add
from supervision.testing import import_session
from supervision.transitions.tests.factories import saved_persona_run

ROLES = ("anonymous", "trainee_a", "trainee_b", "supervisor_a", "supervisor_b", "staff")


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Throttle counters live in the cache (Redis under test); one test's requests must not limit the next.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world(cast):
    return make_world(cast)


@pytest.fixture(scope="module")
def module_world(django_db_setup, django_db_blocker):
    """``world`` built once for a whole module whose tests only read it or write what they undo: it is
    built in a transaction left open until the module's last test and then rolled back, and each test runs
    in a savepoint inside it (its ``django_db`` mark), so what one test writes is gone before the next. Built
    per test, the world was a third of the suite's set-up (the role matrix's 354 tests). Not for a module
    with transactional tests: they empty the database, and pytest-django runs them last, outside this
    transaction."""
    from django.db import transaction

    from portal.celery import app
    from supervision.testing import make_cast

    eager, app.conf.task_always_eager = app.conf.task_always_eager, True  # as _tasks_in_process does per test
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            objects = make_world(make_cast())
        except BaseException:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)
            raise
        finally:
            app.conf.task_always_eager = eager
    yield objects
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


def make_world(cast) -> dict:
    session_a = import_session("WA01", 6, "trainee_a", held_on="2026-03-02")
    session_b = import_session("WB01", 6, "trainee_b", held_on="2026-03-03")
    objects = {
        "trainee_a": cast.trainee_a,
        "trainee_b": cast.trainee_b,
        "supervisor_a": cast.supervisor_a,
        "supervisor_b": cast.supervisor_b,
        "staff": cast.staff,
        "session_a": session_a,
        "session_b": session_b,
        "turn_a": session_a.turns.order_by("seq").first(),
        "turn_b": session_b.turns.order_by("seq").first(),
        "comment_a": add_comments(session_a, cast.supervisor_a),
        "comment_b": add_comments(session_b, cast.supervisor_b),
        "safety_event_a": add_disclosure(session_a),
        "safety_event_b": add_disclosure(session_b),
        # An evaluation AI's run over trainee_a's session only (supervisor_b has none of its turns).
        "run_a": saved_run(
            [{"utterance_id": t.utterance_id, "stage": "탐색"} for t in session_a.turns.order_by("seq")],
            rater="eval-ai-world",
        ),
        # A persona engine's simulated session, scored against the golden table.
        "persona_run": saved_persona_run(
            [
                {"utterance_id": "PW01-K-001", "seq": 0, "speaker": "client", "client_states": ["defensive"]},
                {"utterance_id": "PW01-C-001", "seq": 1, "speaker": "counselor", "techniques": ["empathy"]},
                {"utterance_id": "PW01-K-002", "seq": 2, "speaker": "client", "client_states": ["affect_contact"]},
            ],
            rater="persona-world",
        ),
    }
    tag_evidence_add(
        trainee_id=cast.trainee_a.pk,
        tag="overuses_relational",
        event="관계 형성 기법 비중이 범위 위",
        session_id=session_a.pk,
    )
    return objects


@pytest.fixture
def client_as(world):
    """``client_as("trainee_a")`` — a client logged in (session) as that member of the cast."""

    def make(role: str) -> APIClient:
        client = APIClient()
        if role != "anonymous":
            client.force_login(world[role])
        return client

    return make
