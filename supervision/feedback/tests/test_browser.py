"""Browser scenarios: Playwright driving Debian's Chromium against pytest-django's live server.

Never lets Playwright download a browser: it launches /usr/bin/chromium (apt-get install chromium).
Screenshots go to test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from supervision.feedback.models import CommentRead, CommentReply
from supervision.feedback.tests.factories import make_session
from supervision.gauge.services import gauge_compute
from supervision.models import SupervisorComment
from supervision.testing import browser_log_in, browser_marks
from supervision.trajectory.services import trajectory_audit_sessions

SHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
LAPTOP = {"width": 1366, "height": 900}
TABLET = {"width": 820, "height": 1180}
PHONE = {"width": 390, "height": 844}
# Smallest rendered size of any visible chart text, and elements wider than their box.
MEASURE_PHONE = """() => {
  let smallest = 99;
  for (const svg of document.querySelectorAll('svg.chart')) {
    const shown = svg.getBoundingClientRect().width;
    if (!shown) continue;
    const scale = shown / svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll('text')) smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
  }
  const clipped = [...document.querySelectorAll('.compare > div, .compare dd')].filter(e => e.scrollWidth > e.clientWidth + 1).length;
  const codes = [...document.querySelectorAll('.code, .session-code')].filter(e => e.getClientRects().length > 1).length;
  // session list cells (the new-critique badge above all) that end outside their card, cut off by its scroll box
  const cutOff = [...document.querySelectorAll('table.sessions tr > *')]
    .filter(e => e.getBoundingClientRect().right > e.closest('.card').getBoundingClientRect().right + 1).length;
  const badges = document.querySelectorAll('table.sessions .badge').length;
  return {smallest, clipped, codes, cutOff, badges, pageWidth: document.documentElement.scrollWidth};
}"""

pytestmark = browser_marks()


@pytest.fixture(autouse=True)
def _screenshots_folder():
    SHOTS.mkdir(parents=True, exist_ok=True)


def test_a_trainee_reads_a_critique_and_replies(browser, live_server, cast, http_settings, csp_violations):
    own = make_session("WEB_A1", 16, trainee="trainee_a")
    other = make_session("WEB_B1", 8, trainee="trainee_b")
    # What the nightly job leaves behind: two trainee-wide gauge snapshots and the session's audits.
    for day in (datetime.date(2026, 11, 2), datetime.date(2026, 11, 10)):
        gauge_compute(day=day)
    trajectory_audit_sessions(session_ids=[own.pk])

    for name, viewport in (("laptop", LAPTOP), ("tablet", TABLET)):
        context = csp_violations(browser.new_context(viewport=viewport, locale="ko-KR"))
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.screenshot(path=SHOTS / f"login-{name}.png")
        # Keyboard only: the user name has focus on arrival and Tab moves on to the password.
        assert page.evaluate("document.activeElement.id") == "id_username"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "id_password"
        context.close()

    context = csp_violations(browser.new_context(viewport=LAPTOP, locale="ko-KR"))
    page = context.new_page()
    browser_log_in(page, live_server.url, "trainee_a")
    page.wait_for_url(f"{live_server.url}/feedback/")
    assert page.get_by_role("link", name="WEB_A1").count() == 1 or "WEB_A1" in page.content()
    assert "WEB_B1" not in page.content()
    assert page.get_by_text("새 논평 4").is_visible()
    page.screenshot(path=SHOTS / "dashboard-laptop.png", full_page=True)

    page.get_by_role("link", name="WEB_A1").first.click()
    page.wait_for_url(f"{live_server.url}/feedback/sessions/{own.pk}/")
    comment = SupervisorComment.objects.filter(turn__session=own).order_by("turn__seq").first()
    article = page.locator(f"#comment-{comment.pk}")
    assert "감정 반영 없이 곧바로 질문으로 넘어갔습니다." in article.inner_text()
    assert "반영 (reflection)" in article.inner_text()
    page.screenshot(path=SHOTS / "session-laptop.png", full_page=True)

    article.get_by_role("button", name="읽음으로 표시").click()
    page.wait_for_load_state()
    assert CommentRead.objects.filter(comment=comment, user=cast.trainee_a).exists()
    article = page.locator(f"#comment-{comment.pk}")
    article.get_by_label("답글").fill("다음 회기에는 먼저 감정을 반영해 보겠습니다.")
    article.get_by_role("button", name="답글 남기기").click()
    page.wait_for_load_state()
    assert page.get_by_text("답글을 남겼습니다.").is_visible()
    assert "다음 회기에는 먼저 감정을 반영해 보겠습니다." in page.locator(f"#comment-{comment.pk}").inner_text()
    assert CommentReply.objects.filter(comment=comment, author=cast.trainee_a).count() == 1

    page.set_viewport_size(TABLET)
    page.goto(f"{live_server.url}/feedback/sessions/{own.pk}/")
    page.screenshot(path=SHOTS / "session-tablet.png", full_page=False)
    response = page.goto(f"{live_server.url}/feedback/sessions/{other.pk}/")
    assert response.status == 404

    page.goto(f"{live_server.url}/feedback/")
    page.get_by_role("button", name="로그아웃").click()
    page.wait_for_load_state()
    page.wait_for_url(f"{live_server.url}/accounts/login/")
    assert page.get_by_role("heading", name="로그인").is_visible()
    page.goto(f"{live_server.url}/feedback/")
    assert page.url.startswith(f"{live_server.url}/accounts/login/?next=")
    context.close()


def test_a_trainees_pages_read_at_phone_width(browser, live_server, cast, http_settings, csp_violations):
    own = make_session("WEB_P1", 16, trainee="trainee_a")
    gauge_compute(day=datetime.date(2026, 11, 2))
    trajectory_audit_sessions(session_ids=[own.pk])
    context = csp_violations(browser.new_context(viewport=PHONE, locale="ko-KR"))
    page = context.new_page()
    browser_log_in(page, live_server.url, "trainee_a")
    page.wait_for_url(f"{live_server.url}/feedback/")
    for url in ("/feedback/", f"/feedback/sessions/{own.pk}/"):
        page.goto(f"{live_server.url}{url}")
        measured = page.evaluate(MEASURE_PHONE)
        assert measured["smallest"] >= 11, (url, measured)  # chart text never shrinks below 11 px
        assert measured["pageWidth"] <= PHONE["width"], (url, measured)
        assert measured["clipped"] == 0 and measured["codes"] == 0, (url, measured)
        assert measured["cutOff"] == 0, (url, measured)
        if url == "/feedback/":
            assert measured["badges"] == 1, measured  # the session's new critiques, in view
            page.screenshot(path=SHOTS / "dashboard-phone.png", full_page=False)
    page.locator(".compare").first.scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / "session-phone.png", full_page=False)
    context.close()


def test_a_supervisor_critiques_in_the_admin_and_the_trainee_sees_it(
    browser, live_server, cast, http_settings, csp_violations
):
    session = make_session("WEB_S1", 10, trainee="trainee_a", critique_every=0)
    turn = session.turns.get(seq=2)

    context = csp_violations(browser.new_context(viewport=LAPTOP, locale="ko-KR"))
    page = context.new_page()
    browser_log_in(page, live_server.url, "supervisor_a")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.goto(f"{live_server.url}/admin/supervision/session/{session.pk}/change/")
    row = page.locator("#turn-2")
    row.get_by_text("논평 쓰기").click()
    row.get_by_label("종류").select_option("critique")
    row.get_by_label("내용").fill("내담자의 망설임을 반영하지 않고 다음 질문으로 넘어갔습니다.")
    row.get_by_label("평가 차원").fill("공감 타이밍")
    row.get_by_label("권장 의도(expected)").fill("reflection")
    row.get_by_label("실제(actual)").fill("exploration")
    row.get_by_label("심각도").select_option("major")
    page.screenshot(path=SHOTS / "admin-session-laptop.png", full_page=False)
    row.get_by_role("button", name="논평 저장").click()
    page.wait_for_load_state()
    assert page.get_by_text("WEB_S1-C-002에 논평을 남겼습니다.").is_visible()
    comment = SupervisorComment.objects.get(turn=turn)
    assert comment.intent_deviation == {
        "dimension": "공감 타이밍",
        "expected": "reflection",
        "actual": "exploration",
        "severity": "major",
    }
    page.locator("#turn-2").scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / "admin-session-after-critique.png", full_page=False)
    assert "WEB_" in page.content()
    page.goto(f"{live_server.url}/admin/supervision/session/")
    assert "trainee_b" not in page.content()
    context.close()

    context = csp_violations(browser.new_context(viewport=TABLET, locale="ko-KR"))
    page = context.new_page()
    browser_log_in(page, live_server.url, "trainee_a")
    page.goto(f"{live_server.url}/feedback/sessions/{session.pk}/")
    article = page.locator(f"#comment-{comment.pk}")
    assert "내담자의 망설임을 반영하지 않고" in article.inner_text()
    assert "중대" in article.inner_text()
    context.close()


def test_swagger_ui_the_admin_and_a_lockout_work_under_the_content_security_policy(
    browser, live_server, cast, http_settings, csp_violations
):
    make_session("WEB_C1", 8, trainee="trainee_a")
    context = csp_violations(browser.new_context(viewport=LAPTOP, locale="ko-KR"))
    page = context.new_page()
    browser_log_in(page, live_server.url, "staff")
    page.wait_for_url(f"{live_server.url}/admin/")
    response = page.goto(f"{live_server.url}/api/docs/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    # Swagger UI ran: it fetched the schema and drew the operations.
    page.get_by_text("/api/v1/sessions/", exact=True).first.wait_for(timeout=15_000)
    page.screenshot(path=SHOTS / "api-docs-csp.png", full_page=False)
    for path in (
        "/admin/",
        "/admin/supervision/session/",
        "/admin/supervision/session/import/",
        "/admin/gauge/gaugesnapshot/",
        "/admin/axes/accessattempt/",
    ):
        assert page.goto(f"{live_server.url}{path}").status == 200, path
    # The admin's own scripts (action checkboxes) still run.
    page.goto(f"{live_server.url}/admin/supervision/session/")
    page.locator("#action-toggle").check()
    assert page.locator(".action-counter").inner_text().startswith("1")
    context.close()

    context = csp_violations(browser.new_context(viewport=LAPTOP, locale="ko-KR"))
    page = context.new_page()
    for _ in range(10):
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("아이디").fill("trainee_b")
        page.get_by_label("비밀번호").fill("wrong-password")
        page.get_by_role("button", name="로그인").click()
        page.wait_for_load_state()
    browser_log_in(page, live_server.url, "trainee_b")
    page.wait_for_load_state()
    assert page.get_by_role("heading", name="로그인이 잠겼습니다").is_visible()
    page.screenshot(path=SHOTS / "login-locked.png", full_page=False)
    context.close()
