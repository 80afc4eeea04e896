"""The supervisor's transcript shows each turn's suggestions beside the curated labels and takes the
decisions; the session list filters 「라벨 없음 — AI 추정만」; other supervisors and trainees see nothing of it."""

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from supervision.exporting import label_codes_by_turn
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session, Turn, TurnTechnique
from supervision.suggesting.models import SuggestionDismissal
from supervision.suggesting.tests.test_decisions import _force
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def unlabelled(cast, tmp_path):
    call_command(
        "import_transcripts",
        str(write_csv(tmp_path / "adm.csv", ENGLISH_HEADER, unlabelled_rows("ADS1"))),
        "--trainee",
        "trainee_a",
        stdout=io.StringIO(),
    )
    session = Session.objects.get(code="ADS1")
    turns = list(session.turns.order_by("seq"))
    _force(turns[2], ["empathy", "risk_assessment"])
    _force(turns[3], ["self_harm_disclosure"])
    return session, turns


def _login(client, username):
    assert client.login(username=username, password=PASSWORD)
    return client


def _page(session):
    return reverse("admin:supervision_session_change", args=[session.pk])


def _decide(session, turn, decision):
    return reverse("admin:supervision_session_label_suggestion", args=[session.pk, turn.pk, decision])


def test_the_transcript_shows_suggestions_in_korean_with_probability_and_buttons(client, unlabelled):
    session, turns = unlabelled
    page = _login(client, "supervisor_a").get(_page(session)).content.decode()
    assert "AI 추정" in page
    assert "위험사정" in page and "risk_assessment" in page and "0.90" in page
    assert "자해 보고" in page and "self_harm_disclosure" in page
    assert "모두 수락" in page
    assert _decide(session, turns[2], "accept") in page


def test_accepting_keeps_the_place_and_the_filters(client, unlabelled):
    session, turns = unlabelled
    response = _login(client, "supervisor_a").post(
        _decide(session, turns[2], "accept"), {"code": "risk_assessment", "speaker": "counselor", "q": "해칠"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"{_page(session)}?speaker=counselor&q=%ED%95%B4%EC%B9%A0#turn-{turns[2].seq}"
    assert label_codes_by_turn(TurnTechnique, turn_ids=[turns[2].pk])[turns[2].pk] == ["risk_assessment"]
    page = client.get(response["Location"]).content.decode()
    assert "저장했습니다" in page
    # the label history names the route in Korean, and its filter offers it
    history = client.get("/admin/supervision/labelchange/").content.decode()
    assert "AI 추정 라벨 수락" in history.split("<tbody>", 1)[1] and "?via=suggestion" in history
    assert ">suggestion<" not in history


def test_dismissing_and_accept_all_from_the_page(client, unlabelled):
    session, turns = unlabelled
    _login(client, "supervisor_a")
    client.post(_decide(session, turns[2], "dismiss"), {"code": "empathy"})
    assert SuggestionDismissal.objects.filter(turn=turns[2], label="empathy").exists()
    client.post(_decide(session, turns[2], "accept_all"))
    assert label_codes_by_turn(TurnTechnique, turn_ids=[turns[2].pk])[turns[2].pk] == ["risk_assessment"]
    page = client.get(_page(session)).content.decode()
    assert "기각함" in page


def test_another_supervisor_neither_sees_nor_decides(client, unlabelled):
    session, turns = unlabelled
    _login(client, "supervisor_b")
    assert client.get(_page(session)).status_code in (302, 404)
    response = client.post(_decide(session, turns[2], "accept"), {"code": "risk_assessment"})
    assert response.status_code in (403, 404)
    assert not TurnTechnique.objects.filter(turn=turns[2]).exists()


def test_staff_see_the_suggestions_but_cannot_decide(client, unlabelled):
    session, turns = unlabelled
    page = _login(client, "staff").get(_page(session)).content.decode()
    assert "AI 추정" in page and _decide(session, turns[2], "accept") not in page
    assert client.post(_decide(session, turns[2], "accept"), {"code": "risk_assessment"}).status_code == 403
    assert not TurnTechnique.objects.filter(turn=turns[2]).exists()


def test_trainees_never_reach_the_admin_suggestions(client, unlabelled):
    session, turns = unlabelled
    _login(client, "trainee_a")
    assert client.get(_page(session)).status_code == 302  # to the admin log-in
    assert client.post(_decide(session, turns[2], "accept"), {"code": "risk_assessment"}).status_code == 302
    feedback = client.get(reverse("feedback:session", args=[session.pk])).content.decode()
    assert "risk_assessment" not in feedback and "AI 추정" not in feedback


def test_the_list_filter_finds_sessions_with_only_suggestions(client, unlabelled, tmp_path):
    labelled = session_rows("ADS2", 4)  # carries curated labels
    call_command(
        "import_transcripts",
        str(write_csv(tmp_path / "lab.csv", ENGLISH_HEADER, labelled)),
        "--trainee",
        "trainee_a",
        stdout=io.StringIO(),
    )
    url = reverse("admin:supervision_session_changelist") + "?suggested_only=1"
    page = _login(client, "supervisor_a").get(url).content.decode()
    assert "라벨 없음 — AI 추정만" in page
    assert "ADS1" in page and "ADS2" not in page
    note = page.split('id="suggested-only-note"', 1)[1].split("</p>", 1)[0]
    assert "AI 추정 라벨만 있는 회기입니다" in note and "지금은 그런 회기가 없습니다" not in note
    # another supervisor's trainees: an empty list that says what it looks for, not a bare 「0 회기」
    page = _login(client, "supervisor_b").get(url).content.decode()
    assert "ADS1" not in page and "지금은 그런 회기가 없습니다" in page


def test_the_transcripts_queries_do_not_grow_with_its_turns(client, cast, tmp_path):
    def queries(code, turns):
        rows = session_rows(code, turns)
        for row in rows:
            row[6] = row[7] = ""
        call_command(
            "import_transcripts",
            str(write_csv(tmp_path / f"{code}.csv", ENGLISH_HEADER, rows)),
            "--trainee",
            "trainee_a",
            stdout=io.StringIO(),
        )
        session = Session.objects.get(code=code)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(_page(session)).status_code == 200
        return len(captured)

    _login(client, "supervisor_a")
    queries("QWARM", 2)
    assert queries("QSMALL", 4) == queries("QLARGE", 40)
    assert Turn.objects.filter(session__code="QLARGE").count() == 40
