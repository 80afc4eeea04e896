"""Staff import a roster in a real browser at laptop and phone width: a good cohort (preview, then confirm),
a file with several bad rows (every error as text, per row and column, no password anywhere), and a
look-alike of an existing account (refused). Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from supervision.testing import browser_admin_log_in, browser_marks

SHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
SECRET = "Browser-cohort-pass-2026"

pytestmark = browser_marks()


@pytest.fixture
def roster_page(browser, live_server, cast, http_settings, tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)

    def open_page(viewport):
        page = browser.new_context(viewport=viewport, locale="ko-KR").new_page()
        page.console_errors = []  # a blocked inline style or script is reported here (CSP)
        page.on("console", lambda message: message.type == "error" and page.console_errors.append(message.text))
        browser_admin_log_in(page, live_server.url, "staff")
        page.goto(f"{live_server.url}/admin/supervision/traineeassignment/import/")
        return page

    def upload(page, name: str, rows: list[str]):
        path = tmp_path / name
        path.write_text("\n".join(["username,role,supervisor,initial_password", *rows]) + "\n", encoding="utf-8")
        page.set_input_files("input[name=import_file]", str(path))
        page.locator("select[name=format]").select_option(label="csv")
        page.get_by_role("button", name="미리보기").click()
        page.wait_for_load_state()

    return open_page, upload


def fits(page, viewport) -> bool:
    return page.evaluate("document.documentElement.scrollWidth") <= viewport["width"] + 1


@pytest.mark.parametrize("name,viewport", [("laptop", LAPTOP), ("phone", PHONE)])
def test_staff_import_a_cohort_see_every_error_and_are_refused_a_look_alike(roster_page, name, viewport):
    open_page, upload = roster_page
    page = open_page(viewport)

    upload(
        page, "bad.csv", [f"bad_one,boss,nobody,{SECRET}", f"has space,trainee,,{SECRET}", f"ok_one,trainee,,{SECRET}"]
    )
    text = page.inner_text("#content")
    assert "가져올 수 없는 행이 있습니다" in text and SECRET not in page.content()
    rows = page.locator("table.table-import-errors tbody tr")
    assert rows.count() == 3  # row 2: role and supervisor; row 3: username
    assert page.get_by_role("button", name="가져오기 확정").count() == 0
    assert fits(page, viewport)
    page.screenshot(path=str(SHOTS / f"roster_import_errors_{name}.png"), full_page=True)

    upload(page, "lookalike.csv", [f'"staff ",supervisor,,{SECRET}'])
    assert "이미 있는 사용자 'staff'" in page.inner_text("#content")
    page.screenshot(path=str(SHOTS / f"roster_import_lookalike_{name}.png"), full_page=True)

    upload(page, "good.csv", [f"b_sup_{name},supervisor,,", f"b_tr_{name},trainee,b_sup_{name},{SECRET}"])
    assert "미리보기입니다" in page.inner_text("#content") and SECRET not in page.content()
    assert fits(page, viewport)
    # the library's diff colours new cells with style attributes, which the CSP blocks: classes instead
    assert page.locator("table.table-import-preview ins.diff-added").count() >= 4
    assert page.locator("#content [style]").count() == 0 and page.console_errors == []
    page.screenshot(path=str(SHOTS / f"roster_import_preview_{name}.png"), full_page=True)
    page.get_by_role("button", name="가져오기 확정").click()
    page.wait_for_load_state()
    assert "사용자 2명을 만들었습니다(슈퍼바이저 1명, 수련생 1명)" in page.inner_text("body")
    page.screenshot(path=str(SHOTS / f"roster_import_done_{name}.png"), full_page=True)
    made = get_user_model().objects.get(username=f"b_tr_{name}")
    assert made.assignment.supervisor.username == f"b_sup_{name}" and made.check_password(SECRET)
