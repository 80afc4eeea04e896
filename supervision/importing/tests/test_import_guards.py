"""Guards: only staff and superusers import; size and row limits before parsing; hostile or broken files
are clear file errors (row 0, column file), never a traceback and never a write."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from supervision.importing.models import ImportJob
from supervision.importing.services import import_file
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv, write_xlsx
from supervision.models import Session, Turn
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db

IMPORT_URL = reverse("admin:supervision_session_import")
TEMPLATE_URL = reverse("admin:supervision_session_import_template")


def _file_error(report) -> str:
    assert [(e.row, e.column) for e in report.errors] == [(0, "file")]
    assert not Session.objects.exists()
    return report.errors[0].message


def test_only_staff_and_superusers_may_import(client, cast, django_user_model, tmp_path):
    assert client.login(username="supervisor_a", password=PASSWORD)
    assert client.get(IMPORT_URL).status_code == 403
    assert client.get(TEMPLATE_URL).status_code == 403
    path = write_xlsx(tmp_path / "s.xlsx", ENGLISH_HEADER, session_rows("GUARD", 2))
    assert client.post(IMPORT_URL, {"file": SimpleUploadedFile("s.xlsx", path.read_bytes())}).status_code == 403
    assert IMPORT_URL not in client.get(reverse("admin:supervision_session_changelist")).content.decode()
    assert not ImportJob.objects.exists()

    assert client.login(username="trainee_a", password=PASSWORD)
    assert client.get(IMPORT_URL).status_code == 302  # not an admin user at all: off to the log-in page

    django_user_model.objects.create_superuser("root", password=PASSWORD)
    assert client.login(username="root", password=PASSWORD)
    assert client.get(IMPORT_URL).status_code == 200
    assert client.login(username="staff", password=PASSWORD)
    assert client.get(IMPORT_URL).status_code == 200


def test_an_upload_over_the_size_limit_is_refused_before_it_is_read_naming_the_setting(
    client, cast, settings, tmp_path
):
    settings.IMPORT_MAX_BYTES = 1000
    path = write_csv(tmp_path / "big.csv", ENGLISH_HEADER, session_rows("BIG", 40))
    assert client.login(username="staff", password=PASSWORD)

    response = client.post(IMPORT_URL, {"file": SimpleUploadedFile("big.csv", path.read_bytes())})

    assert response.status_code == 200
    page = response.content.decode()
    assert "파일이 너무 큽니다" in page
    assert "IMPORT_MAX_BYTES" in page
    assert "import_transcripts" in page
    assert not ImportJob.objects.exists()
    assert not Session.objects.exists()


def test_the_command_line_imports_a_file_over_the_upload_size_limit(cast, settings, tmp_path):
    settings.IMPORT_MAX_BYTES = 1000
    path = write_csv(tmp_path / "big.csv", ENGLISH_HEADER, session_rows("BIG", 40))
    assert path.stat().st_size > settings.IMPORT_MAX_BYTES
    out = io.StringIO()

    call_command("import_transcripts", str(path), stdout=out, stderr=io.StringIO())

    assert json.loads(out.getvalue().splitlines()[-1])["created"] == 40
    assert Turn.objects.filter(session__code="BIG").count() == 40


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_a_file_over_the_row_limit_is_refused(cast, settings, tmp_path, suffix):
    settings.IMPORT_MAX_ROWS = 5
    write = write_csv if suffix == "csv" else write_xlsx
    path = write(tmp_path / f"rows.{suffix}", ENGLISH_HEADER, session_rows("ROWS", 8))

    message = _file_error(import_file(path))
    assert "행이 너무 많습니다" in message
    assert "IMPORT_MAX_ROWS" in message


def test_the_command_line_refuses_a_file_over_the_row_limit_whatever_its_size(cast, settings, tmp_path):
    settings.IMPORT_MAX_ROWS = 5
    path = write_csv(tmp_path / "rows.csv", ENGLISH_HEADER, session_rows("ROWS", 8))
    out, err = io.StringIO(), io.StringIO()

    with pytest.raises(SystemExit) as exited:
        call_command("import_transcripts", str(path), stdout=out, stderr=err)

    assert exited.value.code == 1
    assert err.getvalue().startswith("row 0, column file: 행이 너무 많습니다. 한도는 5행입니다(설정 IMPORT_MAX_ROWS)")
    assert json.loads(out.getvalue().splitlines()[-1])["errors"][0]["column"] == "file"
    assert not Session.objects.exists()


def test_extension_and_content_must_agree(cast, tmp_path):
    csv_path = write_csv(tmp_path / "real.csv", ENGLISH_HEADER, session_rows("EXT", 2))
    xlsx_path = write_xlsx(tmp_path / "real.xlsx", ENGLISH_HEADER, session_rows("EXT", 2))
    fake_xlsx = tmp_path / "fake.xlsx"
    fake_xlsx.write_bytes(csv_path.read_bytes())
    fake_csv = tmp_path / "fake.csv"
    fake_csv.write_bytes(xlsx_path.read_bytes())
    plain_zip = tmp_path / "plain.xlsx"
    with zipfile.ZipFile(plain_zip, "w") as archive:
        archive.writestr("notes.txt", "안녕")

    assert "xlsx 파일이 아닙니다" in _file_error(import_file(fake_xlsx))
    assert "CSV 파일이 아닙니다" in _file_error(import_file(fake_csv))
    assert "xlsx 파일이 아닙니다" in _file_error(import_file(plain_zip))
    assert "지원하지 않는 파일 형식" in _file_error(import_file(tmp_path / "notes.txt"))


def test_empty_truncated_and_header_only_files_are_clear_errors(cast, tmp_path):
    empty = tmp_path / "empty.xlsx"
    empty.write_bytes(b"")
    whole = write_xlsx(tmp_path / "whole.xlsx", ENGLISH_HEADER, session_rows("CUT", 40)).read_bytes()
    truncated = tmp_path / "truncated.xlsx"
    truncated.write_bytes(whole[: len(whole) // 2])
    header_only = write_csv(tmp_path / "header.csv", ENGLISH_HEADER, [])

    assert "비어 있습니다" in _file_error(import_file(empty))
    assert _file_error(import_file(truncated))
    assert "읽을 발화가 없습니다" in _file_error(import_file(header_only))


def test_a_zip_bomb_is_refused_before_it_is_unpacked(cast, tmp_path):
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * 30_000_000)
    assert bomb.stat().st_size < 100_000

    assert "압축을 풀면" in _file_error(import_file(bomb))


def _with_part(source, target, part: str, transform) -> None:
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as copy:
        for item in original.infolist():
            data = original.read(item.filename)
            copy.writestr(item, transform(data) if item.filename == part else data)


def _without_declaration(data: bytes) -> bytes:
    return data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data


ENTITY_BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
    b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
)


@pytest.mark.parametrize("part", ["xl/worksheets/sheet1.xml", "xl/workbook.xml"])
def test_an_xml_entity_bomb_is_refused(cast, tmp_path, part):
    source = write_xlsx(tmp_path / "plain.xlsx", ENGLISH_HEADER, session_rows("XMLB", 2))
    hostile = tmp_path / "hostile.xlsx"
    _with_part(source, hostile, part, lambda data: ENTITY_BOMB + _without_declaration(data))

    message = _file_error(import_file(hostile))
    assert "DTD" in message and part in message


def test_a_damaged_sheet_is_an_error_on_the_admin_page_not_a_500(client, cast, tmp_path):
    source = write_xlsx(tmp_path / "plain.xlsx", ENGLISH_HEADER, session_rows("DMG", 30))
    damaged = tmp_path / "damaged.xlsx"
    _with_part(source, damaged, "xl/worksheets/sheet1.xml", lambda data: data[: len(data) // 2])
    assert client.login(username="staff", password=PASSWORD)

    response = client.post(IMPORT_URL, {"file": SimpleUploadedFile("damaged.xlsx", damaged.read_bytes())})
    page = client.get(response["Location"])

    assert page.status_code == 200
    assert [(e["row"], e["column"]) for e in page.context["errors"]] == [(0, "file")]
    assert not Session.objects.exists()
