"""The trainee pages: access per CONTRACT §5, what they show, read markers, replies, query counts."""

import datetime
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from supervision.feedback.models import CommentRead, CommentReply
from supervision.feedback.tests.factories import make_session
from supervision.gauge.services import gauge_compute
from supervision.models import CommentAuthor, SupervisorComment
from supervision.testing import PASSWORD, log_in
from supervision.trajectory.models import TrajectoryAudit
from supervision.trajectory.services import trajectory_audit_sessions

pytestmark = pytest.mark.django_db


@pytest.fixture
def sessions(cast):
    return {
        "a": make_session("PAGE_A1", 12, trainee="trainee_a"),
        "b": make_session("PAGE_B1", 8, trainee="trainee_b"),
    }


def test_it_sends_anonymous_visitors_to_log_in(client, sessions):
    for url in ("/feedback/", f"/feedback/sessions/{sessions['a'].pk}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")


def test_it_sends_a_trainee_home_to_their_feedback(client, cast):
    response = log_in(client, cast.trainee_a).get("/")
    assert response.status_code == 302 and response["Location"] == "/feedback/"


def test_it_lists_only_the_trainees_own_sessions(client, cast, sessions):
    page = log_in(client, cast.trainee_a).get("/feedback/").content.decode()
    assert "PAGE_A1" in page
    assert "PAGE_B1" not in page
    assert "새 논평 3" in page  # seqs 0, 4, 8 carry critiques, none read yet


def test_it_answers_404_for_another_trainees_session(client, cast, sessions):
    assert log_in(client, cast.trainee_a).get(f"/feedback/sessions/{sessions['b'].pk}/").status_code == 404
    comment = SupervisorComment.objects.filter(turn__session=sessions["b"]).first()
    assert client.post(f"/feedback/comments/{comment.pk}/read/").status_code == 404
    assert client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "x"}).status_code == 404
    assert not CommentRead.objects.exists() and not CommentReply.objects.exists()


@pytest.mark.parametrize(
    ("who", "session", "status"),
    [
        ("trainee_a", "a", 200),
        ("trainee_b", "a", 404),
        ("supervisor_a", "a", 200),
        ("supervisor_a", "b", 404),
        ("supervisor_b", "b", 200),
        ("staff", "a", 200),
        ("staff", "b", 200),
    ],
)
def test_it_applies_the_access_matrix_to_session_pages(client, cast, sessions, who, session, status):
    response = log_in(client, getattr(cast, who)).get(f"/feedback/sessions/{sessions[session].pk}/")
    assert response.status_code == status


def test_it_shows_the_transcript_with_labels_and_critiques_beside_their_turns(client, cast, sessions):
    page = log_in(client, cast.trainee_a).get(f"/feedback/sessions/{sessions['a'].pk}/").content.decode()
    assert page.count('class="turn ') == 12
    assert "합성 발화 PAGE_A1 0번째 문장입니다." in page
    assert '<li class="chip cat-RELATIONAL">반영 <span class="code">reflection</span></li>' in page
    assert '<li class="chip state">정서 접촉/표현 <span class="code">affect_contact</span></li>' in page
    assert "감정 반영 없이 곧바로 질문으로 넘어갔습니다." in page
    assert "반영 (reflection)" in page and "탐색 (exploration)" in page  # expected vs actual
    assert 'class="sev-badge sev-moderate"' in page
    assert "비언어: (잠시 멈춤)" in page
    assert 'aria-labelledby="stages-t stages-d"' in page  # the stage strip


def test_it_never_shows_unaccepted_ai_suggestions(client, cast, sessions):
    turn = sessions["a"].turns.get(seq=2)
    SupervisorComment.objects.create(
        turn=turn, kind="critique", text="제안만 된 논평", author=CommentAuthor.AI, is_suggestion=True
    )
    page = log_in(client, cast.trainee_a).get(f"/feedback/sessions/{sessions['a'].pk}/").content.decode()
    assert "제안만 된 논평" not in page
    suggestion = SupervisorComment.objects.get(text="제안만 된 논평")
    assert client.post(f"/feedback/comments/{suggestion.pk}/read/").status_code == 404


def test_it_marks_a_critique_read_once(client, cast, sessions):
    comment = SupervisorComment.objects.filter(turn__session=sessions["a"]).first()
    log_in(client, cast.trainee_a)
    response = client.post(f"/feedback/comments/{comment.pk}/read/")
    assert response.status_code == 302
    assert response["Location"].endswith(f"#comment-{comment.pk}")
    client.post(f"/feedback/comments/{comment.pk}/read/")
    assert CommentRead.objects.filter(comment=comment, user=cast.trainee_a).count() == 1
    assert "새 논평 2" in client.get("/feedback/").content.decode()


