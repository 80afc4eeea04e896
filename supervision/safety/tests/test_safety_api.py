"""CONTRACT §8 endpoints: the shape, the filters, access per role, reviews with history, errors, query counts.

The role × URL statuses of both endpoints are rows of ``supervision/api/tests/test_role_matrix.py``.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from supervision.importing.services import import_transcripts
from supervision.models import Turn, TurnTechnique
from supervision.safety.models import SafetyReview
from supervision.safety.tests.factories import script, script_lines
from taxonomy.models import TechniqueLabelDef

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"
LIST = "/api/v1/safety-events/"
SHAPE = {
    "id",
    "session",
    "session_code",
    "utterance_id",
    "state",
    "answered",
    "answered_by",
    "latency",
    "reviewed",
    "reviewed_by",
    "reviewed_at",
    "note",
    "source",
}


def review_url(event_id) -> str:
    return f"/api/v1/safety-events/{event_id}/review/"


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def sessions(cast):
    return {
        "answered": script("SA01", "C", f"K:{SI}", f"C:{RA}", held_on="2026-11-01"),
        "open": script("SA02", f"K:{SH}", "C", "K", "C", held_on="2026-11-02"),
        "other": script("SB01", f"K:{SI}", "C", trainee="trainee_b", held_on="2026-11-03"),
    }


def test_it_lists_events_in_the_shape_of_the_contract(cast, sessions):
    body = client_for(cast.supervisor_a).get(LIST).json()
    assert body["count"] == 2 and body["next"] is None
    first, second = body["results"]
    assert set(first) == SHAPE
    assert first == {
        "id": first["id"],
        "session": sessions["open"].pk,
        "session_code": "SA02",
        "utterance_id": "SA02-K-001",
        "state": SH,
        "answered": False,
        "answered_by": None,
        "latency": None,
        "reviewed": False,
        "reviewed_by": None,
        "reviewed_at": None,
        "note": None,
        "source": "golden",  # CONTRACT §9: events of the portal's label suggester say "suggested"
    }
    assert (second["utterance_id"], second["answered"], second["answered_by"], second["latency"]) == (
        "SA01-K-001",
        True,
        "SA01-C-002",
        1,
    )


def test_it_filters_by_trainee_answered_and_reviewed(cast, sessions):
    staff = client_for(cast.staff)
    codes = lambda query: [e["session_code"] for e in staff.get(LIST + query).json()["results"]]  # noqa: E731
    assert codes("") == ["SB01", "SA02", "SA01"]
    assert codes(f"?trainee={cast.trainee_a.pk}") == ["SA02", "SA01"]
    assert codes("?answered=true") == ["SA01"]
    assert codes("?answered=false") == ["SB01", "SA02"]
    assert codes("?reviewed=true") == []
    assert codes(f"?trainee={cast.trainee_b.pk}&answered=false&reviewed=false") == ["SB01"]
    # a trainee the supervisor may not see is refused like a made-up one (as on /api/v1/sessions/)
    assert client_for(cast.supervisor_a).get(f"{LIST}?trainee={cast.trainee_b.pk}").status_code == 400
    assert codes("?trainee=trainee_a") == ["SA02", "SA01"]  # a username works too


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?answered=maybe", "answered"),
        ("?reviewed=2", "reviewed"),
        ("?trainee=abc", "trainee"),
        ("?trainee=99999999999", "trainee"),
    ],
)
def test_it_refuses_a_bad_filter_naming_it(cast, sessions, query, field):
    response = client_for(cast.staff).get(LIST + query)
    assert response.status_code == 400
    assert field in response.json()


def test_it_shows_the_label_edit_through_the_api_at_once(cast, sessions):
    client = client_for(cast.supervisor_a)
    assert client.get(f"{LIST}?answered=true").json()["count"] == 1
    turn = Turn.objects.get(utterance_id="SA02-C-002")
    TurnTechnique.objects.create(turn=turn, label=TechniqueLabelDef.objects.get(code=RA))
    answered = client.get(f"{LIST}?answered=true").json()["results"]
    assert [(e["utterance_id"], e["answered_by"], e["latency"]) for e in answered] == [
        ("SA02-K-001", "SA02-C-002", 2),
        ("SA01-K-001", "SA01-C-002", 1),
    ]


def test_it_shows_a_reimport_through_the_api_at_once(cast, sessions):
    lines = script_lines("SA02", f"K:{SH}", f"C:{RA}", "K", "C", held_on="2026-11-02")
    assert import_transcripts(rows=enumerate(lines, start=1)).ok
    event = client_for(cast.trainee_a).get(f"{LIST}?answered=true").json()["results"][0]
    assert (event["utterance_id"], event["answered_by"], event["latency"]) == ("SA02-K-001", "SA02-C-001", 1)


def test_a_supervisor_reviews_and_the_history_keeps_every_version(cast, sessions):
    client = client_for(cast.supervisor_a)
    event = client.get(f"{LIST}?answered=false").json()["results"][0]
    response = client.post(review_url(event["id"]), {"note": "  안전 계획을 점검하라고 안내함  "}, format="json")
    assert response.status_code == 200, response.content
    reviewed = response.json()
    assert (reviewed["reviewed"], reviewed["reviewed_by"], reviewed["note"]) == (
        True,
        cast.supervisor_a.pk,
        "안전 계획을 점검하라고 안내함",
    )
    assert reviewed["reviewed_at"]
    # reviewed events leave the front of the list
    assert client.get(f"{LIST}?reviewed=false").json()["count"] == 1

    again = client.post(review_url(event["id"]), {"note": "수련생과 면담 완료"}, format="json").json()
    assert again["note"] == "수련생과 면담 완료"
    review = SafetyReview.objects.get()
    history = list(review.history.order_by("history_date").values_list("note", "history_user_id", "history_type"))
    assert history == [
        ("안전 계획을 점검하라고 안내함", cast.supervisor_a.pk, "+"),
        ("수련생과 면담 완료", cast.supervisor_a.pk, "~"),
    ]
    # the trainee reads the supervisor's note on their own event
    mine = client_for(cast.trainee_a).get(f"{LIST}?reviewed=true").json()["results"]
    assert [e["note"] for e in mine] == ["수련생과 면담 완료"]


def test_a_review_survives_a_reimport_that_rewrites_the_turns_labels(cast, sessions):
    client = client_for(cast.supervisor_a)
    event = client.get(f"{LIST}?answered=false").json()["results"][0]
    client.post(review_url(event["id"]), {"note": "확인함"}, format="json")
    lines = script_lines("SA02", f"K:{SH}+affect_contact", "C", "K", "C", held_on="2026-11-02")
    assert import_transcripts(rows=enumerate(lines, start=1)).ok
    listed = client.get(f"{LIST}?trainee={cast.trainee_a.pk}&answered=false").json()["results"]
    assert [(e["utterance_id"], e["reviewed"], e["note"]) for e in listed] == [("SA02-K-001", True, "확인함")]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "note"),
        ({"note": ["목록"]}, "note"),
        ({"note": "x" * 2001}, "note"),
        ({"note": "보호자 연락처 010-1234-5678 확인"}, "note"),
    ],
)
def test_it_refuses_a_bad_note_naming_the_field(cast, sessions, body, field):
    event = client_for(cast.supervisor_a).get(LIST).json()["results"][0]
    response = client_for(cast.supervisor_a).post(review_url(event["id"]), body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not SafetyReview.objects.exists()


def test_it_answers_404_for_an_event_that_does_not_exist(cast, sessions):
    client = client_for(cast.supervisor_a)
    for event_id in (0, 987654321, 2**63, 10**30):
        assert client.post(review_url(event_id), {"note": "x"}, format="json").status_code == 404


def test_an_anonymous_caller_is_refused(sessions):
    assert APIClient().get(LIST).status_code == 403


@pytest.mark.parametrize("n", [10, 100])
def test_it_lists_events_in_one_statement_for_10_or_100(cast, n):
    # n disclosures across sessions, half answered; every event needs its window, answer and review
    for i in range(n // 2):
        script(f"QS{i:03d}", f"K:{SI}", f"C:{RA}", f"K:{SH}", "C", "C")
    client = client_for(cast.supervisor_a)
    with CaptureQueriesContext(connection) as queries:
        body = client.get(f"{LIST}?page_size=500").json()
    assert body["count"] == n
    event_queries = [q["sql"] for q in queries.captured_queries if "turn_client_state" in q["sql"]]
    # session, user, roles; count, page; the label suggester's run and its suggested events (CONTRACT §9)
    assert len(queries.captured_queries) == 3 + 2 + 2
    # the count and the page (the events themselves are one statement), and the suggested events' one
    assert len(event_queries) == 2 + 1
