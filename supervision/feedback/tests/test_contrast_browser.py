"""Every piece of text on the trainee's pages reaches WCAG AA contrast (4.5:1) against what is behind it, in
the light theme and in the dark one (the pages follow the system's choice, as the admin does). In Chromium,
logged in as trainee_a; charts are left out (their SVG text draws on the chart's own white ground, which the
test checks too)."""

from __future__ import annotations

import datetime

import pytest

from supervision.feedback.tests.factories import make_session
from supervision.nightly import nightly_review
from supervision.safety.tests.factories import script
from supervision.testing import browser_log_in, browser_low_contrast, browser_marks

pytestmark = browser_marks()


@pytest.fixture
def pages(cast, http_settings):
    session = make_session("TDARK_0", 14, trainee="trainee_a", critique_every=2)
    make_session("TDARK_1", 14, trainee="trainee_a", critique_every=2)
    disclosure = script("TDARK_S", "C", "K:suicidal_ideation_admit", "C:empathy", "K", "C", held_on="2026-11-06")
    nightly_review(day=datetime.date(2026, 11, 7))
    return [
        "/feedback/",
        f"/feedback/sessions/{session.pk}/",
        f"/feedback/sessions/{disclosure.pk}/",
        "/feedback/tags/",
        "/accounts/password_change/",
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_trainee_text_reaches_aa_contrast(browser, live_server, pages, theme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR", color_scheme=theme)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    low = {"/accounts/login/": browser_low_contrast(page, "body *")}
    browser_log_in(page, live_server.url, "trainee_a")
    page.wait_for_url(f"{live_server.url}/feedback/")
    for url in pages:
        page.goto(live_server.url + url)
        low[url] = browser_low_contrast(page, "body *")[:5]
        grounds = page.eval_on_selector_all("svg.chart", "els => els.map(e => getComputedStyle(e).backgroundColor)")
        if theme == "dark":  # the charts' dark text keeps a white ground
            assert set(grounds) <= {"rgb(255, 255, 255)"}, url
    assert {url: found for url, found in low.items() if found} == {}
    if theme == "dark":
        body = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert body not in ("rgb(255, 255, 255)", "rgb(246, 247, 251)")  # the dark ground, not the light one
    context.close()
