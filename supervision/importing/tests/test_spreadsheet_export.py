"""export_golden --format csv|xlsx: the §3 columns, never a formula, and importing it gives the same sessions."""

import csv
import io

import pytest
from django.core.management import call_command
from openpyxl import load_workbook

from supervision.exporting import golden_lines
from supervision.importing.columns import FIELD_NAMES
from supervision.importing.services import import_file
from supervision.models import Session
from supervision.testing import golden_session, write_jsonl

pytestmark = pytest.mark.django_db

FORMULA_TEXTS = ['=HYPERLINK("x")', "+82 라고 적힌 쪽지", "-- 말줄임", "@멘션", "\t들여쓴 말"]


def _load_rich_sessions(tmp_path):
    lines = golden_session("EXP1", 8, trainee="trainee_a", held_on="2026-11-03")
    lines[0]["techniques"] = ["reflection", "empathy"]
    lines[0]["comments"] = [
        {"kind": "rationale", "text": "정서를 정확히 되돌려 줌", "author": "supervisor"},
        {"kind": "critique", "text": "질문이 조금 빨랐음", "author": "supervisor"},
    ]
    lines[1]["client_states"] = ["defensive", "affect_contact"]
    lines[1]["nonverbal"] = ["(쓴웃음)", "(한숨)"]
    lines[3]["dialog_act"] = "null"
    lines[5].update(text="", nonverbal=["(침묵)"], dialog_act="silence")
    for line, text in zip(lines[2:7:2], FORMULA_TEXTS, strict=False):
        line["text"] = text
    lines[7]["text"] = FORMULA_TEXTS[3]
    more = golden_session("EXP2", 3, dialog_act="inform")
    more[2]["text"] = FORMULA_TEXTS[4]
    report = import_file(write_jsonl(tmp_path / "rich.jsonl", lines + more))
    assert report.errors == []


def _golden():
    return sorted(
        (sorted(line.items(), key=lambda kv: kv[0]) for line in golden_lines(Session.objects.order_by("code"))),
        key=lambda items: dict(items)["utterance_id"],
    )


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_export_then_import_gives_the_same_sessions(cast, tmp_path, fmt):
    _load_rich_sessions(tmp_path)
    before = _golden()
    path = tmp_path / f"out.{fmt}"
    call_command("export_golden", "--format", fmt, "--output", str(path))

    Session.objects.all().delete()
    report = import_file(path)

    assert report.errors == []
    assert report.created == 11
    assert _golden() == before
    again = import_file(path)
    assert (again.created, again.updated) == (0, 0)


def test_csv_export_escapes_formulas_and_keeps_korean_readable_in_excel(cast, tmp_path):
    _load_rich_sessions(tmp_path)
    path = tmp_path / "out.csv"
    call_command("export_golden", "--format", "csv", "--output", str(path))

    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # BOM: Excel reads the file as UTF-8
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows[0] == list(FIELD_NAMES)
    texts = [row[FIELD_NAMES.index("text")] for row in rows[1:]]
    for text in FORMULA_TEXTS:
        assert "'" + text in texts
    for row in rows[1:]:
        for cell in row:
            assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r")
    by_uid = {row[1]: row for row in rows[1:]}
    assert by_uid["EXP1-C-001"][FIELD_NAMES.index("techniques")] == "reflection; empathy"
    assert by_uid["EXP1-C-001"][FIELD_NAMES.index("rationale")] == "정서를 정확히 되돌려 줌"


def test_xlsx_export_stores_every_cell_as_text(cast, tmp_path):
    _load_rich_sessions(tmp_path)
    path = tmp_path / "out.xlsx"
    call_command("export_golden", "--format", "xlsx", "--output", str(path))

    sheet = load_workbook(path).worksheets[0]
    values = list(sheet.iter_rows(values_only=True))
    assert list(values[0]) == list(FIELD_NAMES)
    cells = [cell for row in sheet.iter_rows(min_row=2) for cell in row if cell.value is not None]
    assert cells and all(cell.data_type == "s" for cell in cells)
    texts = {row[FIELD_NAMES.index("text")] for row in values[1:]}
    assert set(FORMULA_TEXTS) <= texts  # stored as the text itself, no escape needed, never a formula
