"""The admin pages as staff and as a supervisor, with the permissions their roles really have."""

from __future__ import annotations

import re

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from supervision.models import Session, Turn
from supervision.testing import import_lines
from supervision.transitions import services
from supervision.transitions.models import PersonaRun
from supervision.transitions.tests.conftest import persona_lines, spec_lines
from supervision.transitions.tests.factories import saved_persona_run

TABLE = "/admin/transitions/personarun/table/"
UPLOAD = "/admin/transitions/personarun/upload/"


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def persona_upload(lines, name="persona.jsonl") -> SimpleUploadedFile:
    import json

    body = "\n".join(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in lines)
    return SimpleUploadedFile(name, body.encode(), content_type="application/octet-stream")


def rows_of(html: str) -> list[str]:
    return re.findall(r'<th scope="row" class="ctx"><span class="ko">([^<]+)</span>', html)


def test_staff_see_the_table_with_korean_names_and_faded_low_support(hand_made, cast):
    html = client_for(cast.staff).get(TABLE).content.decode()
    assert "상태 전이표" in html and "회기 2개 · 전이 6건" in html
    assert "방어 → 관계 형성" in html and "<code>defensive · RELATIONAL</code>" in html
    assert '<span class="ko">방어 완화</span><code>defense_<wbr>loosening</code>' in html  # wraps after _ only
    # Every context has support below the default 5: all four rows are faded and say so.
    assert html.count('<tr class="weak">') == 4 and "불확실" in html
    assert '<span class="ci">9–91</span>' in html  # the Wilson interval of 1 of 2 under its share, in percent too
    assert "<script" not in html.split('id="content"')[1]


def test_the_toggle_and_the_min_support_control_change_the_table(hand_made, cast):
    client = client_for(cast.staff)
    html = client.get(TABLE, {"by": "technique", "min_support": "1"}).content.decode()
    assert "방어 → 공감" in html and "방어 → 관계 형성" not in html
    assert '<tr class="weak">' not in html and 'aria-current="page">기법 (technique)' in html
    hidden = client.get(TABLE, {"by": "category", "min_support": "2", "hide_weak": "on"}).content.decode()
    assert rows_of(hidden) == ["방어 → 관계 형성", "방어 → 탐색"]  # support 2 each; the others (1) are hidden
    bad = client.get(TABLE, {"by": "stage", "min_support": "-3"})
    assert bad.status_code == 200 and "방어 → 관계 형성" in bad.content.decode()  # back to the defaults


def test_a_supervisor_sees_only_their_trainees_transitions(hand_made, cast):
    html = client_for(cast.supervisor_b).get(TABLE).content.decode()
    assert "회기 1개 · 전이 1건" in html and rows_of(html) == ["비자발적 태도 → 관계 형성"]
    assert "담당 수련생의 회기만으로" in html


