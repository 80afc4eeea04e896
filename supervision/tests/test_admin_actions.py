"""Every admin action × every role × a foreign, an empty and a nonexistent selection.

An action may only ever touch (or hand out) rows the user can see: a selection that narrows to nothing
does nothing — it never means "everything" — and nothing answers 5xx.
"""

from __future__ import annotations

import datetime

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import RequestFactory

from supervision.commenting import supervisor_comment_create
from supervision.importing.services import import_transcripts
from supervision.models import CommentAuthor, CommentKind, Session, SupervisorComment
from supervision.nightly import nightly_review
from supervision.testing import golden_session

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 3, 3)
NONEXISTENT = "987654321"
FOREIGN_MARKS = ("ACT_B1", "trainee_b", "B의 비밀 논평")  # what supervisor_a must never receive


@pytest.fixture
def world(cast):
    for code, trainee, supervisor, note in (
        ("ACT_A1", "trainee_a", cast.supervisor_a, "A에게 남긴 논평"),
        ("ACT_B1", "trainee_b", cast.supervisor_b, "B의 비밀 논평"),
    ):
        lines = golden_session(code, 8, held_on=DAY.isoformat(), text=f"{code} 합성 발화")
        report = import_transcripts(rows=enumerate(lines, start=1), trainee_username=trainee)
        assert report.ok, report.errors
        turn = Session.objects.get(code=code).turns.order_by("seq").first()
        supervisor_comment_create(turn=turn, kind=CommentKind.CRITIQUE, text=note, written_by=supervisor)
        SupervisorComment.objects.create(
            turn=turn, kind=CommentKind.CRITIQUE, text="AI 제안", author=CommentAuthor.AI, is_suggestion=True
        )
    nightly_review(day=DAY)
    return cast


def _row_counts() -> dict[str, int]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


def _foreign_pk(model_admin, owner) -> str | None:
    """The pk of a row of trainee_b's (or, for tables without a trainee, any row); None if the table is empty."""
    path = getattr(model_admin, "trainee_path", None)
    rows = model_admin.model._default_manager.all()
    if path:
        rows = rows.filter(**{path: owner})
    pk = rows.order_by("pk").values_list("pk", flat=True).first()
    return None if pk is None else str(pk)


def _actions_for(user) -> list[tuple[str, str]]:
    """(changelist URL, action name) of every action the admin offers ``user``."""
    request = RequestFactory().get("/admin/")
    request.user = user
    found = []
    for model, model_admin in admin.site._registry.items():
        if not model_admin.has_view_or_change_permission(request):
            continue
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        found.extend((url, name) for name in model_admin.get_actions(request))
    return found


def test_the_matrix_covers_the_export_actions(world):
    offered = {name for _url, name in _actions_for(world.supervisor_a)}
    assert {"export_csv", "export_xlsx"} <= offered


@pytest.mark.parametrize("role", ["supervisor_a", "staff", "trainee_a"])
@pytest.mark.parametrize("selection", ["foreign", "empty", "nonexistent"])
def test_an_action_on_a_selection_outside_the_users_reach_does_nothing(client, world, role, selection):
    user = getattr(world, role)
    client.force_login(user)
    # Trainees never reach the admin; walk the supervisor's actions for them.
    actions = _actions_for(user if role != "trainee_a" else world.supervisor_a)
    assert actions
    for url, action in actions:
        model_admin = admin.site._registry[apps.get_model(*url.strip("/").split("/")[1:3])]
        data = {"action": action, "index": "0"}
        if selection == "foreign":
            pk = _foreign_pk(model_admin, world.trainee_b)
            if pk is None:
                continue
            data["_selected_action"] = pk
        elif selection == "nonexistent":
            data["_selected_action"] = NONEXISTENT
        before = _row_counts()
        response = client.post(url, data)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code < 500, (url, action)
        if role == "trainee_a":
            assert response.status_code == 302 and "/admin/login/" in response["Location"], (url, action)
        if role == "supervisor_a" or selection != "foreign":
            # Nothing of another supervisor's trainee leaves the server, and no file of "all" rows either.
            assert "Content-Disposition" not in response, (url, action, selection)
            for mark in FOREIGN_MARKS if role == "supervisor_a" else ():
                assert mark.encode() not in body, (url, action, mark)
        if action != "recompute":  # queues a job for the day; writes nothing here either way
            assert _row_counts() == before, (url, action, selection)


def test_a_supervisor_exports_only_their_own_trainees_sessions(client, world):
    own = Session.objects.get(code="ACT_A1")
    foreign = Session.objects.get(code="ACT_B1")
    client.force_login(world.supervisor_a)
    response = client.post(
        "/admin/supervision/session/",
        {"action": "export_csv", "index": "0", "_selected_action": [own.pk, foreign.pk]},
    )
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode()
    assert "ACT_A1-C-001" in body
    assert "ACT_B1" not in body and "B의 비밀 논평" not in body


def test_staff_export_the_sessions_they_select(client, world):
    foreign = Session.objects.get(code="ACT_B1")
    client.force_login(world.staff)
    response = client.post(
        "/admin/supervision/session/", {"action": "export_xlsx", "index": "0", "_selected_action": [foreign.pk]}
    )
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="sessions_')
