"""The persona answer key in Chromium, as staff and as a supervisor use it, at laptop (1366) and phone (390)
width: the table and its toggle, a persona upload, the run page with its lists. No CSP violation anywhere.

Screenshots go to test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

import random

from supervision.feedback.tests.test_browser import SHOTS
from supervision.testing import browser_log_in, browser_marks, write_jsonl
from supervision.transitions.models import PersonaRun
from supervision.transitions.tests.conftest import import_spec, persona_lines
from supervision.transitions.tests.test_counting_sql import random_spec

pytestmark = browser_marks()

LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
STATES = ["defensive", "involuntary", "defense_loosening", "affect_contact", "thought_organizing"]
TECHNIQUES = ["empathy", "reflection", "exploration", "confrontation", "psychoeducation", "stabilization"]


def realistic_spec(rng: random.Random, turns: int, *, persona: bool = False) -> list[tuple[str, list[str]]]:
    """A client who mostly stays, loosens after relational moves; a persona that loosens far too fast."""
    spec, state = [], rng.choice(STATES[:2])
    for seq in range(turns):
        if seq % 2 == 0:
            spec.append(("C", rng.sample(TECHNIQUES, rng.choice((1, 1, 2)))))
            continue
        last = spec[-1][1]
        relational = any(t in ("empathy", "reflection") for t in last)
        if persona and relational:
            state = "defense_loosening"
        elif relational and rng.random() < 0.4:
            state = rng.choice(STATES[2:])
        elif rng.random() < 0.2:
            state = rng.choice(STATES)
        spec.append(("K", [state] if rng.random() > 0.1 else []))
    return spec


def world(cast, tmp_path):
    rng = random.Random(34)
    for i in range(12):
        import_spec(f"BR{i:02d}", realistic_spec(rng, 40), "trainee_a" if i % 3 else "trainee_b")
    import_spec("BRX", random_spec(rng, 30), "trainee_b")
    lines = []
    for i in range(6):
        lines += persona_lines(f"PS{i:02d}", realistic_spec(rng, 40, persona=True))
    return write_jsonl(tmp_path / "persona-7.jsonl", lines)


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"] + 1


def test_staff_read_the_table_toggle_it_upload_a_persona_and_read_its_page(
    browser, live_server, cast, http_settings, csp_violations, tmp_path
):
    persona = world(cast, tmp_path)
    context = csp_violations(browser.new_context(viewport=LAPTOP, locale="ko-KR"))
    page = context.new_page()
    browser_log_in(page, live_server.url, "staff")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.goto(f"{live_server.url}/admin/transitions/personarun/")
    page.get_by_role("link", name="상태 전이표").click()
    page.wait_for_url("**/table/")
    heat = page.locator("table.transition-heatmap")
    assert heat.is_visible() and "방어 → 관계 형성" in heat.inner_text()
    assert page.locator("tr.weak").count() > 0  # some contexts have little support and are faded
    page.screenshot(path=SHOTS / "transitions-table-staff-laptop.png", full_page=True)
    page.get_by_role("link", name="기법 (technique)").click()
    page.wait_for_url("**by=technique**")
    assert "방어 → 공감" in page.locator("table.transition-heatmap").inner_text()
    page.get_by_label("최소 지지도").fill("3")
    page.get_by_label("지지도가 낮은 맥락 숨기기").check()
    page.get_by_role("button", name="적용").click()
    page.wait_for_url("**hide_weak=on**")
    assert page.locator("tr.weak").count() == 0
    page.screenshot(path=SHOTS / "transitions-table-technique-laptop.png", full_page=True)

    page.goto(f"{live_server.url}/admin/transitions/personarun/")
    page.get_by_role("link", name="페르소나 파일 올리기").click()
    page.set_input_files("input[type=file]", str(persona))
    page.get_by_label("페르소나 엔진 이름").fill("persona-7")
    page.get_by_role("button", name="올리고 채점하기").click()
    page.wait_for_url("**/report/")
    run = PersonaRun.objects.get()
    assert page.get_by_text("페르소나 실행 persona-7을(를) 채점해 저장했습니다.").is_visible()
    unrealistic = page.locator("section.unrealistic")
    assert "곧바로 방어 완화로 넘어감" in unrealistic.inner_text() or run.figures["unrealistic"] == []
    assert page.locator("table.side-by-side th.group").count() == 3  # golden | persona | difference
    page.screenshot(path=SHOTS / "transitions-run-staff-laptop.png", full_page=True)

    page.set_viewport_size(PHONE)
    assert no_sideways_scroll(page)
    page.screenshot(path=SHOTS / "transitions-run-staff-phone.png", full_page=True)
    page.goto(f"{live_server.url}/admin/transitions/personarun/table/")
    assert no_sideways_scroll(page)
    box = page.get_by_role("region", name="상태 전이표 (기법 범주 (category)) (좁은 화면에서는 옆으로 밀어 봅니다)")
    assert box.evaluate("(el) => el.scrollWidth > el.clientWidth")  # the table scrolls in its box
    page.screenshot(path=SHOTS / "transitions-table-staff-phone.png", full_page=True)
    page.goto(f"{live_server.url}/admin/transitions/personarun/upload/")
    assert no_sideways_scroll(page)
    page.screenshot(path=SHOTS / "transitions-upload-staff-phone.png", full_page=True)
    context.close()


def test_a_supervisor_reads_their_trainees_table_and_a_run_page(
    browser, live_server, cast, http_settings, csp_violations, tmp_path
):
    from supervision.transitions.reading import read_persona
    from supervision.transitions.services import persona_run_create

    persona = world(cast, tmp_path)
    run = persona_run_create(persona=read_persona(persona), rater="persona-7", file_name=persona.name, min_support=3)
    for viewport, name in ((LAPTOP, "laptop"), (PHONE, "phone")):
        context = csp_violations(browser.new_context(viewport=viewport, locale="ko-KR"))
        page = context.new_page()
        browser_log_in(page, live_server.url, "supervisor_b")
        page.wait_for_url(f"{live_server.url}/admin/")
        page.goto(f"{live_server.url}/admin/transitions/personarun/table/")
        assert page.get_by_text("담당 수련생의 회기만으로 센 값입니다.").is_visible()
        assert "회기 5개" in page.locator("p.summary").inner_text()  # BR00, BR03, BR06, BR09 and BRX
        assert no_sideways_scroll(page)
        page.screenshot(path=SHOTS / f"transitions-table-supervisor-{name}.png", full_page=True)
        page.goto(f"{live_server.url}/admin/transitions/personarun/")
        assert page.get_by_role("link", name="페르소나 파일 올리기").count() == 0
        page.get_by_role("link", name="결과 보기").click()
        page.wait_for_url(f"**/{run.pk}/report/")
        assert page.locator("section.missing h2").is_visible()
        assert no_sideways_scroll(page)
        page.screenshot(path=SHOTS / f"transitions-run-supervisor-{name}.png", full_page=True)
        context.close()
