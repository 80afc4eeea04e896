"""The supervisor's workplace in a real browser: the admin session page driven through its UI.

Playwright drives Debian's Chromium (never a downloaded browser) against pytest-django's live server,
logged in as a supervisor with their real permissions. Screenshots go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from supervision.importing.services import import_transcripts
from supervision.models import CommentAuthor, CommentKind, Session, SupervisorComment
from supervision.nightly import nightly_review
from supervision.tags.models import TagEvidence
from supervision.testing import browser_admin_log_in, browser_marks, golden_session
from supervision.trajectory.services import trajectory_audit_sessions

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
DAY = datetime.date(2026, 11, 2)

pytestmark = browser_marks()


@pytest.fixture
def session(cast, http_settings):
    SHOTS.mkdir(parents=True, exist_ok=True)
    lines = golden_session("ADM_WEB1", 20, held_on=DAY.isoformat())
    for line in lines[::4]:  # every other counselor turn holds instead of reflecting
        line["techniques"] = ["holding"]
    lines[1]["text"] = "요즘은 아무것도 하기 싫고 다 포기하고 싶어요."
    report = import_transcripts(rows=enumerate(lines, start=1), trainee_username="trainee_a")
    assert report.ok, report.errors
    session = Session.objects.get(code="ADM_WEB1")
    trajectory_audit_sessions(session_ids=[session.pk])
    return session


def suggest(session, seq: int, key: str) -> SupervisorComment:
    return SupervisorComment.objects.create(
        turn=session.turns.get(seq=seq),
        kind=CommentKind.CRITIQUE,
        text=f"AI 제안 {key}",
        author=CommentAuthor.AI,
        is_suggestion=True,
        suggestion_key=key,
        intent_deviation={"dimension": "대화행위 (dialog_act)", "severity": "moderate"},
    )


@pytest.fixture
def page_as_supervisor(browser, live_server, session, cast):
    def open_page(viewport=LAPTOP, color_scheme="light"):
        context = browser.new_context(viewport=viewport, locale="ko-KR", color_scheme=color_scheme)
        page = context.new_page()
        browser_admin_log_in(page, live_server.url, "supervisor_a")
        page.goto(f"{live_server.url}/admin/supervision/session/{session.pk}/change/")
        return page

    return open_page


def test_the_transcript_filter_filters_and_stays_on_the_page(page_as_supervisor, session):
    page = page_as_supervisor()
    page.locator(".transcript-filters select[name=label]").select_option("holding")
    page.get_by_role("button", name="거르기").click()
    page.wait_for_load_state()
    assert f"/admin/supervision/session/{session.pk}/change/" in page.url and "label=holding" in page.url
    turns = page.locator("ol.transcript > li.turn")
    assert turns.count() == 5
    assert all("홀딩" in turns.nth(i).inner_text() for i in range(5))
    page.screenshot(path=str(SHOTS / "admin_session_filtered_laptop.png"), full_page=False)


def test_the_transcript_filter_fits_a_phone_with_touch_sized_controls(page_as_supervisor):
    page = page_as_supervisor(PHONE)
    controls = page.locator(".transcript-filters select, .transcript-filters input, .transcript-filters button")
    assert controls.count() == 5
    for i in range(controls.count()):
        box = controls.nth(i).bounding_box()
        # the label select's longest option once pushed it past the screen's edge
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1
        assert box["height"] >= 44
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.locator(".transcript-filters").screenshot(path=str(SHOTS / "admin_session_filters_phone.png"))


# Every word of an element's text on one line: a word split over two lines has two rectangles.
WORDS_SPLIT_ACROSS_LINES = """(element) => {
    const node = element.firstChild, text = node.textContent, split = [];
    const range = document.createRange();
    for (const match of text.matchAll(/\\S+/g)) {
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        if (new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size > 1) split.push(match[0]);
    }
    return split;
}"""


def test_korean_turns_wrap_between_words_on_a_phone(page_as_supervisor, session):
    # The walk-through found "어\n머니랑", "이야\n기하지": the admin broke Korean words anywhere.
    session.turns.filter(seq=0).update(
        text="안녕하세요. 여기까지 오느라 고생 많았어요. 어머니랑 같이 왔다고 들었는데, 오는 길은 어땠어요? "
        "요즘 잠은 어떻게 주무시는지, 식사는 제때 하시는지도 천천히 이야기해 주세요."
    )
    page = page_as_supervisor(PHONE)
    texts = page.locator("ol.transcript > li.turn p.text")
    assert texts.count() == 20
    for i in range(texts.count()):
        assert texts.nth(i).evaluate(WORDS_SPLIT_ACROSS_LINES) == [], texts.nth(i).inner_text()


def test_a_critique_naming_a_technique_in_korean_is_stored_as_its_code_and_counted(page_as_supervisor, session):
    page = page_as_supervisor()
    turn = session.turns.get(seq=2)
    item = page.locator(f"#turn-{turn.seq}")
    item.get_by_text("논평 쓰기").click()
    item.get_by_label("내용").fill("홀딩이 필요한 자리에서 반영으로 넘어갔습니다.")
    item.get_by_label("권장 의도(expected)").fill("홀딩")
    item.get_by_label("실제(actual)").fill("인지 재구성")
    item.get_by_role("button", name="논평 저장").click()
    page.wait_for_load_state()
    assert "논평을 남겼습니다" in page.locator(".messagelist").inner_text()
    comment = SupervisorComment.objects.get(text__startswith="홀딩이 필요한")
    assert comment.intent_deviation["expected"] == "holding"
    assert comment.intent_deviation["actual"] == "cognitive_restructuring"
    assert "홀딩 (holding)" in page.locator(f"#comment-{comment.pk}").inner_text()
    nightly_review(day=DAY)  # the gauge of the day, then the tags read its critiques
    assert TagEvidence.objects.filter(session=session, event__contains="논평").exists()


def test_a_supervisor_accepts_and_dismisses_suggestions_on_the_session_page(page_as_supervisor, session):
    accepted = suggest(session, 5, "gauge:silent_close")
    dismissed = suggest(session, 9, "gauge:closed_on_resuming")
    balance = suggest(session, 18, "gauge:band:RELATIONAL")
    page = page_as_supervisor()
    header = page.locator(".session-suggestions")
    assert "AI 제안 gauge:band:RELATIONAL" in header.inner_text()  # session-wide: in the header
    assert page.locator("#turn-18 .comment.suggestion").count() == 0
    page.screenshot(path=str(SHOTS / "admin_session_laptop.png"), full_page=True)
    page.locator(f"#turn-{accepted.turn.seq}").screenshot(path=str(SHOTS / "admin_suggestion_card.png"))

    page.locator(f"#comment-{accepted.pk}").get_by_role("button", name="수락").click()
    page.wait_for_load_state()
    accepted.refresh_from_db()
    assert (accepted.is_suggestion, accepted.written_by_id) == (False, session.trainee.assignment.supervisor_id)

    card = page.locator(f"#comment-{dismissed.pk}")
    card.get_by_text("기각…").click()
    card.screenshot(path=str(SHOTS / "admin_suggestion_dismiss_confirm.png"))
    card.get_by_role("button", name="기각 확인").click()
    page.wait_for_load_state()
    assert not SupervisorComment.objects.filter(pk=dismissed.pk).exists()
    assert SupervisorComment.objects.filter(pk=balance.pk, is_suggestion=True).exists()


def test_editing_a_turns_labels_lands_back_on_the_transcript_at_that_turn(page_as_supervisor, session):
    page = page_as_supervisor()
    page.locator("#turn-3").get_by_role("link", name="라벨 편집").click()
    page.wait_for_load_state()
    assert "/admin/supervision/turn/" in page.url
    assert "LABEL" not in page.content()
    page.screenshot(path=str(SHOTS / "admin_turn_labels_laptop.png"), full_page=True)
    page.get_by_role("button", name="저장", exact=True).click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/admin/supervision/session/{session.pk}/change/#turn-3")
    assert "저장했습니다" in page.locator(".messagelist").inner_text()


def test_the_audit_chart_is_on_the_admin_session_page(page_as_supervisor, session):
    for name, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
        page = page_as_supervisor(viewport)
        section = page.locator(".trajectory-admin")
        assert section.count() == 1 and section.locator("svg").count() >= 1
        section.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"admin_session_audit_{name}.png"), full_page=False)
        # One drawing per window is shown, at a scale that keeps its 12-14 px text readable (the wide
        # drawing on a phone was at 0.4), and the explanation under it uses the section's width.
        scales = section.evaluate(
            """(section) => Array.from(section.querySelectorAll("svg.chart"))
                .filter((svg) => svg.getBoundingClientRect().width > 0)
                .map((svg) => svg.getBoundingClientRect().width / svg.viewBox.baseVal.width)"""
        )
        assert len(scales) == section.locator("figure.audit").count() and min(scales) >= 0.8
        caption = section.locator("figcaption").first.bounding_box()["width"]
        assert caption >= 0.9 * section.bounding_box()["width"]
        link = page.get_by_role("link", name="수련생 화면에서 이 회기 보기")
        assert link.get_attribute("href") == f"/feedback/sessions/{session.pk}/"


def test_the_audits_own_page_draws_its_chart_at_a_readable_size(page_as_supervisor, session, live_server):
    # In its read-only field the chart had no width of its own and shrank to 0.7 (8 px text) on a laptop.
    audit = session.trajectory_audits.order_by("window_index").first()
    for viewport in (LAPTOP, {"width": 1366, "height": 900}, PHONE):
        page = page_as_supervisor(viewport)
        page.goto(f"{live_server.url}/admin/trajectory/trajectoryaudit/{audit.pk}/change/")
        smallest = page.evaluate(
            """() => Math.min(...Array.from(document.querySelectorAll("svg.chart"))
                .filter((svg) => svg.getBoundingClientRect().width > 0)
                .flatMap((svg) => Array.from(svg.querySelectorAll("text"), (t) =>
                    parseFloat(getComputedStyle(t).fontSize) * svg.getBoundingClientRect().width
                    / svg.viewBox.baseVal.width)))"""
        )
        assert 11 <= smallest < 99, (viewport, smallest)
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"] + 1


def test_lists_of_turns_and_comments_read_on_a_phone(page_as_supervisor, session, live_server):
    SupervisorComment.objects.create(
        turn=session.turns.get(seq=2),
        kind=CommentKind.CRITIQUE,
        text="감정 반영 없이 곧바로 질문으로 넘어갔습니다. 내담자의 말을 먼저 되돌려 주세요.",
        author=CommentAuthor.SUPERVISOR,
    )
    page = page_as_supervisor(PHONE)
    for url, column in (
        ("/admin/supervision/supervisorcomment/", "short_text"),
        ("/admin/supervision/turn/", "short_text"),
    ):
        page.goto(f"{live_server.url}{url}")
        cell = page.locator(f"#result_list tbody td.field-{column}").first
        # A sentence column keeps a readable measure (it was squeezed to one syllable a line), so a row
        # stays a few lines tall; the list scrolls sideways in its own box, not the page.
        assert cell.bounding_box()["width"] >= 180
        assert cell.bounding_box()["height"] <= 100
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    speaker = page.locator("#result_list tbody td.field-speaker").first
    lines = speaker.evaluate(
        "(td) => { const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length; }"
    )
    assert speaker.inner_text() == "상담자" and lines == 1  # one line, not one syllable a line
    page.screenshot(path=str(SHOTS / "admin_turn_list_phone.png"), full_page=False)


def test_charts_stay_readable_in_the_admins_dark_theme(page_as_supervisor):
    page = page_as_supervisor(color_scheme="dark")
    chart = page.locator(".trajectory-admin svg.chart").first
    chart.scroll_into_view_if_needed()
    ground = "(el) => getComputedStyle(el).backgroundColor"
    # The admin follows the system's dark theme; the chart's dark text keeps a light ground of its own.
    assert page.locator("body").evaluate(ground) not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")
    assert chart.evaluate(ground) == "rgb(255, 255, 255)"
    page.screenshot(path=str(SHOTS / "admin_session_audit_dark.png"), full_page=False)