def test_it_stores_a_reply_and_shows_it_to_the_supervisor_in_the_admin(client, cast, sessions):
    comment = SupervisorComment.objects.filter(turn__session=sessions["a"]).first()
    log_in(client, cast.trainee_a).post(
        f"/feedback/comments/{comment.pk}/replies/", {"text": "  다음엔 먼저 반영하겠습니다. "}
    )
    reply = CommentReply.objects.get()
    assert (reply.comment, reply.author, reply.text) == (comment, cast.trainee_a, "다음엔 먼저 반영하겠습니다.")
    assert CommentRead.objects.filter(comment=comment, user=cast.trainee_a).exists()
    admin_page = log_in(client, cast.supervisor_a).get(f"/admin/supervision/session/{sessions['a'].pk}/change/")
    assert "다음엔 먼저 반영하겠습니다." in admin_page.content.decode()


def test_it_rejects_an_empty_or_overlong_reply_naming_the_field(client, cast, sessions):
    comment = SupervisorComment.objects.filter(turn__session=sessions["a"]).first()
    log_in(client, cast.trainee_a)
    response = client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "   "}, follow=True)
    # said in the comment's own card, where the page lands (#comment-N), not only in the banner far above
    card = response.content.decode().split(f'id="comment-{comment.pk}"', 1)[1].split("</article>", 1)[0]
    assert "답글: 답글 내용이 비어 있습니다." in card.split('class="reply-form"', 1)[0]
    assert response.content.decode().count("답글 내용이 비어 있습니다.") == 1
    response = client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "가" * 2001}, follow=True)
    assert "답글은 2000자 이내로" in response.content.decode()
    assert not CommentReply.objects.exists()


def test_it_refuses_read_markers_and_replies_from_anyone_but_the_trainee(client, cast, sessions):
    comment = SupervisorComment.objects.filter(turn__session=sessions["a"]).first()
    log_in(client, cast.supervisor_a)
    assert client.post(f"/feedback/comments/{comment.pk}/read/").status_code == 403
    assert client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "x"}).status_code == 403
    assert client.get(f"/feedback/comments/{comment.pk}/read/").status_code == 405


def test_it_draws_the_gauge_and_trend_from_the_nightly_snapshots(client, cast, sessions):
    page = log_in(client, cast.trainee_a).get("/feedback/").content.decode()
    assert "아직 계산된 검토 지표가 없습니다" in page
    for day in (datetime.date(2026, 11, 2), datetime.date(2026, 11, 10)):
        gauge_compute(day=day)
    page = client.get("/feedback/").content.decode()
    assert f'aria-labelledby="gauge-{cast.trainee_a.pk}-0-t gauge-{cast.trainee_a.pk}-0-d"' in page
    assert 'aria-labelledby="trend-t trend-d"' in page
    assert "<td>과다</td>" in page  # the table alternative: reflection-only counselor turns overuse RELATIONAL


def test_it_names_only_the_sessions_the_gauge_counted_and_says_when_newer_ones_count(client, cast, sessions):
    gauge_compute(day=datetime.date(2026, 11, 10))
    later = make_session("PAGE_A2", 4, trainee="trainee_a", held_on="2026-11-09")  # an import after the night

    page = log_in(client, cast.trainee_a).get("/feedback/").content.decode()
    scope = page.split('id="gauge-scope"', 1)[1].split("</p>", 1)[0]
    counted, pending = scope.split('id="gauge-pending"', 1)
    assert "회기 1개" in counted and "PAGE_A1" in counted and "PAGE_A2" not in counted
    assert "계산 뒤에 추가된 회기 1개" in pending and f'href="/feedback/sessions/{later.pk}/"' in pending
    assert "다음 계산(매일 밤)에 반영됩니다" in pending

    gauge_compute(day=datetime.date(2026, 11, 10))  # the next night counts it
    page = client.get("/feedback/").content.decode()
    scope = page.split('id="gauge-scope"', 1)[1].split("</p>", 1)[0]
    assert "회기 2개" in scope and "PAGE_A2" in scope and "gauge-pending" not in scope
    # the supervisor's dashboard reads the same scopes, per trainee
    page = log_in(client, cast.supervisor_a).get("/feedback/").content.decode()
    scope = page.split(f'id="gauge-scope-{cast.trainee_a.pk}"', 1)[1].split("</p>", 1)[0]
    assert "회기 2개" in scope and "gauge-pending" not in scope


