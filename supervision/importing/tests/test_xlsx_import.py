"""xlsx import: Korean headers in any order, multi-line cells, surface labels with commas."""

import datetime
import json

import pytest
from django.core.management import call_command

from supervision.importing.services import import_file
from supervision.importing.tests.sheets import KOREAN_HEADER, session_rows, write_xlsx
from supervision.models import Session, SupervisorComment, Turn

pytestmark = pytest.mark.django_db


def test_it_imports_an_excel_file_with_korean_headers_in_any_order(cast, tmp_path):
    rows = session_rows(
        "XL1",
        4,
        {
            0: {6: "공감\n정서 반영"},  # a multi-line list cell: one label per line
            2: {6: "동의확인, 동기수준 확인;  Reflection "},  # a surface label that contains a comma
            3: {7: "방어\n정서와 접촉함", 8: "(쓴웃음)\n(한숨)"},
        },
    )
    order = [5, 0, 2, 1, 3, 4, 6, 7, 8, 9, 10]  # 발화 first, 회기, 순서, 발화ID …
    header = [KOREAN_HEADER[i] for i in order] + ["근거", "수련생", "일자"]
    body = [
        [row[i] for i in order] + ["첫째 근거\n둘째 근거" if n == 0 else "", "trainee_a", datetime.date(2026, 11, 2)]
        for n, row in enumerate(rows)
    ]
    path = write_xlsx(tmp_path / "labelled.xlsx", header, body)

    report = import_file(path)

    assert report.errors == []
    assert (report.sessions, report.turns, report.created) == (1, 4, 4)
    session = Session.objects.get(code="XL1")
    assert session.trainee == cast.trainee_a
    assert session.held_on == datetime.date(2026, 11, 2)
    turns = {t.seq: t for t in Turn.objects.filter(session=session).prefetch_related("techniques", "client_states")}
    assert sorted(t.code for t in turns[0].techniques.all()) == ["empathy", "reflection"]
    assert sorted(t.code for t in turns[2].techniques.all()) == ["consent_motivation_check", "reflection"]
    assert sorted(s.code for s in turns[3].client_states.all()) == ["affect_contact", "defensive"]
    assert turns[3].nonverbal == ["(쓴웃음)", "(한숨)"]
    assert list(SupervisorComment.objects.filter(turn=turns[0]).values_list("text", flat=True).order_by("id")) == [
        "첫째 근거",
        "둘째 근거",
    ]


def test_it_names_the_spreadsheet_row_and_three_closest_labels_for_an_unknown_label(cast, tmp_path, capsys):
    rows = session_rows("XL2", 4, {2: {6: "반영; 반엉"}})
    path = write_xlsx(tmp_path / "typo.xlsx", KOREAN_HEADER, rows)

    with pytest.raises(SystemExit) as exit_info:
        call_command("import_transcripts", str(path))

    assert exit_info.value.code == 1
    errors = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["errors"]
    assert len(errors) == 1
    assert errors[0]["row"] == 4  # header is row 1, seq 2 is the third data row
    assert errors[0]["column"] == "techniques"
    assert "'반엉'" in errors[0]["message"]
    # Three suggestions, found through Korean names and surface labels too, best first.
    assert "가장 가까운 라벨: reflection(반영), " in errors[0]["message"]
    assert errors[0]["message"].count("(") == 3
    assert not Session.objects.filter(code="XL2").exists()


def test_it_skips_blank_rows_but_keeps_row_numbers_as_excel_shows_them(cast, tmp_path):
    rows = session_rows("XL3", 3, {2: {2: "둘"}})
    body = [rows[0], [None] * len(KOREAN_HEADER), rows[1], rows[2]]
    path = write_xlsx(tmp_path / "gap.xlsx", KOREAN_HEADER, body)

    report = import_file(path)

    assert [(e.row, e.column) for e in report.errors] == [(5, "seq")]


def test_it_reads_every_cell_of_a_sheet_streamed_in_many_chunks(tmp_path):
    from openpyxl import Workbook

    from supervision.importing.spreadsheet_readers import read_xlsx

    # openpyxl's write-only mode stores inline strings: the form the stream rewrites chunk by chunk.
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet()
    sheet.append(["utterance_id", "seq", "speaker", "stage", "text", "source"])
    expected = []
    for n in range(3000):
        text = f"<is>{n} & 발화 '{'가' * (n % 37)}'\n둘째 줄</is>"  # markup-looking text stays text
        sheet.append([f"LONG-C-{n + 1:03d}", n, "상", "탐색", text, "x_synthetic"])
        expected.append(text)
    workbook.save(tmp_path / "long.xlsx")

    rows = list(read_xlsx(tmp_path / "long.xlsx"))

    assert [number for number, _ in rows] == list(range(2, 3002))
    assert [raw["text"] for _, raw in rows] == expected
    assert [raw["seq"] for _, raw in rows] == list(range(3000))
