"""A staff member imports a spreadsheet in the admin on a phone, in Chromium: a file with errors is shown
row by row and column by column, a good one is previewed and confirmed, and no page of the flow scrolls
sideways (the preview tables scroll in their own box). Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

from pathlib import Path

from supervision.importing.tests.sheets import KOREAN_HEADER, session_rows, write_xlsx
from supervision.models import Session
from supervision.testing import browser_admin_log_in, browser_marks

SHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
PHONE = {"width": 390, "height": 844}

pytestmark = browser_marks()


def upload(page, base: str, path: Path) -> None:
    page.goto(f"{base}/admin/supervision/session/import/")
    page.set_input_files("input[name=file]", str(path))
    page.fill("input[name=trainee]", "trainee_a")
    page.locator("#content form input[type=submit]").click()
    page.wait_for_load_state()


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def test_staff_imports_a_spreadsheet_on_a_phone(browser, live_server, cast, http_settings, tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    bad = write_xlsx(tmp_path / "errors.xlsx", KOREAN_HEADER, session_rows("WEBIMP1", 4, {3: {4: "마무리"}}))
    good = write_xlsx(tmp_path / "good.xlsx", KOREAN_HEADER, session_rows("WEBIMP2", 6))
    page = browser.new_context(viewport=PHONE, locale="ko-KR").new_page()
    browser_admin_log_in(page, live_server.url, "staff")

    upload(page, live_server.url, bad)
    errors = page.locator("#import-errors tbody tr")
    assert errors.count() == 1 and "마무리" in errors.first.inner_text()
    # the message, a long run of stage codes included, wraps inside the screen
    assert page_width(page) <= PHONE["width"]
    page.screenshot(path=str(SHOTS / "admin_import_errors_phone.png"), full_page=True)
    assert not Session.objects.filter(code="WEBIMP1").exists()

    upload(page, live_server.url, good)
    assert "WEBIMP2" in page.locator("#import-sessions").inner_text()
    assert page_width(page) <= PHONE["width"]  # the wide preview table scrolls in its box
    page.get_by_role("button", name="확인하고 가져오기").click()
    page.wait_for_load_state()
    page.get_by_text("가져오기를 마쳤습니다").wait_for()
    assert page_width(page) <= PHONE["width"]
    page.screenshot(path=str(SHOTS / "admin_import_done_phone.png"), full_page=True)
    assert Session.objects.get(code="WEBIMP2").turns.count() == 6
