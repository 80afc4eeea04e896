"""Admin writes go through the same services and rules as the importer and the API, as the real roles.

The turn form: privacy guard, nonverbal shape, silence correction, attach rule. The comment admin and a
turn's comment inline: the comment service, its author rule, its history; suggestions stay out.
"""

from __future__ import annotations

import pytest

from supervision.commenting import supervisor_comment_create
from supervision.feedback.tests.factories import make_session
from supervision.models import CommentAuthor, CommentKind, SupervisorComment, TraineeAssignment
from supervision.testing import form_data, pending_suggestion
from taxonomy.models import TechniqueLabelDef

pytestmark = pytest.mark.django_db

FAKE_PHONE = "010-0000-0000"  # an obviously fake number in the real format
FAKE_MAIL = "nobody@example.invalid"


@pytest.fixture
def session(cast):
    return make_session("WRT_A1", 6, trainee="trainee_a")


def turn_url(turn):
    return f"/admin/supervision/turn/{turn.pk}/change/"


def post_turn(client, turn, **changes):
    """Loads the turn's change form as the user sees it, changes some fields and submits it."""
    page = client.get(turn_url(turn))
    assert page.status_code == 200
    data = form_data(page.content.decode(), "turn_form")
    data.update(changes)
    return client.post(turn_url(turn), data)


def test_a_supervisor_saves_an_unchanged_labelled_turn(client, cast, session):
    turn = session.turns.get(seq=0)
    assert turn.techniques.exists()
    client.force_login(cast.supervisor_a)
    response = post_turn(client, turn)
    assert response.status_code == 302, response.content.decode()[:2000]


def test_a_supervisor_adds_a_label_next_to_one_they_may_only_view(client, cast, session):
    turn = session.turns.get(seq=0)
    extra = TechniqueLabelDef.objects.exclude(pk__in=turn.techniques.all()).first()
    client.force_login(cast.supervisor_a)
    page = client.get(turn_url(turn)).content.decode()
    data = form_data(page, "turn_form")
    index = int(data["technique_links-TOTAL_FORMS"])
    data.update(
        {
            "technique_links-TOTAL_FORMS": str(index + 1),
            f"technique_links-{index}-label": str(extra.pk),
            f"technique_links-{index}-turn": str(turn.pk),
        }
    )
    response = client.post(turn_url(turn), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert extra in turn.techniques.all()


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"text": f"연락처는 {FAKE_PHONE}입니다."}, "text", "전화번호"),
        ({"text": f"메일은 {FAKE_MAIL}로."}, "text", "이메일"),
        ({"nonverbal": f"(메모 {FAKE_MAIL})"}, "nonverbal", "이메일"),
        ({"text": "", "nonverbal": "", "dialog_act": ""}, "text", "비어 있습니다"),
    ],
)
def test_the_turn_form_refuses_what_the_importer_refuses(client, cast, session, changes, field, fragment):
    turn = session.turns.get(seq=1)
    before = (turn.text, turn.nonverbal, turn.dialog_act)
    client.force_login(cast.supervisor_a)
    response = post_turn(client, turn, **changes)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert fragment in " ".join(errors.get(field, [])), errors
    turn.refresh_from_db()
    assert (turn.text, turn.nonverbal, turn.dialog_act) == before


def test_the_turn_form_applies_the_silence_correction_and_says_so(client, cast, session):
    turn = session.turns.get(seq=1)
    client.force_login(cast.supervisor_a)
    response = post_turn(client, turn, dialog_act="silence", nonverbal="(한숨)\n[고개를 숙임]")
    assert response.status_code == 302
    turn.refresh_from_db()
    assert turn.dialog_act == "null" and turn.nonverbal == ["(한숨)", "[고개를 숙임]"]
    shown = [str(m) for m in response.wsgi_request._messages]
    assert any("silence" in m and "null" in m for m in shown), shown


def test_the_turn_form_shows_nonverbal_cues_one_a_line(client, cast, session):
    turn = session.turns.get(seq=1)  # the factory gives it "(잠시 멈춤)"
    client.force_login(cast.supervisor_a)
    data = form_data(client.get(turn_url(turn)).content.decode(), "turn_form")
    assert data["nonverbal"] == "(잠시 멈춤)"


@pytest.fixture
def reassigned(cast, session):
    """supervisor_a wrote a critique on trainee_a's turn; trainee_a then moved to supervisor_b."""
    turn = session.turns.get(seq=2)
    comment = supervisor_comment_create(
        turn=turn, kind=CommentKind.CRITIQUE, text="처음 슈퍼바이저의 논평", written_by=cast.supervisor_a
    )
    TraineeAssignment.objects.filter(trainee=cast.trainee_a).update(supervisor=cast.supervisor_b)
    return comment