def test_it_plots_a_sessions_windows_as_one_chart_in_plain_korean(client, cast, sessions):
    trajectory_audit_sessions(session_ids=[sessions["a"].pk])
    windows = TrajectoryAudit.objects.filter(session=sessions["a"]).order_by("window_index")
    assert windows.count() == 2  # 12 turns: windows of 10 with stride 5
    page = log_in(client, cast.trainee_a).get(f"/feedback/sessions/{sessions['a'].pk}/").content.decode()
    section = page.split('id="trajectory-title"', 1)[1].split("</section>", 1)[0]
    # one chart for the session (drawn wide and compact for phones), not one per window
    assert section.count("<svg") == 2 and 'id="trajectory-t"' in section and 'id="trajectory-c-t"' in section
    # each window counted from 1 as the transcript reads, linked to its first turn's card
    for window in windows:
        span = f"{window.first_seq + 1}–{window.last_seq + 1}번째 발화"
        assert f'<a href="#turn-{window.first_seq}">{span}</a>:' in section
        assert f'id="turn-{window.first_seq}"' in page
    for term in ("GED", "penalty_wall", "productive", "neutral", "harmful", "momentum", "valence", "템플릿"):
        assert term not in re.sub(r"<[^>]*>", " ", section), term  # the words a reader sees


def test_it_counts_new_comments_among_the_comments_and_marks_them_all_read(client, cast, sessions):
    page = log_in(client, cast.trainee_a).get("/feedback/").content.decode()
    shown = SupervisorComment.objects.filter(turn__session=sessions["a"], is_suggestion=False).count()
    row = page.split("PAGE_A1", 1)[1].split("</tr>", 1)[0]
    assert (
        f'<td data-label="논평·근거">{shown}</td>' in row and f"새 논평 {shown}" in row
    )  # the same comments, all unread
    assert "모두 읽음" in page
    response = client.post("/feedback/comments/read-all/")
    assert response.status_code == 302 and response["Location"] == "/feedback/"
    assert CommentRead.objects.filter(user=cast.trainee_a).count() == shown
    page = client.get("/feedback/").content.decode()
    assert "새 논평 " not in page and "모두 읽음" not in page


def test_mark_all_read_leaves_other_trainees_comments_alone(client, cast, sessions):
    log_in(client, cast.trainee_a)
    assert client.post("/feedback/comments/read-all/", {"session": sessions["b"].pk}).status_code == 404
    log_in(client, cast.supervisor_b).post("/feedback/comments/read-all/")
    assert not CommentRead.objects.exists()


def test_the_pages_are_the_trainees_own_feedback_and_the_supervisors_trainees_feedback(client, cast, sessions):
    url = f"/feedback/sessions/{sessions['a'].pk}/"
    for user, heading in ((cast.trainee_a, "내 피드백"), (cast.supervisor_a, "수련생 피드백")):
        log_in(client, user)
        page = client.get("/feedback/").content.decode()
        assert f"<h1>{heading}</h1>" in page and f"<title>{heading} · 수련 감독 포털</title>" in page
        assert f'<a href="/feedback/">{heading}</a>' in client.get(url).content.decode()  # nav and crumbs
    assert "내 피드백" not in client.get(url).content.decode()


def test_a_supervisor_sees_their_trainees_gauges_and_no_new_comments_of_their_own(client, cast, sessions):
    gauge_compute(day=datetime.date(2026, 11, 10))
    page = log_in(client, cast.supervisor_a).get("/feedback/").content.decode()
    assert "아직 계산된 검토 지표가 없습니다" not in page
    assert 'aria-labelledby="gauge-' in page and "<h3" in page and "trainee_a" in page
    assert "trainee_b" not in page  # another supervisor's trainee
    assert "새 논평" not in page and "그중 수련생 미확인" in page and "미확인 3" in page
    CommentRead.objects.bulk_create(
        CommentRead(comment=c, user=cast.trainee_a)
        for c in SupervisorComment.objects.filter(turn__session=sessions["a"], is_suggestion=False)
    )
    assert "미확인 3" not in client.get("/feedback/").content.decode()


def test_the_supervisors_dashboard_reads_gauges_in_a_constant_number_of_queries(
    client, cast, django_assert_num_queries
):
    make_session("PAGE_G1", 6, trainee="trainee_a")
    gauge_compute(day=datetime.date(2026, 11, 10))
    log_in(client, cast.staff)
    expected = count_queries(client, "/feedback/")
    make_session("PAGE_G2", 6, trainee="trainee_b")
    gauge_compute(day=datetime.date(2026, 11, 11))
    with django_assert_num_queries(expected):
        assert "trainee_b" in client.get("/feedback/").content.decode()


