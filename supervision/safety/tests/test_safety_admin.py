"""The "안전 검토" page, its entry on the admin index and the marks on the transcript — as a supervisor and as
staff with their real permissions (the cast), never only as a superuser."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from supervision.safety.models import SafetyReview
from supervision.safety.selectors import safety_events
from supervision.safety.tests.factories import script
from supervision.trajectory.models import TrajectoryAudit, TrajectoryLabel
from supervision.trajectory.selectors import risk_threshold

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"
QUEUE = "/admin/safety/safetyreview/"


def review_url(event) -> str:
    return f"{QUEUE}{event.pk}/review/"


@pytest.fixture
def sessions(cast):
    return {
        "older": script("SQ01", f"K:{SI}", "C", "K", "C", held_on="2026-11-01"),
        "newer": script("SQ02", "C", f"K:{SH}", "C:empathy", "K", "C:validation", "C", held_on="2026-11-04"),
        "answered": script("SQ03", f"K:{SI}", f"C:{RA}", held_on="2026-11-05"),
        "other": script("SQB1", f"K:{SI}", "C", trainee="trainee_b", held_on="2026-11-06"),
    }


def event_of(user, utterance_id):
    return safety_events(user).select_related("turn__session").get(turn__utterance_id=utterance_id)


def test_it_links_the_page_first_on_the_admin_index_with_the_pending_count(client, cast, sessions):
    client.force_login(cast.supervisor_a)
    page = client.get("/admin/").content.decode()
    assert page.index('id="safety-review-entry"') < page.index('class="app-')  # before every app's module
    assert "위험사정 응답이 없는 자살·자해 보고 2건" in page
    client.force_login(cast.staff)
    assert "위험사정 응답이 없는 자살·자해 보고 3건" in client.get("/admin/").content.decode()


def test_the_index_entry_is_quiet_when_nothing_waits(client, cast):
    client.force_login(cast.supervisor_a)
    page = client.get("/admin/").content.decode()
    assert 'class="module safety-index none-pending"' in page and "검토를 기다리는 안전 사건이 없습니다." in page
    script("SQ09", f"K:{SI}", "C", held_on="2026-11-01")
    page = client.get("/admin/").content.decode()
    assert 'class="module safety-index"' in page and "위험사정 응답이 없는 자살·자해 보고 1건" in page


def test_it_lists_unanswered_unreviewed_events_of_the_supervisors_trainees_newest_first(client, cast, sessions):
    client.force_login(cast.supervisor_a)
    response = client.get(QUEUE)
    assert response.status_code == 200
    page = response.content.decode()
    assert page.index("SQ02") < page.index("SQ01")
    assert "SQ03" not in page and "SQB1" not in page  # answered; another supervisor's trainee
    # the disclosure and the counselor turns that followed it (the window: two), no further
    assert "합성 발화 SQ02 1" in page
    assert "합성 발화 SQ02 2" in page and "합성 발화 SQ02 4" in page and "합성 발화 SQ02 5" not in page
    assert page.count('class="review-form"') == 2


def test_a_supervisor_reviews_with_a_note_and_the_event_keeps_its_history(client, cast, sessions):
    event = event_of(cast.supervisor_a, "SQ01-K-001")
    client.force_login(cast.supervisor_a)
    response = client.post(review_url(event), {"note": "안전 계획을 함께 점검하기로 함"}, follow=True)
    assert "SQ01-K-001 안전 사건을 검토했습니다." in response.content.decode()
    assert "SQ01" not in client.get(QUEUE).content.decode()  # no longer waiting

    client.post(review_url(event), {"note": "면담에서 위험사정 순서를 연습함"})
    reviewed = client.get(QUEUE, {"show": "reviewed"}).content.decode()
    assert "면담에서 위험사정 순서를 연습함" in reviewed and "안전 계획을 함께 점검하기로 함" in reviewed  # history
    review = SafetyReview.objects.get()
    assert (review.reviewed_by, review.note) == (cast.supervisor_a, "면담에서 위험사정 순서를 연습함")
    assert review.history.count() == 2


def test_a_supervisor_cannot_review_another_supervisors_trainee(client, cast, sessions):
    event = event_of(cast.staff, "SQB1-K-001")
    client.force_login(cast.supervisor_a)
    assert client.post(review_url(event), {"note": "x"}).status_code == 404
    assert not SafetyReview.objects.exists()


def test_staff_read_the_page_but_do_not_review(client, cast, sessions):
    client.force_login(cast.staff)
    page = client.get(QUEUE).content.decode()
    assert "SQB1" in page and "SQ01" in page
    assert 'class="review-form"' not in page
    event = event_of(cast.staff, "SQ01-K-001")
    response = client.post(review_url(event), {"note": "x"}, follow=True)
    assert "담당 슈퍼바이저뿐입니다" in response.content.decode()
    assert not SafetyReview.objects.exists()


def test_a_trainee_has_no_admin_page(client, cast, sessions):
    client.force_login(cast.trainee_a)
    assert client.get(QUEUE).status_code == 302  # to the admin log-in: trainees never use the admin


def test_it_refuses_a_note_with_a_phone_number_and_says_why(client, cast, sessions):
    event = event_of(cast.supervisor_a, "SQ01-K-001")
    client.force_login(cast.supervisor_a)
    response = client.post(review_url(event), {"note": "보호자 010-1234-5678"}, follow=True)
    assert "검토를 저장하지 못했습니다" in response.content.decode()
    assert not SafetyReview.objects.exists()
    box = response.content.decode().split(f'id="note-{event.pk}"', 1)[1].split(">", 1)[1].split("</textarea>", 1)[0]
    assert box == "보호자 010-1234-5678"  # the note comes back to be mended, once
    assert "010-1234-5678" not in client.get(QUEUE).content.decode()


def test_a_note_counts_a_line_break_as_the_browser_does(client, cast, sessions):
    event = event_of(cast.supervisor_a, "SQ01-K-001")
    client.force_login(cast.supervisor_a)
    # 20 lines of 99 characters: 1,999 in the box (maxlength 2000), 2,018 as posted with CR LF.
    client.post(review_url(event), {"note": "\r\n".join(["가" * 99] * 20)})
    assert SafetyReview.objects.get().note == "\n".join(["가" * 99] * 20)


def test_the_transcript_marks_each_disclosure_and_its_answer(client, cast, sessions):
    client.force_login(cast.supervisor_a)
    page = client.get(f"/admin/supervision/session/{sessions['answered'].pk}/change/").content.decode()
    assert "안전 사건 · 자살사고 인정: SQ03-C-001에서 위험사정(1번째 상담자 발화)" in page
    assert "SQ03-K-001의 자살사고 인정에 대한 위험사정 응답" in page
    page = client.get(f"/admin/supervision/session/{sessions['older'].pk}/change/").content.decode()
    assert "안전 사건 · 자살사고 인정: 뒤따른 상담자 발화 2개 안에 위험사정 없음" in page


@pytest.mark.parametrize("n", [5, 25])
def test_the_page_costs_the_same_queries_for_few_or_many_events(client, cast, n):
    for i in range(n):
        script(f"SQN{i:03d}", f"K:{SI}", "C", "K", "C")
    client.force_login(cast.supervisor_a)
    client.post(review_url(event_of(cast.supervisor_a, "SQN000-K-001")), {"note": "확인"})
    with CaptureQueriesContext(connection) as queries:
        assert client.get(QUEUE, {"show": "all"}).status_code == 200
    # the request: session, user, permissions twice (admin site, template perms), roles; the page: count, the
    # events (one statement), the turns that followed, their labels, the review histories; the label
    # suggester's run and its events in sessions nobody labelled (CONTRACT §9: none here)
    assert len(queries.captured_queries) == 10 + 2, "\n".join(q["sql"][:150] for q in queries.captured_queries)


def test_it_lists_harmful_windows_whose_risk_rises_past_the_threshold_as_from_the_review_aid(client, cast, sessions):
    threshold = risk_threshold()
    below, above = round(threshold / 2, 2), round(min(1.0, threshold + 0.05), 2)

    def audit(session, index, label, risks):
        states = [{"seq": i, "utterance_id": f"{session.code}-K-{i + 1:03d}", "risk": r} for i, r in enumerate(risks)]
        return TrajectoryAudit.objects.create(
            session=session,
            window_index=index,
            first_seq=0,
            last_seq=9,
            label=label,
            score=0.2,
            explanation=f"창 {index}: 지지만 이어지는 동안 위험이 올라감",
            states=states,
            engine_version="test",
            computed_at=timezone.now(),
        )

    audit(sessions["older"], 0, TrajectoryLabel.HARMFUL, [below, above])  # rises past: listed
    audit(sessions["older"], 1, TrajectoryLabel.HARMFUL, [above, above])  # high throughout: not a rise
    audit(sessions["newer"], 0, TrajectoryLabel.NEUTRAL, [below, above])  # not judged harmful
    audit(sessions["other"], 0, TrajectoryLabel.HARMFUL, [below, above])  # another supervisor's trainee
    client.force_login(cast.supervisor_a)
    page = client.get(QUEUE).content.decode()
    assert "검토 보조(review aid)" in page
    aid = page[page.index('class="review-aid"') :]
    assert "창 0: 지지만 이어지는 동안 위험이 올라감" in aid and "SQ01-K-002에서 기준선 넘음" in aid
    assert "창 1:" not in aid and "SQ02" not in aid and "SQB1" not in aid
