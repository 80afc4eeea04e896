"""The agreement screens as staff, supervisors and trainees use them (never only as a superuser)."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from supervision.agreement.admin import AnnotationRunAdmin
from supervision.agreement.models import AdjudicationDecision, AnnotationRun, RunUpload
from supervision.agreement.tests.conftest import run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.labelling import turn_label_codes, turn_labels_update
from supervision.models import LabelChange, Turn


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def jsonl(lines) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()


@pytest.fixture
def run(golden):
    return saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")


def upload(client, content: bytes, name="run.jsonl"):
    return client.post(
        "/admin/agreement/annotationrun/upload/",
        {"file": SimpleUploadedFile(name, content), "rater": "eval-ai", "kind": "ai", "note": "v4"},
    )


def test_it_previews_every_error_of_a_bad_file_and_saves_nothing(cast, golden):
    bad = jsonl(
        [{"utterance_id": "AG01-C-001", "techniques": ["반엉"]}, {"utterance_id": "AG01-C-999", "stage": "탐색"}]
    )
    page = upload(client_for(cast.staff), bad).content.decode()
    assert "오류 2건" in page
    assert "<td>1</td><td><code>techniques</code></td>" in page and "reflection" in page
    assert "<td>2</td><td><code>utterance_id</code></td>" in page
    assert "확인하고 저장" not in page
    assert not AnnotationRun.objects.exists()


def test_it_previews_the_coverage_then_saves_the_run(cast, golden):
    client = client_for(cast.staff)
    page = upload(client, jsonl(run_lines("AG01"))).content.decode()
    assert "발화 6개 · 회기 1개" in page and "확인하고 저장" in page
    assert "<td>기법 <code>techniques</code></td>" in page and "<td>대화행위 <code>dialog_act</code></td>" in page
    assert not AnnotationRun.objects.exists()
    pending = RunUpload.objects.get()
    response = client.post(f"/admin/agreement/annotationrun/upload/{pending.pk}/")
    run = AnnotationRun.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/{run.pk}/report/")
    assert (run.rater, run.note, run.uploaded_by, run.file_name) == ("eval-ai", "v4", cast.staff, "run.jsonl")
    assert not RunUpload.objects.exists()


def test_it_lets_only_staff_upload(cast, golden):
    assert upload(client_for(cast.supervisor_a), jsonl(run_lines("AG01"))).status_code == 403
    response = upload(client_for(cast.trainee_a), jsonl(run_lines("AG01")))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert not RunUpload.objects.exists()


def test_it_reports_a_supervisor_over_their_own_trainees_turns(cast, run):
    page = client_for(cast.supervisor_a).get(f"/admin/agreement/annotationrun/{run.pk}/report/").content.decode()
    assert "담당 수련생의 발화만으로 계산한 값입니다." in page
    assert "AG01-K-002" in page and "AG02-K-002" not in page
    # Missed safety states come first, each linking to its turn on the transcript page.
    k002 = Turn.objects.get(utterance_id="AG01-K-002")
    assert page.index("놓친 안전 상태") < page.index("축별 일치도")
    assert f'href="/admin/supervision/session/{k002.session_id}/change/#turn-5"' in page
    # two F1 bar charts (each drawn wide, and compact for phones), two heat maps
    assert page.count('class="chart"') == 6
    assert "정의 안 됨" in page  # affect_contact's κ


def test_it_hides_a_run_with_none_of_a_supervisors_turns(cast, golden):
    only_a = saved_run(run_lines("AG01"), rater="only-a")
    client = client_for(cast.supervisor_b)
    assert client.get(f"/admin/agreement/annotationrun/{only_a.pk}/report/").status_code == 404
    assert client.get(f"/admin/agreement/annotationrun/{only_a.pk}/adjudicate/").status_code == 404
    assert "only-a" not in client.get("/admin/agreement/annotationrun/").content.decode()


def test_it_shows_the_trend_of_a_raters_versions(cast, golden):
    saved_run(run_lines("AG01"), rater="eval-ai")
    later = saved_run([{"utterance_id": "AG01-C-001", "techniques": ["empathy", "reflection"]}], rater="eval-ai")
    page = client_for(cast.staff).get(f"/admin/agreement/annotationrun/{later.pk}/report/").content.decode()
    assert "버전별 추이" in page and page.count('class="current"') == 1
    assert "<polyline" in page


def test_a_supervisor_adjudicates_from_the_queue(cast, run):
    client = client_for(cast.supervisor_a)
    url = f"/admin/agreement/annotationrun/{run.pk}/adjudicate/"
    page = client.get(url).content.decode()
    assert "8건" in page and "AG02-" not in page
    # every group is a jump link at the top, and a decision brings the page back to its group
    assert '<section class="queue-group" id="q-techniques-exploration">' in page
    assert (
        '<a href="#q-techniques-exploration" title="탐색 (exploration)">탐색 <span class="count">1</span></a>' in page
    )
    # the missed self-harm disclosure leads the queue and the index, marked
    assert '<p><strong>자살·자해</strong> <a href="#q-client_states-self_harm_disclosure"' in page
    first = page.index('<section class="queue-group')
    assert page.startswith(
        '<section class="queue-group safety-group" id="q-client_states-self_harm_disclosure">', first
    )
    turn = Turn.objects.get(utterance_id="AG01-C-002")
    decision = {"turn": turn.pk, "axis": "techniques", "label": "exploration", "note": "맞는 라벨"}
    response = client.post(url, {**decision, "outcome": "accepted"})
    assert response.status_code == 302 and response["Location"] == f"{url}#q-techniques-exploration"
    assert "exploration" in turn_label_codes(turn)["techniques"]
    assert LabelChange.objects.get(turn=turn).changed_by == cast.supervisor_a
    assert "7건" in client.get(url).content.decode()
    client.post(url, {**decision, "outcome": "kept"})  # a second decision on the same difference
    assert AdjudicationDecision.objects.count() == 1
    # the decision list says it in Korean: the turn by its id, the label by its name, each side 있음/없음
    listed = client.get("/admin/agreement/adjudicationdecision/").content.decode()
    row = listed.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    assert "AG01-C-002" in row and "탐색 (exploration)" in row and "없음" in row and "있음" in row
    assert "present" not in row and "absent" not in row and ">Run<" not in listed and ">Turn<" not in listed


def test_a_long_queue_comes_in_pages_and_a_decision_keeps_its_page(cast, run, monkeypatch):
    # Eight differences (test_adjudication counts them) in pages of three.
    monkeypatch.setattr(AnnotationRunAdmin, "queue_page_size", 3)
    client = client_for(cast.supervisor_a)
    url = f"/admin/agreement/annotationrun/{run.pk}/adjudicate/"
    client.get(url)  # the first view works the differences out and keeps them; the pages after it read them
    with CaptureQueriesContext(connection) as first_page:
        page = client.get(url).content.decode()
    assert page.count('<form method="post" class="decide">') == 3
    assert "1 / 3쪽 · 1–3번째" in page and 'href="?page=2">다음 3건 →' in page
    # the index names every group of the whole queue; one on a later page links to that page
    assert '<a href="#q-techniques-reflection" title="반영 (reflection)">반영 <span class="count">2</span></a>' in page
    assert '<a href="?page=2#q-techniques-exploration"' in page and '<a href="?page=3#q-dialog_act-question"' in page
    # a group cut by the page break says which of its differences this page holds
    assert "(2건 중 1–1번째)" in page
    with CaptureQueriesContext(connection) as last_page:
        page = client.get(f"{url}?page=3").content.decode()
    assert page.count('<form method="post" class="decide">') == 2 and "AG01-K-002" in page
    assert len(last_page) == len(first_page)
    assert "(2건 중 2–2번째)" in client.get(f"{url}?page=2").content.decode()

    turn = Turn.objects.get(utterance_id="AG01-C-002")
    response = client.post(
        f"{url}?page=2", {"turn": turn.pk, "axis": "techniques", "label": "exploration", "outcome": "kept"}
    )
    assert response["Location"] == f"{url}?page=2#q-techniques-exploration"
    page = client.get(f"{url}?page=2").content.decode()
    assert 'id="q-stage-정리"' in page and 'id="q-techniques-exploration"' not in page  # the rest moved up
    # a page past the end shows the last one; a page that is not a number, the first
    assert "3 / 3쪽" in client.get(f"{url}?page=99").content.decode()
    assert "1 / 3쪽" in client.get(f"{url}?page=다음").content.decode()


def test_the_queue_reads_again_only_the_sessions_written_since_it_was_kept(cast, run):
    """The differences are kept per session with the session's revision mark: a second view reads no golden
    label, and a golden label written since (from the transcript, not the queue) is in the next view, which
    reads again that session only."""
    client = client_for(cast.supervisor_a)
    url = f"/admin/agreement/annotationrun/{run.pk}/adjudicate/"
    assert "8건" in client.get(url).content.decode()

    def golden_reads(queries) -> list[str]:
        return [q["sql"] for q in queries.captured_queries if '"turn_technique"' in q["sql"]]

    with CaptureQueriesContext(connection) as warm:
        assert "8건" in client.get(url).content.decode()
    assert golden_reads(warm) == []
    assert "8건" in client_for(cast.supervisor_b).get(url).content.decode()  # AG02: worked out for its viewer

    written = Turn.objects.get(utterance_id="AG01-C-003")
    turn_labels_update(turn=written, changed_by=cast.supervisor_a, via="admin", techniques=["empathy"])
    with CaptureQueriesContext(connection) as after:
        page = client.get(url).content.decode()
    assert "9건" in page and "AG01-C-003" in page
    [read] = golden_reads(after)
    assert f"ANY('{{{written.session_id}}}'" in read  # the array of the sessions read holds that one only
    assert "8건" in client_for(cast.supervisor_b).get(url).content.decode()


def test_the_report_reads_the_golden_labels_again_only_after_a_write(cast, run):
    """The run's figures, its rater's versions and α are kept under the state of the sessions they cover."""
    saved_run(run_lines("AG01"), rater="eval-ai-3")  # a second version of the rater: its figures are on the page
    client = client_for(cast.supervisor_a)
    url = f"/admin/agreement/annotationrun/{run.pk}/report/"

    def report() -> str:  # without the per-response CSRF token
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", client.get(url).content.decode())

    first = report()
    with CaptureQueriesContext(connection) as warm:
        assert report() == first
    assert not [q for q in warm.captured_queries if '"turn_technique"' in q["sql"]]
    assert not [q for q in warm.captured_queries if q["sql"].startswith("SELECT DISTINCT")]  # the run's sessions
    written = Turn.objects.get(utterance_id="AG01-C-003")
    turn_labels_update(turn=written, changed_by=cast.supervisor_a, via="admin", techniques=["empathy"])
    with CaptureQueriesContext(connection) as after:
        assert report() != first
    assert [q for q in after.captured_queries if '"turn_technique"' in q["sql"]]


def test_the_reports_first_view_reads_the_golden_labels_and_each_runs_answers_once(cast, run):
    """The run, its rater's other version and α share one read of the golden labels (they read them three
    times: 3-5 s first view at 100,000 turns) and one read of each run's answers; the figures are those of
    the separate computations (the API's, which scores the run alone)."""
    other = saved_run(run_lines("AG01"), rater="eval-ai-3")
    client = client_for(cast.supervisor_a)
    with CaptureQueriesContext(connection) as first:
        page = client.get(f"/admin/agreement/annotationrun/{run.pk}/report/")
    assert page.status_code == 200
    golden_reads = [q for q in first.captured_queries if '"turn_technique"' in q["sql"]]
    assert len(golden_reads) == 1, [q["sql"][:200] for q in golden_reads]
    answer_reads = [
        q for q in first.captured_queries if 'FROM "annotation_run_turn"' in q["sql"] and '"client_states"' in q["sql"]
    ]
    assert len(answer_reads) == len({run.pk, other.pk}), [q["sql"][:200] for q in answer_reads]
    from django.core.cache import cache

    cache.clear()
    alone = client.get(f"/api/v1/annotation-runs/{run.pk}/agreement/").json()
    assert page.context["figures"] == alone


def test_the_queue_shows_the_words_in_a_constant_number_of_queries(cast, golden):
    client = client_for(cast.supervisor_a)
    few = saved_run(run_lines("AG01")[:1], rater="few")
    many = saved_run(run_lines("AG01"), rater="many")
    counted = {}
    for run in (few, many):
        url = f"/admin/agreement/annotationrun/{run.pk}/adjudicate/"
        client.get(url)
        with CaptureQueriesContext(connection) as queries:
            page = client.get(url).content.decode()
        counted[run.rater] = (len(queries), page.count('<form method="post" class="decide">'))
    assert counted["few"][1] < counted["many"][1] == 8
    # one query for the differences' turns and one for the supervisor's assignments, whatever their number
    assert counted["few"][0] == counted["many"][0]
    words = Turn.objects.get(utterance_id="AG01-C-002").text
    assert words and f'<q class="turn-text">{words}</q>' in page


def test_it_refuses_a_decision_outside_the_supervisors_scope(cast, run):
    other = Turn.objects.get(utterance_id="AG02-C-002")
    url = f"/admin/agreement/annotationrun/{run.pk}/adjudicate/"
    for user in (cast.supervisor_a, cast.staff):
        client_for(user).post(
            url, {"turn": other.pk, "axis": "techniques", "label": "exploration", "outcome": "accepted"}
        )
    assert not AdjudicationDecision.objects.exists()
    assert turn_label_codes(other)["techniques"] == ["reflection"]
    # Staff read the queue but get no decision buttons.
    page = client_for(cast.staff).get(url).content.decode()
    assert "담당 슈퍼바이저만 판정" in page and "평가자 라벨 채택</button>" not in page


def test_it_lists_runs_in_a_constant_number_of_queries(cast, golden):
    client = client_for(cast.staff)
    saved_run(run_lines("AG01"), rater="r0")
    client.get("/admin/agreement/annotationrun/")
    with CaptureQueriesContext(connection) as one:
        assert client.get("/admin/agreement/annotationrun/").status_code == 200
    for n in range(1, 5):
        saved_run(run_lines("AG01"), rater=f"r{n}")
    with CaptureQueriesContext(connection) as five:
        assert client.get("/admin/agreement/annotationrun/").status_code == 200
    assert len(five) == len(one)
