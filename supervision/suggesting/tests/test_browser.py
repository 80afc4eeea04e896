"""Click-through in Chromium at 1366 and 390 px: staff import an unlabelled file; the supervisor finds the
session under 「라벨 없음 — AI 추정만」, sees its trajectory audit marked 「AI 추정 라벨 기준」 and its suggested
safety event in the 안전 검토 queue with the badge 「AI 추정」, accepts three suggestions and dismisses one on
counselor turns (the speaker filter kept across each decision), and sees the suggested safety event of the
untouched client turn in the API. No page scrolls sideways. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from supervision.importing.tests.sheets import KOREAN_HEADER, write_xlsx
from supervision.models import LabelChange, Session
from supervision.suggesting.models import SuggestionDismissal
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows
from supervision.testing import browser_admin_log_in, browser_marks
from supervision.trajectory.models import AuditedRevision
from supervision.trajectory.services import trajectory_audit_sessions

SHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
pytestmark = browser_marks()
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def _import(browser, base: str, path: Path) -> None:
    page = browser.new_context(viewport={"width": 1366, "height": 900}, locale="ko-KR").new_page()
    browser_admin_log_in(page, base, "staff")
    page.goto(f"{base}/admin/supervision/session/import/")
    page.set_input_files("input[name=file]", str(path))
    page.fill("input[name=trainee]", "trainee_a")
    page.locator("#content form input[type=submit]").click()
    page.wait_for_load_state()
    page.get_by_role("button", name="확인하고 가져오기").click()
    page.get_by_text("가져오기를 마쳤습니다").wait_for()
    page.context.close()


@pytest.mark.parametrize(("width", "height", "code"), [(1366, 900, "BRW1"), (390, 844, "BRW2")])
def test_a_supervisor_accepts_three_and_dismisses_one(
    browser, live_server, cast, http_settings, tmp_path, width, height, code
):
    SHOTS.mkdir(parents=True, exist_ok=True)
    _import(browser, live_server.url, write_xlsx(tmp_path / f"{code}.xlsx", KOREAN_HEADER, unlabelled_rows(code)))
    session = Session.objects.get(code=code)
    trajectory_audit_sessions(session_ids=[session.pk])  # what the import's queued job does
    assert AuditedRevision.objects.get(session=session).labels == "suggested"

    page = browser.new_context(viewport={"width": width, "height": height}, locale="ko-KR").new_page()
    browser_admin_log_in(page, live_server.url, "supervisor_a")
    page.goto(f"{live_server.url}/admin/supervision/session/?suggested_only=1")
    assert code in page.locator("#result_list").inner_text()
    page.screenshot(path=str(SHOTS / f"suggester_list_{width}.png"), full_page=True)
    page.locator("#result_list a", has_text=code).first.click()
    page.wait_for_load_state()
    session_url = page.url.split("?")[0].split("#")[0]
    basis = page.locator("#audit-basis")
    basis.scroll_into_view_if_needed()
    assert basis.is_visible() and "AI 추정 라벨 기준" in basis.inner_text()
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    page.locator(".trajectory-admin").screenshot(path=str(SHOTS / f"suggester_audit_{width}.png"))

    page.goto(f"{live_server.url}/admin/")
    entry = page.locator("#safety-review-entry").inner_text()
    page.screenshot(path=str(SHOTS / f"suggester_admin_index_{width}.png"), full_page=True)
    waiting = re.search(r"보고 (\d+)건", entry)
    page.goto(f"{live_server.url}/admin/safety/safetyreview/")  # the default view: what waits
    assert page.locator("li.safety-event").count() == (int(waiting.group(1)) if waiting else 0), entry
    page.goto(f"{live_server.url}/admin/safety/safetyreview/?show=all")
    mine = page.locator("li.safety-event.suggested", has_text=code)
    assert mine.count() >= 1
    badge = mine.first.locator(".ai-estimate")
    assert badge.is_visible() and badge.inner_text() == "AI 추정"
    assert mine.first.locator("form.review-form").count() == 0
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    page.screenshot(path=str(SHOTS / f"suggester_safety_queue_{width}.png"), full_page=True)
    page.goto(session_url + "?speaker=counselor")
    assert page.locator(".label-suggestions").count() >= 2
    # Each chip's 수락 and 기각 stay side by side, at a phone's width too (a 기각 wrapped alone onto the next
    # line was easy to miss).
    split = page.evaluate(
        """() => [...document.querySelectorAll('.chip.suggested')].filter((chip) => {
             const [accept, dismiss] = [chip.querySelector('button.accept'), chip.querySelector('button.dismiss')];
             return Math.abs(accept.getBoundingClientRect().top - dismiss.getBoundingClientRect().top) > 2;
           }).map((chip) => chip.textContent.trim().slice(0, 40))"""
    )
    assert split == []
    page.screenshot(path=str(SHOTS / f"suggester_transcript_{width}.png"), full_page=True)

    for _ in range(3):
        page.locator("button.accept").first.click()
        page.wait_for_load_state()
        assert "speaker=counselor" in page.url and "#turn-" in page.url  # same place, same filter
    page.locator("button.dismiss").first.click()
    page.wait_for_load_state()
    assert "speaker=counselor" in page.url
    page.screenshot(path=str(SHOTS / f"suggester_decided_{width}.png"), full_page=True)

    assert LabelChange.objects.filter(turn__session=session, via="suggestion").count() == 3
    assert SuggestionDismissal.objects.filter(turn__session=session).count() == 1
    assert "기각함" in page.content()

    page.goto(f"{live_server.url}/api/v1/safety-events/?format=json")
    events = [e for e in json.loads(page.locator("body").inner_text())["results"] if e["session_code"] == code]
    assert events and all(e["source"] == "suggested" for e in events)
    page.goto(f"{live_server.url}/api/v1/safety-events/")
    page.screenshot(path=str(SHOTS / f"suggester_safety_api_{width}.png"), full_page=True)
    page.context.close()


@pytest.mark.parametrize(("width", "height"), [(1366, 900), (390, 844)])
def test_the_trainee_sees_the_audit_basis_and_no_suggestion(
    browser, live_server, cast, http_settings, tmp_path, width, height
):
    """The trainee's session page says 「AI 추정 라벨 기준」 beside the trajectory, legibly, and shows none of
    the suggested labels themselves."""
    import io

    from django.core.management import call_command

    from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
    from supervision.testing import browser_contrast, browser_log_in

    SHOTS.mkdir(parents=True, exist_ok=True)
    code = f"BRT{width}"
    path = write_csv(tmp_path / f"{code}.csv", ENGLISH_HEADER, unlabelled_rows(code))
    call_command("import_transcripts", str(path), "--trainee", "trainee_a", stdout=io.StringIO())
    session = Session.objects.get(code=code)
    trajectory_audit_sessions(session_ids=[session.pk])

    page = browser.new_context(viewport={"width": width, "height": height}, locale="ko-KR").new_page()
    browser_log_in(page, live_server.url, "trainee_a")
    page.goto(f"{live_server.url}/feedback/sessions/{session.pk}/")
    basis = page.locator("#audit-basis")
    basis.scroll_into_view_if_needed()
    assert basis.is_visible() and "AI 추정 라벨 기준" in basis.inner_text()
    assert browser_contrast(basis.locator(".badge")) >= 4.5
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    content = page.content()
    assert page.locator(".label-suggestions").count() == 0 and "portal-suggester" not in content
    assert "self_harm_disclosure" not in content and "suicidal_ideation_admit" not in content
    page.locator("section[aria-labelledby=trajectory-title]").screenshot(
        path=str(SHOTS / f"suggester_trainee_audit_{width}.png")
    )
    page.context.close()
