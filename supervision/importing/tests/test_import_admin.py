"""The admin import screens end to end: upload → preview (errors or counts) → confirm; template; export action."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import load_workbook

from supervision.importing.models import ImportJob
from supervision.importing.tests.sheets import ENGLISH_HEADER, KOREAN_HEADER, session_rows, write_xlsx
from supervision.models import Session, Turn
from supervision.testing import PASSWORD, golden_session
from taxonomy import catalogue

pytestmark = pytest.mark.django_db

IMPORT_URL = reverse("admin:supervision_session_import")


@pytest.fixture
def staff_client(client, cast):
    assert client.login(username="staff", password=PASSWORD)
    return client


def _upload(client, tmp_path, name, header, rows):
    path = write_xlsx(tmp_path / name, header, rows)
    upload = SimpleUploadedFile(name, path.read_bytes())
    return client.post(IMPORT_URL, {"file": upload, "trainee": "trainee_a"})


def test_staff_previews_errors_by_row_and_column_and_nothing_is_written(staff_client, tmp_path):
    rows = session_rows("ADM1", 4, {2: {6: "반엉"}, 3: {4: "마무리"}})
    response = _upload(staff_client, tmp_path, "errors.xlsx", KOREAN_HEADER, rows)

    assert response.status_code == 302
    page = staff_client.get(response["Location"])
    assert page.status_code == 200
    job = page.context["job"]
    assert job.status == ImportJob.Status.INVALID
    shown = [(e["row"], e["column"]) for e in page.context["errors"]]
    assert shown == [(4, "techniques"), (5, "stage")]
    html = page.content.decode()
    assert "알 수 없는 라벨 &#x27;반엉&#x27;" in html and "기법" in html and "단계" in html
    assert "확인하고 가져오기" not in html
    assert staff_client.post(response["Location"]).status_code == 302  # confirming a bad file is refused …
    assert not Session.objects.filter(code="ADM1").exists()  # … and nothing was written


def test_a_broken_jsonl_line_is_shown_as_the_whole_line_with_where_to_look(staff_client, cast):
    lines = [json.dumps(line, ensure_ascii=False) for line in golden_session("ADMJ", 3)]
    lines[1] = lines[1][:40] + lines[1][41:]  # a character of the second line dropped
    upload = SimpleUploadedFile("broken.jsonl", ("\n".join(lines) + "\n").encode())
    response = staff_client.post(IMPORT_URL, {"file": upload, "trainee": "trainee_a"})

    page = staff_client.get(response["Location"])
    [error] = [e for e in page.context["errors"] if e["row"] == 2]
    assert error["column"] == "utterance_id"  # the CLI's and the API's column (CONTRACT §2)
    assert error["message"].startswith("JSON으로 읽을 수 없는 줄입니다: ") and "번째 글자 근처" in error["message"]
    row = page.content.decode().split('id="import-errors"', 1)[1].split("</table>", 1)[0]
    line = row.split("<tr><td>2</td>", 1)[1].split("</tr>", 1)[0]
    assert "<td>줄 전체</td>" in line and "utterance_id" not in line and "Error" not in line
    assert not Session.objects.filter(code="ADMJ").exists()


def test_staff_previews_counts_then_confirms_and_everything_is_written(staff_client, cast, tmp_path):
    rows = session_rows("ADM2", 6)
    response = _upload(staff_client, tmp_path, "good.xlsx", ENGLISH_HEADER, rows)
    job_url = response["Location"]

    page = staff_client.get(job_url)
    assert page.context["job"].status == ImportJob.Status.PREVIEWED
    assert (page.context["report"]["created"], page.context["report"]["updated"]) == (6, 0)
    assert "새로 만들 발화" in page.content.decode()
    assert not Session.objects.filter(code="ADM2").exists()  # the preview writes nothing

    confirmed = staff_client.post(job_url)
    assert confirmed.status_code == 302
    done = staff_client.get(job_url)
    assert done.context["job"].status == ImportJob.Status.DONE
    assert Session.objects.get(code="ADM2").trainee == cast.trainee_a
    assert Turn.objects.filter(session__code="ADM2").count() == 6
    assert bytes(ImportJob.objects.get(pk=done.context["job"].pk).data) == b""  # the upload is not kept

    # The same file again: the preview says nothing would be created.
    again = _upload(staff_client, tmp_path, "good.xlsx", ENGLISH_HEADER, rows)
    report = staff_client.get(again["Location"]).context["report"]
    assert (report["created"], report["updated"]) == (0, 0)


def test_the_change_list_offers_import_to_staff(staff_client):
    page = staff_client.get(reverse("admin:supervision_session_changelist"))
    assert IMPORT_URL in page.content.decode()


def test_template_has_headers_drop_downs_and_every_label(staff_client):
    response = staff_client.get(reverse("admin:supervision_session_import_template"))

    assert response.status_code == 200
    workbook = load_workbook(io.BytesIO(response.content))
    sheet, labels = workbook.worksheets
    assert [c.value for c in sheet[1]][:6] == ["회기", "발화ID", "순서", "화자", "단계", "발화"]
    lists = {str(dv.sqref).split(":")[0]: dv.formula1 for dv in sheet.data_validations.dataValidation}
    assert "상담자" in lists["D2"] and "내담자" in lists["D2"]
    assert all(stage in lists["E2"] for stage in catalogue.STAGE_CODES)
    assert all(act in lists["J2"] for act in catalogue.DIALOG_ACT_CODES)
    codes = {row[1] for row in labels.iter_rows(min_row=2, values_only=True)}
    assert set(catalogue.TECHNIQUE_CODES) | set(catalogue.CLIENT_STATE_CODES) <= codes
    reflection = next(r for r in labels.iter_rows(min_row=2, values_only=True) if r[1] == "reflection")
    assert reflection[2] == "반영" and reflection[3].startswith("RELATIONAL") and reflection[4]


def test_the_export_action_downloads_the_selected_sessions(staff_client, tmp_path):
    _upload(staff_client, tmp_path, "good.xlsx", ENGLISH_HEADER, session_rows("ADM3", 2))
    job = ImportJob.objects.latest("created_at")
    staff_client.post(reverse("admin:supervision_session_import_job", args=[job.pk]))
    session = Session.objects.get(code="ADM3")

    response = staff_client.post(
        reverse("admin:supervision_session_changelist"),
        {"action": "export_xlsx", "_selected_action": [session.pk]},
    )

    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")
    rows = list(load_workbook(io.BytesIO(response.content)).worksheets[0].iter_rows(values_only=True))
    assert [r[1] for r in rows[1:]] == ["ADM3-C-001", "ADM3-K-001"]

    csv_response = staff_client.post(
        reverse("admin:supervision_session_changelist"),
        {"action": "export_csv", "_selected_action": [session.pk]},
    )
    body = b"".join(csv_response.streaming_content).decode("utf-8-sig")
    assert body.splitlines()[0].startswith("session,utterance_id,seq")
    assert "ADM3-K-001" in body


def test_the_preview_shows_session_codes_the_trainee_and_the_resolved_labels(staff_client, tmp_path):
    rows = session_rows("ADM5", 6, {2: {6: "홀딩"}})
    page = staff_client.get(_upload(staff_client, tmp_path, "labels.xlsx", KOREAN_HEADER, rows)["Location"])
    html = page.content.decode()
    sessions = html.split('id="import-sessions"', 1)[1].split("</table>", 1)[0]
    assert "<code>ADM5</code>" in sessions and "trainee_a" in sessions
    assert "반영 <code>reflection</code> ×2" in sessions  # the surface name, resolved to its code
    assert "홀딩 <code>holding</code> ×1" in sessions
    assert "affect_contact</code> ×3" in sessions


def test_the_done_page_tells_about_the_nightly_gauge_and_links_onwards(staff_client, cast, tmp_path, monkeypatch):
    queued = []
    monkeypatch.setattr("supervision.gauge.tasks.queue_nightly_reviews", lambda days: queued.append(days) or 1)
    job_url = _upload(staff_client, tmp_path, "done.xlsx", ENGLISH_HEADER, session_rows("ADM6", 4))["Location"]
    staff_client.post(job_url)
    html = staff_client.get(job_url).content.decode()
    assert "매일 밤" in html and "지금 다시 계산" in html
    session = Session.objects.get(code="ADM6")
    sessions_link = reverse("admin:supervision_session_changelist") + f"?id__in={session.pk}"
    assert f'href="{sessions_link}"' in html
    listing = staff_client.get(sessions_link)
    assert [s.code for s in listing.context["cl"].result_list] == ["ADM6"]
    job = ImportJob.objects.get(filename="done.xlsx")
    recompute = staff_client.post(reverse("admin:supervision_session_import_recompute", args=[job.pk]))
    assert recompute.status_code == 302 and len(queued) == 1
    jobs_list = staff_client.get(reverse("admin:importing_importjob_changelist")).content.decode()
    assert f'href="{job_url}"' in jobs_list


def test_supervisors_cannot_recompute_from_an_import_job(client, cast, tmp_path):
    job = ImportJob.objects.create(filename="x.csv", size=1, data=b"x", created_by=cast.staff)
    assert client.login(username="supervisor_a", password=PASSWORD)
    assert client.post(reverse("admin:supervision_session_import_recompute", args=[job.pk])).status_code == 403


def test_the_export_opens_like_the_template_and_gives_korean_headers_when_asked(staff_client, tmp_path):
    rows = session_rows("ADM7", 2)
    for row in rows:
        row.extend(["", "", "trainee_a", "2026-11-05"])
    header = [*ENGLISH_HEADER, "rationale", "critique", "trainee", "held_on"]
    _upload(staff_client, tmp_path, "dated.xlsx", header, rows)
    staff_client.post(reverse("admin:supervision_session_import_job", args=[ImportJob.objects.latest("created_at").pk]))
    session = Session.objects.get(code="ADM7")
    changelist = reverse("admin:supervision_session_changelist")

    plain = staff_client.post(changelist, {"action": "export_xlsx", "_selected_action": [session.pk]})
    sheet = load_workbook(io.BytesIO(plain.content)).worksheets[0]
    assert sheet.title == "발화"  # the template's sheet name
    assert [c.value for c in sheet[1]][:3] == ["session", "utterance_id", "seq"]  # default headers unchanged
    seq, held_on = sheet.cell(row=3, column=3), sheet.cell(row=3, column=15)
    assert seq.value == 1 and seq.data_type == "n"
    assert held_on.is_date and held_on.value.date().isoformat() == "2026-11-05"
    assert sheet.cell(row=3, column=6).data_type == "s"  # text stays text

    for url, action in ((changelist + "?headers=ko", "export_xlsx"), (changelist, "export_xlsx_ko")):
        korean = staff_client.post(url, {"action": action, "_selected_action": [session.pk]})
        assert korean.status_code == 200, url
        first = [c.value for c in load_workbook(io.BytesIO(korean.content)).worksheets[0][1]]
        assert first[:3] == ["회기", "발화ID", "순서"]
    body = staff_client.post(changelist + "?headers=ko", {"action": "export_csv", "_selected_action": [session.pk]})
    assert b"".join(body.streaming_content).decode("utf-8-sig").startswith("회기,발화ID,순서")

    # What the export wrote imports again unchanged.
    path = tmp_path / "again.xlsx"
    path.write_bytes(korean.content)
    again = staff_client.post(IMPORT_URL, {"file": SimpleUploadedFile("again.xlsx", path.read_bytes())})
    report = staff_client.get(again["Location"]).context["report"]
    assert report.get("errors") == [] and (report["created"], report["updated"]) == (0, 0)
