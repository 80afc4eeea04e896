"""Suggested safety events (CONTRACT §9): in a session with no curated client state, a client turn whose
suggestion holds a safety-critical state is listed by /api/v1/safety-events/ with "source": "suggested",
answered when a following counselor turn is labelled or suggested risk_assessment; curated events say
"golden"; trainees and other supervisors never see them."""

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session
from supervision.suggesting.services import suggestion_accept, suggestion_dismiss
from supervision.suggesting.tests.test_decisions import _force
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows

pytestmark = pytest.mark.django_db
URL = "/api/v1/safety-events/"


def _client(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def turns(cast, tmp_path):
    call_command(
        "import_transcripts",
        str(write_csv(tmp_path / "s.csv", ENGLISH_HEADER, unlabelled_rows("SAF1"))),
        "--trainee",
        "trainee_a",
        stdout=io.StringIO(),
    )
    turns = list(Session.objects.get(code="SAF1").turns.order_by("seq"))
    # every client turn pinned: these tests are about the listing, not about what a model version says of
    # "사라지고 싶다" or of the answer "한 7 정도요" to the 0-10 question (a disclosure too, taxonomy §4)
    _force(turns[3], ["self_harm_disclosure"])
    _force(turns[4], ["scaling"])
    _force(turns[1], [])
    _force(turns[5], ["responds_to_exploration"])
    return turns


def test_a_suggested_disclosure_is_listed_as_suggested_and_unanswered(cast, turns):
    results = _client(cast.supervisor_a).get(URL).json()["results"]
    assert [(r["utterance_id"], r["state"], r["source"], r["answered"]) for r in results] == [
        ("SAF1-K-002", "self_harm_disclosure", "suggested", False)
    ]
    assert results[0]["id"] < 0 and results[0]["session_code"] == "SAF1" and results[0]["reviewed"] is False


def test_a_suggested_risk_assessment_answers_it(cast, turns):
    _force(turns[4], ["risk_assessment"])
    (event,) = _client(cast.supervisor_a).get(URL).json()["results"]
    assert (event["answered"], event["answered_by"], event["latency"]) == (True, "SAF1-C-003", 1)
    assert _client(cast.supervisor_a).get(URL, {"answered": "false"}).json()["results"] == []


def test_curated_events_say_golden_and_come_in_the_same_order(cast, turns, tmp_path):
    rows = session_rows("SAF2", 4)
    rows[1][7] = "suicidal_ideation_admit"
    call_command(
        "import_transcripts",
        str(write_csv(tmp_path / "g.csv", ENGLISH_HEADER, rows)),
        "--trainee",
        "trainee_a",
        stdout=io.StringIO(),
    )
    results = _client(cast.supervisor_a).get(URL).json()["results"]
    assert {(r["session_code"], r["source"]) for r in results} == {("SAF1", "suggested"), ("SAF2", "golden")}
    assert all(r["answered"] is False for r in results)


def test_accepting_turns_it_into_a_curated_event_and_dismissing_removes_it(cast, turns):
    suggestion_dismiss(turn=turns[3], label="self_harm_disclosure", dismissed_by=cast.supervisor_a)
    assert _client(cast.supervisor_a).get(URL).json()["results"] == []
    _force(turns[5], ["suicidal_ideation_admit"])
    suggestion_accept(turn=turns[5], accepted_by=cast.supervisor_a, labels=["suicidal_ideation_admit"])
    results = _client(cast.supervisor_a).get(URL).json()["results"]
    assert [(r["utterance_id"], r["source"]) for r in results] == [("SAF1-K-003", "golden")]


def test_trainees_and_other_supervisors_do_not_see_suggested_events(cast, turns):
    assert _client(cast.trainee_a).get(URL).json()["results"] == []
    assert _client(cast.supervisor_b).get(URL).json()["results"] == []
    assert len(_client(cast.staff).get(URL).json()["results"]) == 1
    assert _client(cast.staff).get(URL, {"reviewed": "true"}).json()["results"] == []


def test_the_admin_index_counts_the_suggested_events_the_queue_lists(cast, turns, client):
    client.force_login(cast.supervisor_a)
    assert (
        "위험사정 응답이 없는 자살·자해 보고 1건</strong>(AI 추정 1건 포함)이" in client.get("/admin/").content.decode()
    )
    page = client.get("/admin/safety/safetyreview/").content.decode()
    assert page.count("AI 추정") >= 1 and "SAF1-K-002" in page
    _force(turns[4], ["risk_assessment"])  # answered: no longer waiting, on the index as in the queue
    assert "검토를 기다리는 안전 사건이 없습니다." in client.get("/admin/").content.decode()
    client.force_login(cast.supervisor_b)
    assert "검토를 기다리는 안전 사건이 없습니다." in client.get("/admin/").content.decode()
