"""Every piece of text on the supervisor's admin pages reaches WCAG AA contrast (4.5:1) against what is
behind it, in the admin's light theme and in its dark one (the admin follows the system's choice). In
Chromium, logged in as supervisor_a; charts are left out (SVG text draws with fill on the chart's own
white ground)."""

from __future__ import annotations

import datetime

import pytest

from supervision.agreement.tests.conftest import golden_lines, import_lines, run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.feedback.tests.factories import make_session
from supervision.models import Session
from supervision.nightly import nightly_review
from supervision.safety.tests.factories import script
from supervision.tags.models import TraineeTag
from supervision.testing import browser_admin_log_in, browser_low_contrast, browser_marks

pytestmark = browser_marks()


@pytest.fixture
def pages(cast, http_settings):
    for k in range(2):
        make_session(f"CONTRAST_{k}", 14, trainee="trainee_a", critique_every=2)
    script("CONTRAST_S", "C", "K:suicidal_ideation_admit", "C:risk_assessment", held_on="2026-11-06")
    nightly_review(day=datetime.date(2026, 11, 2))
    session = Session.objects.filter(code="CONTRAST_0").get()
    import_lines(golden_lines("AG01"), "trainee_a")
    run = saved_run(run_lines("AG01"), rater="eval-ai")  # misses a safety state: the alarm box
    found_all = [
        {**line, "client_states": ["affect_contact", "self_harm_disclosure"]}
        if line["utterance_id"].endswith("K-002")
        else line
        for line in run_lines("AG01")
    ]
    calm = saved_run(found_all, rater="eval-ai-2")  # misses nothing: the quiet box
    return [
        f"/admin/agreement/annotationrun/{run.pk}/report/",
        f"/admin/agreement/annotationrun/{calm.pk}/report/",
        f"/admin/agreement/annotationrun/{run.pk}/adjudicate/",
        "/admin/",
        f"/admin/supervision/session/{session.pk}/change/",
        f"/admin/supervision/turn/{session.turns.order_by('seq').first().pk}/change/",
        "/admin/supervision/supervisorcomment/",
        f"/admin/tags/traineetag/{TraineeTag.objects.filter(trainee=cast.trainee_a).first().pk}/change/",
        "/admin/gauge/gaugesnapshot/",
        "/admin/trajectory/trajectoryaudit/",
        "/admin/safety/safetyreview/?show=all",
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_admin_text_reaches_aa_contrast(browser, live_server, pages, theme):
    page = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR", color_scheme=theme).new_page()
    browser_admin_log_in(page, live_server.url, "supervisor_a")
    low = {}
    for url in pages:
        page.goto(live_server.url + url)
        # the page and its header (the site's name was #f5dd5d on #417690, 3.65:1)
        found = browser_low_contrast(page, "#content *, #header *")
        if found:
            low[url] = found[:5]
    assert low == {}
