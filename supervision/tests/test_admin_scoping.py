"""What the admin shows a supervisor stays inside their trainees, and hostile query strings never 500.

The tag admin's session widget and the trainee filters of every change list; then a fuzz of every admin
and feedback page's GET parameters with strings that broke them before ('²', NUL, …).
"""

from __future__ import annotations

import datetime

import pytest
from django.apps import apps
from django.contrib import admin

from supervision.commenting import supervisor_comment_create
from supervision.importing.services import import_transcripts
from supervision.models import CommentKind, Session
from supervision.nightly import nightly_review
from supervision.tags.models import TraineeTag
from supervision.tags.services import tag_evidence_add
from supervision.testing import form_data, golden_session

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 3, 3)
HOSTILE = ("²", "\x00", "٣", "-1", "9" * 30, "'\"<>%", "1 OR 1=1", "")


@pytest.fixture
def world(cast):
    sessions = {}
    for code, trainee, supervisor in (
        ("SCP_A1", "trainee_a", cast.supervisor_a),
        ("SCP_B1", "trainee_b", cast.supervisor_b),
    ):
        lines = golden_session(code, 12, held_on=DAY.isoformat(), text=f"{code} 합성 발화")
        report = import_transcripts(rows=enumerate(lines, start=1), trainee_username=trainee)
        assert report.ok, report.errors
        sessions[code] = session = Session.objects.get(code=code)
        session.title = f"{code} 비공개 제목"
        session.save(update_fields=["title"])
        supervisor_comment_create(
            turn=session.turns.first(), kind=CommentKind.CRITIQUE, text="논평", written_by=supervisor
        )
    nightly_review(day=DAY)
    tag_evidence_add(
        trainee_id=cast.trainee_a.pk,
        tag="overuses_relational",
        event="관계 기법 비중이 범위 위",
        session_id=sessions["SCP_A1"].pk,
        recorded_by=cast.supervisor_a,
    )
    return sessions


def test_the_tag_admin_never_renders_a_session_outside_the_users_reach(client, cast, world):
    tag = TraineeTag.objects.get(trainee=cast.trainee_a, tag="overuses_relational")
    url = f"/admin/tags/traineetag/{tag.pk}/change/"
    client.force_login(cast.supervisor_a)
    data = form_data(client.get(url).content.decode(), "traineetag_form")
    new_row = int(data["evidence-TOTAL_FORMS"]) - 1  # the blank row for new evidence
    data.update({f"evidence-{new_row}-session": str(world["SCP_B1"].pk), f"evidence-{new_row}-event": "엿보기"})
    page = client.post(url, data)
    assert page.status_code == 200  # refused with the form shown again
    body = page.content.decode()
    assert "SCP_B1" not in body
    assert not tag.evidence.filter(session=world["SCP_B1"]).exists()


def test_the_tag_admin_offers_sessions_through_the_scoped_autocomplete(client, cast, world):
    client.force_login(cast.supervisor_a)
    response = client.get(
        "/admin/autocomplete/",
        {"app_label": "tags", "model_name": "tagevidence", "field_name": "session", "term": "SCP"},
    )
    assert response.status_code == 200
    assert [r["text"] for r in response.json()["results"]] == [str(world["SCP_A1"])]


@pytest.mark.parametrize(
    "url",
    [
        "/admin/gauge/gaugesnapshot/",
        "/admin/trajectory/trajectoryaudit/",
        "/admin/tags/traineetag/",
        "/admin/supervision/session/",
        "/admin/supervision/turn/",
        "/admin/supervision/supervisorcomment/",
    ],
)
def test_the_trainee_filters_list_only_the_supervisors_trainees(client, cast, world, url):
    client.force_login(cast.supervisor_a)
    page = client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "trainee_a" in body
    assert "trainee_b" not in body


def _pages(cast, world) -> list[str]:
    """Every admin change list and one change page per model, the feedback pages and the tags page."""
    urls = []
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        urls.append(base)
        first = model._default_manager.order_by("pk").values_list("pk", flat=True).first()
        if first is not None:
            urls.append(f"{base}{first}/change/")
    session = world["SCP_A1"]
    urls += ["/admin/", "/feedback/", f"/feedback/sessions/{session.pk}/", "/feedback/tags/"]
    return urls


PARAMETERS = ("q", "o", "p", "e", "all", "stage", "speaker", "label", "trainee_id", "scope", "status", "source")
PARAMETERS += ("tag", "kind", "author", "is_suggestion", "date", "held_on__year", "held_on__month", "min_status")
PARAMETERS += ("page", "next", "_changelist_filters", "_to_field", "_popup")


@pytest.mark.parametrize("role", ["supervisor_a", "staff", "trainee_a"])
def test_no_get_parameter_value_makes_a_page_fail(client, cast, world, role):
    client.force_login(getattr(cast, role))
    failures = []
    for url in _pages(cast, world):
        for value in HOSTILE:
            response = client.get(url, dict.fromkeys(PARAMETERS, value))
            if response.status_code >= 500:
                failures.append((url, repr(value), response.status_code))
    assert not failures, failures[:10]


@pytest.mark.parametrize("parameter", ["q", "stage", "speaker", "label"])
def test_a_nul_in_the_transcript_filters_is_a_400_in_korean(client, cast, world, parameter):
    client.force_login(cast.supervisor_a)
    response = client.get(f"/admin/supervision/session/{world['SCP_A1'].pk}/change/", {parameter: "a\x00b"})
    assert response.status_code == 400
    assert "NUL 문자" in response.content.decode()


@pytest.mark.parametrize(
    "url", ["/admin/supervision/session/", "/admin/supervision/turn/", "/admin/supervision/supervisorcomment/"]
)
def test_a_non_ascii_digit_as_trainee_id_matches_nothing(client, cast, world, url):
    client.force_login(cast.staff)
    response = client.get(url, {"trainee_id": "²"})
    assert response.status_code == 200
    assert "SCP_A1" not in response.content.decode()


def test_a_trainee_reply_with_a_nul_is_refused_and_nothing_is_stored(client, cast, world):
    comment = world["SCP_A1"].turns.first().comments.get()
    client.force_login(cast.trainee_a)
    response = client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "답글\x00끝"})
    assert response.status_code == 400
    assert not comment.replies.exists()


def test_every_registered_model_is_in_the_fuzz(cast, world):
    assert len([u for u in _pages(cast, world) if u.startswith("/admin/") and u.endswith("/change/")]) >= 10
    assert apps.get_model("supervision", "Session") in admin.site._registry


@pytest.mark.parametrize("who", ["supervisor_a", "staff"])
def test_every_admin_page_links_to_the_feedback_pages_the_user_can_open(client, cast, who):
    # Django's 「사이트 보기」 went to /, which sends staff users straight back to the admin.
    client.force_login(getattr(cast, who))
    page = client.get("/admin/").content.decode()
    assert '<a href="/feedback/">수련생 피드백</a>' in page and "사이트 보기" not in page
    assert client.get("/feedback/").status_code == 200