def count_queries(client, url):
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_it_renders_session_pages_in_a_constant_number_of_queries(client, cast, django_assert_num_queries):
    small = make_session("PAGE_Q10", 10, trainee="trainee_a")
    large = make_session("PAGE_Q50", 50, trainee="trainee_a")
    log_in(client, cast.trainee_a)
    client.get("/feedback/")  # warm the session
    expected = count_queries(client, f"/feedback/sessions/{small.pk}/")
    with django_assert_num_queries(expected):
        page = client.get(f"/feedback/sessions/{large.pk}/").content.decode()
    assert all(f"합성 발화 PAGE_Q50 {seq}번째 문장입니다." in page for seq in range(50))


def test_it_renders_the_dashboard_in_a_constant_number_of_queries(client, cast, django_assert_num_queries):
    make_session("PAGE_D1", 6, trainee="trainee_a")
    log_in(client, cast.trainee_a)
    expected = count_queries(client, "/feedback/")
    for n in range(2, 8):
        make_session(f"PAGE_D{n}", 6, trainee="trainee_a")
    with django_assert_num_queries(expected):
        page = client.get("/feedback/").content.decode()
    assert all(f"PAGE_D{n}" in page for n in range(1, 8))


def test_it_offers_a_korean_log_in_page_with_labelled_fields(client, db):
    page = client.get("/accounts/login/").content.decode()
    assert '<html lang="ko">' in page
    assert '<label for="id_username">아이디</label>' in page
    assert '<label for="id_password">비밀번호</label>' in page
    response = client.post("/accounts/login/", {"username": "nobody", "password": "wrong"})
    assert "아이디 또는 비밀번호가 맞지 않습니다" in response.content.decode()
    assert 'aria-invalid="true"' in response.content.decode()


def test_it_logs_in_and_out(client, cast):
    response = client.post("/accounts/login/", {"username": "trainee_a", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/feedback/"
    response = client.post("/accounts/logout/", follow=True)
    assert "로그인" in response.content.decode()
    assert client.get("/feedback/").status_code == 302


def test_a_reply_with_a_phone_number_is_refused(client, cast, sessions):
    comment = SupervisorComment.objects.filter(turn__session=sessions["a"]).first()
    log_in(client, cast.trainee_a)
    response = client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": "제 번호 010-0000-0000"}, follow=True)
    assert "전화번호" in response.content.decode()
    assert not CommentReply.objects.exists()


def _reply_box(page: str, comment) -> str:
    return page.split(f'id="reply-{comment.pk}"', 1)[1].split(">", 1)[1].split("</textarea>", 1)[0]


def test_a_refused_reply_comes_back_in_its_box_once_and_never_in_the_kept_page(client, cast, sessions):
    comments = list(SupervisorComment.objects.filter(turn__session=sessions["a"]).order_by("pk")[:2])
    assert len(comments) == 2
    refused, other = comments
    log_in(client, cast.trainee_a)
    page_url = f"/feedback/sessions/{sessions['a'].pk}/"
    client.get(page_url)  # the page is now kept rendered (pagecache)
    words = "지난 회기에 말씀하신 부분을 다시 생각해 봤습니다.\n제 번호 010-0000-0000 으로 연락 주세요 <b>꼭</b>"
    page = client.post(f"/feedback/comments/{refused.pk}/replies/", {"text": words}, follow=True).content.decode()
    assert "전화번호" in page
    assert _reply_box(page, refused) == escape(words)  # what was written, escaped, in the comment's own box
    assert _reply_box(page, other) == ""
    again = client.get(page_url).content.decode()  # taken once: the next visit has empty boxes
    assert _reply_box(again, refused) == "" and "010-0000-0000" not in again
    client.post(f"/feedback/comments/{refused.pk}/replies/", {"text": "제 번호 010-0000-0000"})
    client.post(f"/feedback/comments/{refused.pk}/replies/", {"text": "다시 정리해서 적었습니다."})
    assert "010-0000-0000" not in client.get(page_url).content.decode()  # a reply that lands clears the draft
    assert CommentReply.objects.get().text == "다시 정리해서 적었습니다."


def test_a_reply_counts_a_line_break_as_the_browser_does(client, cast, sessions):
    comment = SupervisorComment.objects.filter(turn__session=sessions["a"]).first()
    log_in(client, cast.trainee_a)
    # 20 lines of 99 characters: 1,999 characters in the box (maxlength 2000), 2,018 as posted with CR LF.
    words = "\r\n".join(["가" * 99] * 20)
    client.post(f"/feedback/comments/{comment.pk}/replies/", {"text": words})
    assert CommentReply.objects.get().text == "\n".join(["가" * 99] * 20)
