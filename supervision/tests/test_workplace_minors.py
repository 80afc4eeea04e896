"""The supervisor's workplace (issue 33, the minors): the transcript's filter survives a label save, a comment
and a suggestion review; the save message sits beside the turn; a session-wide suggestion's review returns to
its box; a suggestion's own page offers 수락/기각; the comment list shows 권장/실제; the act reads in Korean;
unsent critique drafts are kept by a script the page loads."""

from __future__ import annotations

import pytest

from supervision.feedback.tests.factories import make_session
from supervision.gauge.suggestions import BAND_KEY
from supervision.models import SupervisorComment
from supervision.testing import form_data, pending_suggestion

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(cast):
    return make_session("WPM_A1", 6, trainee="trainee_a")


def session_url(session):
    return f"/admin/supervision/session/{session.pk}/change/"


def test_a_label_save_returns_to_the_filtered_transcript_with_the_message_beside_the_turn(client, cast, session):
    turn = session.turns.get(seq=2)
    client.force_login(cast.supervisor_a)
    transcript = client.get(session_url(session), {"label": "reflection"}).content.decode()
    link = f"/admin/supervision/turn/{turn.pk}/change/?_from_transcript=1&amp;_transcript=label%3Dreflection"
    assert link in transcript

    url = link.replace("&amp;", "&")
    data = form_data(client.get(url).content.decode(), "turn_form")
    response = client.post(url, data)

    assert response.status_code == 302
    assert response["Location"] == f"{session_url(session)}?label=reflection#turn-2"
    page = client.get(response["Location"]).content.decode()
    beside = page.split('id="turn-2"', 1)[1].split('id="turn-', 1)[0]
    assert "turn-message" in beside


def test_a_comment_returns_to_the_filtered_transcript(client, cast, session):
    turn = session.turns.get(seq=0)
    client.force_login(cast.supervisor_a)
    response = client.post(
        f"/admin/supervision/session/{session.pk}/turns/{turn.pk}/comment/",
        {f"turn{turn.pk}-kind": "critique", f"turn{turn.pk}-text": "질문이 빨랐음", "_transcript": "stage=탐색&x=1"},
    )
    assert response.status_code == 302
    assert response["Location"].endswith("?stage=%ED%83%90%EC%83%89#turn-0")


def test_reviewing_a_session_wide_suggestion_returns_to_the_suggestion_box(client, cast, session):
    last = session.turns.order_by("-seq").first()
    wide = pending_suggestion(last, key=BAND_KEY.format(category="RELATIONAL"))
    client.force_login(cast.supervisor_a)
    response = client.post(f"/admin/supervision/session/{session.pk}/suggestions/{wide.pk}/accept/")
    assert response["Location"].endswith("#session-suggestions-title")


def test_a_suggestions_own_page_offers_accept_and_dismiss_and_returns_to_the_list(client, cast, session):
    suggestion = pending_suggestion(session.turns.get(seq=1), intent_deviation={"severity": "minor"})
    client.force_login(cast.supervisor_a)
    page = client.get(f"/admin/gauge/suggestedcomment/{suggestion.pk}/change/").content.decode()
    assert 'id="suggestion-review"' in page and "수락" in page and "기각 확인" in page
    assert "경미" in page

    data = form_data(
        page.replace(
            '<form method="post" action="/admin/supervision',
            '<form id="accept" method="post" action="/admin/supervision',
            1,
        ),
        "accept",
    )
    response = client.post(f"/admin/supervision/session/{session.pk}/suggestions/{suggestion.pk}/accept/", data)
    assert response["Location"] == "/admin/gauge/suggestedcomment/"
    assert SupervisorComment.objects.get(pk=suggestion.pk).is_suggestion is False


def test_the_comment_list_shows_expected_and_actual_by_name(client, cast, session):
    from supervision.commenting import supervisor_comment_create

    supervisor_comment_create(
        turn=session.turns.get(seq=0),
        kind="critique",
        text="탐색 질문이 앞섬",
        intent_deviation={"expected": "reflection", "actual": "facilitative_question"},
        written_by=cast.supervisor_a,
    )
    client.force_login(cast.supervisor_a)
    page = client.get("/admin/supervision/supervisorcomment/").content.decode()
    assert "column-expected_display" in page and "column-actual_display" in page
    assert '반영 <small class="code">reflection</small>' in page


def test_the_transcript_says_the_act_in_korean_and_keeps_drafts(client, cast, session):
    session.turns.filter(seq=0).update(dialog_act="greeting")
    client.force_login(cast.supervisor_a)
    page = client.get(session_url(session)).content.decode()
    assert "대화행위 인사 (greeting)" in page and "act: " not in page
    assert "portal_admin_drafts.js" in page and 'data-draft="turn' in page
