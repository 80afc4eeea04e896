"""A supervisor works through the "안전 검토" page in Chromium, at laptop and phone widths."""

from __future__ import annotations

from supervision.feedback.tests.test_browser import SHOTS
from supervision.safety.models import SafetyReview
from supervision.safety.tests.factories import script
from supervision.testing import browser_contrast, browser_log_in, browser_marks

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"

pytestmark = browser_marks()


def test_a_supervisor_reviews_an_unanswered_disclosure(browser, live_server, cast, http_settings):
    script("WSF01", "C", f"K:{SI}", "C:empathy", "K", "C:validation", "K", f"C:{RA}", held_on="2026-11-03")
    script("WSF02", f"K:{SH}", "C:reflection", "K", "C:exploration", held_on="2026-11-05")
    script("WSF03", "C", f"K:{SI}", f"C:{RA}", held_on="2026-11-06")
    script("WSFB1", f"K:{SI}", "C", trainee="trainee_b", held_on="2026-11-06")

    for name, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport, locale="ko-KR")
        page = context.new_page()
        browser_log_in(page, live_server.url, "supervisor_a")
        page.wait_for_url(f"{live_server.url}/admin/")
        entry = page.locator("#safety-review-entry")
        assert "2건" in entry.inner_text()
        page.screenshot(path=SHOTS / f"admin-index-safety-{name}.png", full_page=False)
        entry.get_by_role("link", name="안전 검토").click()
        page.wait_for_url(f"{live_server.url}/admin/safety/safetyreview/")
        events = page.locator(".safety-event")
        assert events.count() == 2
        assert "WSF02" in events.nth(0).inner_text() and "WSF01" in events.nth(1).inner_text()
        assert "WSFB1" not in page.content()
        page.screenshot(path=SHOTS / f"safety-review-{name}.png", full_page=True)
        context.close()

    context = browser.new_context(viewport=LAPTOP, locale="ko-KR")
    page = context.new_page()
    browser_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/safety/safetyreview/")
    first = page.locator(".safety-event").first
    first.get_by_label("검토 메모").fill("수련생과 자해 보고 직후의 위험사정 질문을 함께 연습하기로 했습니다.")
    first.get_by_role("button", name="검토함으로 표시").click()
    page.wait_for_load_state()
    assert page.get_by_text("WSF02-K-001 안전 사건을 검토했습니다.").is_visible()
    assert page.locator(".safety-event").count() == 1
    review = SafetyReview.objects.get()
    assert review.reviewed_by == cast.supervisor_a
    page.get_by_role("link", name="검토 완료").click()
    page.wait_for_load_state()
    assert "함께 연습하기로 했습니다" in page.locator(".review-history").inner_text()
    page.screenshot(path=SHOTS / "safety-review-reviewed-laptop.png", full_page=True)

    page.goto(f"{live_server.url}/admin/supervision/session/{review.turn.session_id}/change/")
    marks = page.locator(".safety-mark")
    assert "위험사정 없음" in marks.first.inner_text()
    context.close()

    # the trainee reads the note beside the disclosure on their own transcript, on a phone
    context = browser.new_context(viewport=PHONE, locale="ko-KR")
    page = context.new_page()
    browser_log_in(page, live_server.url, "trainee_a")
    page.wait_for_url(f"{live_server.url}/feedback/")
    page.goto(f"{live_server.url}/feedback/sessions/{review.turn.session_id}/")
    moment = page.locator(".safety-moment").first
    assert "함께 연습하기로 했습니다" in moment.inner_text()
    moment.scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / "safety-trainee-phone.png", full_page=False)
    context.close()


def test_the_queue_reads_in_the_admins_dark_theme(browser, live_server, cast, http_settings):
    script("WSD01", f"K:{SH}", "C:reflection", "K", "C:exploration", held_on="2026-11-05")
    script("WSD02", "C", f"K:{SI}", f"C:{RA}", held_on="2026-11-06")
    context = browser.new_context(viewport=LAPTOP, locale="ko-KR", color_scheme="dark")
    page = context.new_page()
    browser_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/safety/safetyreview/?show=all")
    answered = page.locator(".safety-event", has_text="WSD02")
    # Light badges and the answering turn's light card keep dark text of their own (the theme's light text
    # and quiet grey on them were unreadable); WCAG AA asks for 4.5.
    for element in (
        page.locator(".state-badge .code").first,
        answered.locator("blockquote.answer p").last,
        answered.locator("blockquote.answer .code").first,
        answered.locator(".tech.risk"),
        answered.locator(".answer-badge"),
    ):
        assert browser_contrast(element) >= 4.5, element
    page.screenshot(path=SHOTS / "safety-review-dark.png", full_page=True)
    context.close()
