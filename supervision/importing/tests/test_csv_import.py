"""csv import: UTF-8 with or without BOM, CRLF or LF, quoted multi-line cells, the formula escape."""

import pytest

from supervision.importing.services import import_file
from supervision.importing.tests.sheets import ENGLISH_HEADER, KOREAN_HEADER, session_rows, write_csv
from supervision.models import Turn

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("bom", "newline"), [(True, "\r\n"), (False, "\n")])
def test_it_reads_csv_with_or_without_bom_and_either_line_end(cast, tmp_path, bom, newline):
    rows = session_rows("CSV1", 4, {0: {6: "공감\r\n반영"}, 1: {8: "(침묵)\n(한숨)"}})
    path = write_csv(tmp_path / "turns.csv", KOREAN_HEADER, rows, bom=bom, newline=newline)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") is bom
    assert raw.split(b"\n", 1)[0].endswith(b"\r") is (newline == "\r\n")

    report = import_file(path)

    assert report.errors == []
    assert report.created == 4
    first = Turn.objects.get(utterance_id="CSV1-C-001")
    assert sorted(first.techniques.values_list("code", flat=True)) == ["empathy", "reflection"]
    assert Turn.objects.get(utterance_id="CSV1-K-001").nonverbal == ["(침묵)", "(한숨)"]


def test_it_numbers_rows_by_record_even_when_a_cell_spans_lines(cast, tmp_path):
    rows = session_rows("CSV2", 3, {0: {5: "여러 줄\n발화\n입니다"}, 2: {3: "관찰자"}})
    path = write_csv(tmp_path / "multiline.csv", ENGLISH_HEADER, rows)

    report = import_file(path)

    assert [(e.row, e.column) for e in report.errors] == [(4, "speaker")]


def test_it_strips_exactly_the_formula_escape(cast, tmp_path):
    rows = session_rows("CSV3", 4, {0: {5: "'=1+1 은 수식이 아닙니다"}, 2: {5: "'-그냥 대시"}, 3: {5: "'인용"}})
    path = write_csv(tmp_path / "escaped.csv", ENGLISH_HEADER, rows)

    report = import_file(path)

    assert report.errors == []
    texts = dict(Turn.objects.filter(session__code="CSV3").values_list("seq", "text"))
    assert texts[0] == "=1+1 은 수식이 아닙니다"
    assert texts[2] == "-그냥 대시"
    assert texts[3] == "'인용"  # not an escape: the quote stays


def test_it_refuses_a_csv_that_is_not_utf8(cast, tmp_path):
    path = tmp_path / "legacy.csv"
    path.write_bytes(
        ",".join(ENGLISH_HEADER).encode() + "\r\nS1,S1-C-001,0,상담자,탐색,안녕,,,,,a_synthetic\r\n".encode("cp949")
    )

    report = import_file(path)

    assert [(e.row, e.column) for e in report.errors] == [(0, "file")]
    assert "UTF-8" in report.errors[0].message
