"""A supervisor exports their critiques from the admin in a real browser, at laptop and phone width: the
export screen names every column in Korean with the file's header beside it, and the file carries the
headers; the change list's filter headings and selection count read in Korean. Screenshots go to
test-artifacts/screenshots/."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.utils import timezone

from supervision.feedback.tests.factories import make_session
from supervision.testing import browser_admin_log_in, browser_marks

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

pytestmark = browser_marks()


@pytest.fixture
def admin_page(browser, live_server, cast, http_settings):
    SHOTS.mkdir(parents=True, exist_ok=True)
    make_session("EXP_A1", 8, trainee="trainee_a", critique_every=2)
    make_session("EXP_B1", 8, trainee="trainee_b", critique_every=2)

    def open_page(viewport):
        context = browser.new_context(viewport=viewport, locale="ko-KR", accept_downloads=True)
        page = context.new_page()
        page.console_errors = []  # a blocked inline handler or style is reported here (CSP)
        page.on("console", lambda message: message.type == "error" and page.console_errors.append(message.text))
        browser_admin_log_in(page, live_server.url, "supervisor_a")
        return page

    return open_page, live_server.url


@pytest.mark.parametrize("name,viewport", [("laptop", LAPTOP), ("phone", PHONE)])
def test_a_supervisor_exports_their_critiques_with_korean_column_names(admin_page, name, viewport):
    open_page, base = admin_page
    page = open_page(viewport)
    page.goto(f"{base}/admin/supervision/supervisorcomment/")
    page.get_by_role("link", name="내보내기").click()
    page.wait_for_load_state()
    form = page.locator("form").filter(has_text="내보낼 항목")
    text = form.inner_text()
    assert "발화 ID (utterance_id)" in text and "수련생 (trainee)" in text and "Utterance Id" not in text
    page.screenshot(path=str(SHOTS / f"admin_comment_export_{name}.png"), full_page=True)
    # nothing overflows the phone's width
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"] + 1
    # 「모두 선택」 unticks and ticks every column (wired by a script file: the CSP blocks inline handlers)
    columns = form.locator(".selectable-field-export-row input[type=checkbox]")
    ticked = f"{columns.count()}"
    form.get_by_label("모두 선택").uncheck()
    assert form.locator(".selectable-field-export-row input[type=checkbox]:checked").count() == 0
    form.get_by_label("모두 선택").check()
    assert f"{form.locator('.selectable-field-export-row input[type=checkbox]:checked').count()}" == ticked
    columns.first.uncheck()
    assert not form.get_by_label("모두 선택").is_checked()  # no longer all of them
    columns.first.check()
    assert page.console_errors == []
    page.locator("select[name=format]").select_option(label="csv")
    with page.expect_download() as download:
        form.get_by_role("button", name="제출").click()
    # named for the day in Seoul, as the session export is
    assert download.value.suggested_filename == f"supervisorcomment_{timezone.localdate():%Y%m%d}.csv"
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8-sig"))))
    header = rows[0]
    assert {"trainee", "session", "utterance_id"} <= set(header)
    trainees = {row[header.index("trainee")] for row in rows[1:]}
    assert trainees == {"trainee_a"}  # only their own trainee's critiques


def test_filter_headings_and_the_selection_count_read_in_korean_on_a_phone(admin_page):
    open_page, base = admin_page
    page = open_page(PHONE)
    page.goto(f"{base}/admin/supervision/session/")
    body = page.locator("body").inner_text()
    assert "수련생 기준" in body and "(으)로" not in body
    assert page.locator(".action-counter").inner_text() == "1개 중 0개 선택됨"  # not Django's "0가 1개 중에"
    page.screenshot(path=str(SHOTS / "admin_session_list_phone.png"), full_page=True)
