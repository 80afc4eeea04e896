"""The report and the adjudication queue in Chromium, as supervisor_a uses them, at laptop and phone width.

Screenshots go to test-artifacts/screenshots/ (gitignored); the ones kept in docs/screenshots/ are copies.
"""

from __future__ import annotations

from supervision.agreement.models import AdjudicationDecision
from supervision.agreement.tests.conftest import run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.feedback.tests.test_browser import SHOTS
from supervision.labelling import turn_label_codes
from supervision.models import Turn
from supervision.testing import browser_contrast, browser_log_in, browser_marks

pytestmark = browser_marks()

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def drawn_scales(page) -> dict[str, float]:
    """Each visible chart's drawn width over its own (viewBox) width, by the chart's title id."""
    return page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll("svg.chart"))
            .filter((svg) => svg.getBoundingClientRect().width > 0)
            .map((svg) => [svg.querySelector("title").id.replace(/-t$/, ""),
                           Math.round(100 * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width) / 100]))"""
    )


def test_a_supervisor_reads_the_report_and_adjudicates(browser, live_server, cast, golden, http_settings):
    saved_run(run_lines("AG01"), rater="eval-ai")
    run = saved_run(
        [
            {**line, "dialog_act": "inform"} if line["utterance_id"].endswith("K-002") else line
            for line in run_lines("AG01")
        ]
        + run_lines("AG02"),
        rater="eval-ai",
        kind="ai",
    )
    context = browser.new_context(viewport=LAPTOP, locale="ko-KR")
    page = context.new_page()
    browser_log_in(page, live_server.url, "supervisor_a")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.goto(f"{live_server.url}/admin/agreement/annotationrun/{run.pk}/report/")
    safety = page.locator("section.safety")
    assert "AG01-K-002" in safety.inner_text() and "AG02" not in page.content()
    # two F1 bars, two heat maps, the trend of two versions; a heat map is drawn at its own size
    assert len(drawn_scales(page)) == 5
    assert all(scale == 1.0 for ident, scale in drawn_scales(page).items() if ident.startswith("cm-"))
    # the F1 bars fit a 1280-px page beside the admin's menu without shrinking (they were at 0.98: 10.7 px text)
    assert all(scale >= 1.0 for ident, scale in drawn_scales(page).items() if ident.startswith("f1-"))
    page.screenshot(path=SHOTS / "agreement-report-laptop.png", full_page=True)
    page.set_viewport_size(PHONE)
    # on a phone the bars and the trend are drawn for its width: their text keeps its size
    phone = drawn_scales(page)
    assert len(phone) == 5 and all(phone[ident] >= 0.95 for ident in ("f1-techniques-c", "trend-c"))
    page.screenshot(path=SHOTS / "agreement-report-phone.png", full_page=True)
    page.set_viewport_size(LAPTOP)

    safety.get_by_role("link", name="AG01-K-002").click()
    page.wait_for_url("**/admin/supervision/session/*/change/#turn-5")

    page.goto(f"{live_server.url}/admin/agreement/annotationrun/{run.pk}/adjudicate/")
    group = page.locator("section.queue-group", has_text="exploration")
    group.get_by_placeholder("메모(선택)").fill("탐색 질문이 맞습니다")
    group.get_by_role("button", name="평가자 라벨 채택").click()
    page.wait_for_load_state()
    assert page.get_by_text("AG01-C-002: 평가자 라벨 채택 (accepted)").is_visible()
    assert "exploration" in turn_label_codes(Turn.objects.get(utterance_id="AG01-C-002"))["techniques"]
    kept = page.locator("section.queue-group", has_text="self_harm_disclosure")
    kept.get_by_role("button", name="골든 유지").click()
    page.wait_for_load_state()
    assert AdjudicationDecision.objects.count() == 2
    page.screenshot(path=SHOTS / "agreement-queue-laptop.png", full_page=True)
    page.set_viewport_size(PHONE)
    # the table of recent decisions scrolls in its box; it pushed the whole page 200 px wider on a phone
    assert page.locator("table.decided").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    page.screenshot(path=SHOTS / "agreement-queue-phone.png", full_page=False)
    context.close()


def test_the_reports_safety_box_reads_in_the_admins_dark_theme(browser, live_server, cast, golden, http_settings):
    run = saved_run(run_lines("AG01"), rater="eval-ai", kind="ai")
    context = browser.new_context(viewport=LAPTOP, locale="ko-KR", color_scheme="dark")
    page = context.new_page()
    browser_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/agreement/annotationrun/{run.pk}/report/")
    safety = page.locator("section.safety")
    # a light box that sets its own text and link colours (the dark theme's light ones on it were unreadable)
    assert browser_contrast(safety.locator("li").first) >= 4.5
    assert browser_contrast(safety.get_by_role("link").first) >= 4.5
    context.close()


def test_a_run_that_misses_no_safety_state_gets_good_news_not_an_alarm(
    browser, live_server, cast, golden, http_settings
):
    # the golden answers themselves: every suicide and self-harm state found
    lines = [
        {**line, "client_states": ["affect_contact", "self_harm_disclosure"]}
        if line["utterance_id"].endswith("K-002")
        else line
        for line in run_lines("AG01")
    ]
    run = saved_run(lines, rater="eval-ai", kind="ai")
    for theme in ("light", "dark"):
        context = browser.new_context(viewport=LAPTOP, locale="ko-KR", color_scheme=theme)
        page = context.new_page()
        browser_log_in(page, live_server.url, "supervisor_a")
        page.goto(f"{live_server.url}/admin/agreement/annotationrun/{run.pk}/report/")
        safety = page.locator("section.safety")
        assert "2건 중 2건 찾음" in safety.inner_text() and "놓친 안전 상태가 없습니다." in safety.inner_text()
        border = safety.evaluate("(el) => getComputedStyle(el).borderLeftColor")
        assert border == "rgb(21, 128, 61)"  # green, not the alarm's red
        assert browser_contrast(safety.locator("h2")) >= 4.5
        assert browser_contrast(safety.locator("p")) >= 4.5
        context.close()


def test_a_wide_heat_map_keeps_its_size_on_a_phone_and_scrolls_in_its_box(
    browser, live_server, cast, golden, http_settings
):
    acts = ["affirm", "confirm", "deny", "negate", "correct", "request"]
    lines = [
        {"utterance_id": line["utterance_id"], "dialog_act": act}
        for line, act in zip(run_lines("AG01"), acts, strict=True)
    ]
    run = saved_run(lines, rater="eval-ai", kind="ai")
    context = browser.new_context(viewport=PHONE, locale="ko-KR")
    page = context.new_page()
    browser_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/agreement/annotationrun/{run.pk}/report/")
    # shrunk to the screen, the numbers and names of a many-class matrix were a few pixels tall
    assert drawn_scales(page)["cm-dialog_act"] == 1.0
    box = page.get_by_role("region", name="대화행위 혼동 행렬 (좁은 화면에서는 옆으로 밀어 봅니다)")
    assert box.evaluate("(el) => el.scrollWidth > el.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    # on a laptop too: beside the stage matrix it was squeezed to 0.66 (7 px text)
    page.set_viewport_size(LAPTOP)
    laptop = drawn_scales(page)
    assert laptop["cm-dialog_act"] == 1.0
    context.close()
