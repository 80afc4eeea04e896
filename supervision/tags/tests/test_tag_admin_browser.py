"""A supervisor reads a tag with its nightly history in the admin, in a real browser: the page fits a laptop
(the evidence table wraps instead of widening the page) and on a phone each row of the inlines is a card,
each value under its column's name, wide enough to read. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from supervision.feedback.tests.factories import make_session
from supervision.nightly import nightly_review
from supervision.tags.models import TagTransition, TraineeTag
from supervision.testing import browser_admin_log_in, browser_marks

SHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"

pytestmark = browser_marks()


@pytest.fixture
def tag(cast, http_settings):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for k in range(3):
        make_session(f"TAGWEB_{k}", 12, trainee="trainee_a", critique_every=2)
    nightly_review(day=datetime.date(2026, 11, 2))
    # the tag with the longest history: evidence from critiques, contradictions from the gauge
    return max(TraineeTag.objects.filter(trainee=cast.trainee_a), key=lambda t: t.transitions.count())


@pytest.mark.parametrize("name,width", [("laptop", 1280), ("phone", 390)])
def test_a_tag_page_fits_the_screen(browser, live_server, tag, name, width):
    page = browser.new_context(viewport={"width": width, "height": 900}, locale="ko-KR").new_page()
    browser_admin_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/tags/traineetag/{tag.pk}/change/")
    assert tag.tag in page.locator("#content").inner_text()
    history = page.locator(".inline-group").last.inner_text()
    assert TagTransition.objects.filter(trainee_tag=tag).count() >= 2 and "첫 근거 기록" in history
    page.screenshot(path=str(SHOTS / f"admin_tag_{name}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    evidence = page.locator("#evidence-group tbody tr.has_original").first
    text_cell = evidence.locator("td.field-event")
    if name == "phone":
        # Cards: no header row; the column's name is shown with the value, which gets most of the width
        # (as a table column it was squeezed to a few characters a line).
        assert not page.locator("#evidence-group thead").is_visible()
        assert text_cell.get_attribute("data-label") == "근거"
        assert text_cell.bounding_box()["width"] > width * 0.8
        history = page.locator("#transitions-group tbody tr.has_original").first
        assert history.locator("td.field-reason").get_attribute("data-label") == "사유"
    else:
        assert page.locator("#evidence-group thead").is_visible()
    # each row says its text once, in its cell (Django also put it above the row, cut mid-word)
    assert not evidence.locator("td.original p").is_visible()


def test_a_row_added_on_a_phone_is_a_card_too(browser, live_server, tag):
    page = browser.new_context(viewport={"width": 390, "height": 900}, locale="ko-KR").new_page()
    browser_admin_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/tags/traineetag/{tag.pk}/change/")
    blank_rows = page.locator("#evidence-group tbody tr.form-row:not(.has_original):not(.empty-form)")
    before = blank_rows.count()
    page.locator("#evidence-group .add-row a").click()
    assert blank_rows.count() == before + 1
    added = blank_rows.last
    event = added.locator("td.field-event")
    assert event.get_attribute("data-label") == "근거" and event.bounding_box()["width"] > 300
    # what is only filled in on saving (when, by whom) is not shown as a dash on a new card
    assert not added.locator("td.field-at").is_visible()