def test_a_new_supervisor_cannot_rewrite_the_old_supervisors_comment(client, cast, reassigned):
    client.force_login(cast.supervisor_b)
    url = f"/admin/supervision/supervisorcomment/{reassigned.pk}/change/"
    assert client.get(url).status_code == 200  # they may read it
    response = client.post(url, {"turn": reassigned.turn_id, "kind": "critique", "text": "가로챈 논평"})
    assert response.status_code == 403
    response = client.post(f"/admin/supervision/supervisorcomment/{reassigned.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    reassigned.refresh_from_db()
    assert reassigned.text == "처음 슈퍼바이저의 논평" and reassigned.written_by == cast.supervisor_a


def test_a_new_supervisor_cannot_rewrite_it_through_the_turn_either(client, cast, reassigned):
    client.force_login(cast.supervisor_b)
    turn = reassigned.turn
    page = client.get(turn_url(turn)).content.decode()
    data = form_data(page, "turn_form")
    index = next(k.split("-")[1] for k, v in data.items() if k.endswith("-id") and v == str(reassigned.pk))
    data[f"comments-{index}-text"] = "가로챈 논평"
    response = client.post(turn_url(turn), data)
    assert response.status_code == 200
    assert "작성한 슈퍼바이저만" in response.content.decode()
    reassigned.refresh_from_db()
    assert reassigned.text == "처음 슈퍼바이저의 논평"


def test_the_author_edits_and_deletes_through_the_service_with_history(client, cast, session):
    comment = supervisor_comment_create(
        turn=session.turns.get(seq=2), kind=CommentKind.RATIONALE, text="근거 초안", written_by=cast.supervisor_a
    )
    client.force_login(cast.supervisor_a)
    url = f"/admin/supervision/supervisorcomment/{comment.pk}/change/"
    response = client.post(url, {"turn": comment.turn_id, "kind": "rationale", "text": f"고친 근거 {FAKE_PHONE}"})
    assert response.status_code == 200  # the privacy guard of the service
    response = client.post(url, {"turn": comment.turn_id, "kind": "rationale", "text": "고친 근거"})
    assert response.status_code == 302
    # opened from the transcript (「열기」), it goes back there at its turn, filters kept; deleted, likewise
    transcript = f"/admin/supervision/session/{session.pk}/change/"
    opened = f"{url}?_from_transcript=1&_transcript=label%3Dreflection"
    response = client.post(opened, {"turn": comment.turn_id, "kind": "rationale", "text": "다시 고친 근거"})
    assert response["Location"] == f"{transcript}?label=reflection#turn-2"
    response = client.post(f"/admin/supervision/supervisorcomment/{comment.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and response["Location"] == f"{transcript}#turn-2"
    history = SupervisorComment.history.filter(id=comment.pk).order_by("history_date")
    assert [(h.history_type, h.history_user) for h in history] == [
        ("+", cast.supervisor_a),
        ("~", cast.supervisor_a),
        ("~", cast.supervisor_a),
        ("-", cast.supervisor_a),
    ]


def test_a_comment_added_in_the_admin_is_the_supervisors_own(client, cast, session):
    turn = session.turns.get(seq=4)
    client.force_login(cast.supervisor_a)
    response = client.post(
        "/admin/supervision/supervisorcomment/add/", {"turn": turn.pk, "kind": "critique", "text": "새 논평"}
    )
    assert response.status_code == 302
    comment = SupervisorComment.objects.get(text="새 논평")
    assert (comment.written_by, comment.author) == (cast.supervisor_a, CommentAuthor.SUPERVISOR)
    assert comment.history.get().history_user == cast.supervisor_a


def test_suggestions_stay_out_of_the_plain_comment_admin(client, cast, session):
    suggestion = pending_suggestion(session.turns.get(seq=2))
    client.force_login(cast.supervisor_a)
    assert "AI 제안 문구" not in client.get("/admin/supervision/supervisorcomment/").content.decode()
    response = client.post(f"/admin/supervision/supervisorcomment/{suggestion.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302  # "not found" redirect of the admin: nothing deleted
    assert SupervisorComment.objects.filter(pk=suggestion.pk).exists()


def test_a_suggestions_page_shows_its_deviation_as_a_table_not_json(client, cast, session):
    suggestion = pending_suggestion(
        session.turns.get(seq=2), intent_deviation={"dimension": "대화행위 (dialog_act)", "severity": "moderate"}
    )
    client.force_login(cast.supervisor_a)
    page = client.get(f"/admin/gauge/suggestedcomment/{suggestion.pk}/change/").content.decode()
    assert '<table class="deviation">' in page and "평가 차원 (dimension)" in page
    assert '{"dimension"' not in page and "{&quot;dimension" not in page


def session_url(session):
    return f"/admin/supervision/session/{session.pk}/change/"


def test_staff_start_sessions_from_the_importer_not_from_an_empty_form(client, cast, session):
    client.force_login(cast.staff)
    assert client.get("/admin/supervision/session/add/").status_code == 403
    sessions = client.get("/admin/supervision/session/").content.decode()
    assert "/admin/supervision/session/add/" not in sessions and "스프레드시트 가져오기" in sessions
    # the import jobs' list leads there too
    jobs = client.get("/admin/importing/importjob/").content.decode()
    assert 'href="/admin/supervision/session/import/">스프레드시트 가져오기</a>' in jobs


def test_supervisors_see_the_session_list_without_the_importers_links(client, cast, session):
    # Importing is staff's job (the import views refuse supervisors); the list does not offer it to them.
    client.force_login(cast.supervisor_a)
    sessions = client.get("/admin/supervision/session/")
    assert sessions.status_code == 200
    page = sessions.content.decode()
    assert "/admin/supervision/session/import/" not in page and "가져오기 양식" not in page
    assert client.get("/admin/supervision/session/import/").status_code == 403


def test_a_session_belongs_to_a_trainee_only(client, cast, session):
    client.force_login(cast.staff)
    page = client.get(session_url(session)).content.decode()
    data = form_data(page, "session_form")
    response = client.post(session_url(session), {**data, "trainee": str(cast.supervisor_a.pk)})
    assert response.status_code == 200 and "올바르게 선택해 주세요" in response.content.decode()
    session.refresh_from_db()
    assert session.trainee == cast.trainee_a
    response = client.post(session_url(session), {**data, "trainee": str(cast.trainee_b.pk)})
    assert response.status_code == 302
    session.refresh_from_db()
    assert session.trainee == cast.trainee_b