def test_trainees_never_reach_the_pages(hand_made, cast):
    run = saved_persona_run(persona_lines("PT01", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"])]))
    client = client_for(cast.trainee_a)
    for url in (TABLE, UPLOAD, f"/admin/transitions/personarun/{run.pk}/report/", "/admin/transitions/personarun/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


def test_only_staff_upload_and_a_bad_file_lists_every_error_and_saves_nothing(hand_made, cast):
    lines = persona_lines("PU01", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defense_loosening"])])
    assert client_for(cast.supervisor_a).get(UPLOAD).status_code == 403
    assert (
        client_for(cast.supervisor_a)
        .post(UPLOAD, {"file": persona_upload(lines), "rater": "p", "by": "category", "min_support": 1})
        .status_code
        == 403
    )
    bad = [lines[0], {**lines[1], "techniques": ["없는기법"]}, {**lines[2], "seq": 5}]
    turns = Turn.objects.count()
    response = client_for(cast.staff).post(
        UPLOAD, {"file": persona_upload(bad), "rater": "persona-9", "by": "category", "min_support": 1}
    )
    html = response.content.decode()
    assert response.status_code == 400 and "오류 2건" in html
    assert "알 수 없는 라벨 &#x27;없는기법&#x27;" in html and "<code>seq</code>" in html
    assert PersonaRun.objects.count() == 0 and Turn.objects.count() == turns


def test_a_cut_off_line_is_the_whole_lines_error_and_says_it_was_not_closed(hand_made, cast):
    import json

    lines = persona_lines("PU05", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defense_loosening"])])
    cut = json.dumps(lines[1], ensure_ascii=False)[:-1]  # the closing brace lost, then the next line
    response = client_for(cast.staff).post(
        UPLOAD, {"file": persona_upload([lines[0], cut, lines[2]]), "rater": "p", "by": "category", "min_support": 1}
    )
    row = response.content.decode().split("<tr><td>2</td>", 1)[1].split("</tr>", 1)[0]
    assert "<td>줄 전체</td>" in row and "줄이 끝났는데 객체가 닫히지 않았습니다" in row
    assert "1번째 글자" not in row and "<code>" not in row
    assert PersonaRun.objects.count() == 0


def test_staff_upload_a_persona_file_and_land_on_its_page(hand_made, cast):
    lines = persona_lines("PU02", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defense_loosening"])])
    response = client_for(cast.staff).post(
        UPLOAD, {"file": persona_upload(lines), "rater": "persona-9", "by": "category", "min_support": 1}
    )
    run = PersonaRun.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/personarun/{run.pk}/report/")
    assert run.uploaded_by == cast.staff and run.file_name == "persona.jsonl" and run.turns == 3
    assert not Session.objects.filter(code="PU02").exists()


def test_the_run_page_shows_jsd_heatmaps_and_the_lists_in_plain_korean(hand_made, cast):
    # Golden (defensive, RELATIONAL): defense_loosening 1, affect_contact 1. The persona: defensive 2,
    # defense_loosening 1 — so defensive is unrealistic (67 %) and affect_contact missing (50 %, 1 건).
    spec = [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"]), ("C", ["reflection"]), ("K", ["defensive"])]
    spec += [("C", ["validation"]), ("K", ["defense_loosening"])]
    run = saved_persona_run(persona_lines("PR01", spec), rater="persona-r")
    for user in (cast.staff, cast.supervisor_a):
        html = client_for(user).get(f"/admin/transitions/personarun/{run.pk}/report/").content.decode()
        assert "비현실적 전이 (1)" in html and "누락된 전이 (1)" in html
        assert "방어 상태의 내담자가 관계 형성 기법 뒤에 곧바로 방어로 넘어감: 페르소나 67 %, 실제 0 건" in html
        assert (
            "방어 상태의 내담자가 관계 형성 기법 뒤에 정서 접촉/표현으로 넘어가는 일이 페르소나에는 없음: "
            "실제 50 % (1 건), 페르소나 0 건"
        ) in html
        assert html.count('class="transition-heatmap side-by-side"') == 1
        assert [g in html for g in ("실제(골든)</th>", "페르소나</th>", "차이(페르소나 − 실제)</th>")] == [True] * 3
        # The defensive → RELATIONAL row: golden 50 / 50, persona 67 / 33, difference +67 (defensive) and −50.
        assert ">+67<" in html and ">-50<" in html
        assert f">{run.figures['jsd']}<" in html


def test_the_run_list_links_the_table_and_offers_upload_to_staff_only(hand_made, cast):
    saved_persona_run(persona_lines("PL01", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"])]))
    staff = client_for(cast.staff).get("/admin/transitions/personarun/").content.decode()
    supervisor = client_for(cast.supervisor_a).get("/admin/transitions/personarun/").content.decode()
    assert "persona-7" in staff and "persona-7" in supervisor
    assert TABLE in staff and TABLE in supervisor
    assert UPLOAD in staff and UPLOAD not in supervisor


def test_the_table_page_reads_in_constant_queries(cast):
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(cast.supervisor_a)
    client.get(TABLE)  # the first request warms the session and content types
    counted = []
    for first, last in ((0, 1), (1, 4)):
        for i in range(first, last):
            lines = spec_lines(f"QC{i:02d}", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"])])
            import_lines(lines, trainee="trainee_a")
        cache.clear()
        for _ in ("counted", "kept"):
            with CaptureQueriesContext(connection) as queries:
                response = client.get(TABLE)
            assert f"회기 {last}개 · 전이 {last}건" in response.content.decode()
            counted.append(len(queries))
    cold, warm = counted[0], counted[1]
    assert counted == [cold, warm, cold, warm] and warm < cold


def test_a_label_edit_shows_in_the_table_at_once(hand_made, cast):
    from supervision.labelling import turn_labels_update

    assert services.transition_table()["transitions"] == 6  # counted, and kept
    turn = Turn.objects.get(utterance_id="TB01-K-003")
    turn_labels_update(
        turn=turn, changed_by=cast.supervisor_b, via="admin", client_states=["defense_loosening", "affect_contact"]
    )
    table = services.transition_table()
    assert table["transitions"] == 7
    context = next(c for c in table["contexts"] if (c["state"], c["move"]) == ("involuntary", "RELATIONAL"))
    assert context["next"] == {"affect_contact": 1, "defense_loosening": 1}
