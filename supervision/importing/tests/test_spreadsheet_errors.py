"""Every kind of bad spreadsheet row is named by its row and column; one bad row writes nothing."""

import pytest

from supervision.importing.services import import_file
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv, write_xlsx
from supervision.models import Session, Turn

pytestmark = pytest.mark.django_db

# column positions in ENGLISH_HEADER
UID, SEQ, SPEAKER, STAGE, TEXT, TECH, STATE, NONVERBAL, ACT, SOURCE = range(1, 11)


def test_it_names_row_and_column_of_every_kind_of_bad_row(cast, tmp_path):
    rows = session_rows(
        "BAD",
        16,
        {
            1: {SPEAKER: "관찰자"},
            2: {STAGE: "마무리"},
            3: {TECH: "", STATE: "우울감"},  # unknown client state
            4: {TECH: "반영; 공감 해주기"},  # unknown technique among good ones
            5: {TECH: "반영"},  # technique on a client turn (attach rule)
            6: {UID: "BAD-K-004"},  # letter does not match the speaker
            7: {ACT: "shout"},
            8: {TEXT: "연락처는 010-1234-5678 입니다"},  # personal identifier
            9: {TEXT: "가" * 10_001},  # longer than a cell may be
            10: {SOURCE: "real_clinic"},  # not synthetic
            11: {UID: ""},  # required and empty
            12: {TEXT: "", NONVERBAL: ""},  # empty utterance that is not a silence
        },
    )
    rows.append(list(rows[0]))  # row 18: the utterance id of row 2 again, and seq 0 twice
    header = [*ENGLISH_HEADER, "held_on"]
    for row in rows:
        row.append("2026-11-02")
    rows[14][-1] = "2026-13-40"
    path = write_csv(tmp_path / "bad.csv", header, rows)

    report = import_file(path)

    named = {(e.row, e.column) for e in report.errors}
    assert (3, "speaker") in named
    assert (4, "stage") in named
    assert (5, "client_states") in named
    assert (6, "techniques") in named
    assert (7, "techniques") in named  # attach rule names the column that may not be there
    assert (8, "utterance_id") in named
    assert (9, "dialog_act") in named
    assert (10, "text") in named
    assert (11, "text") in named
    assert (12, "source") in named
    assert (13, "utterance_id") in named
    assert (14, "text") in named
    assert (16, "held_on") in named
    assert any(e.row == 18 and e.column == "utterance_id" and "중복" in e.message for e in report.errors)
    assert any(e.column == "seq" and "회기 BAD" in e.message for e in report.errors)
    for error in report.errors:
        assert error.row >= 2 and error.message  # a person's row, a Korean message
    assert not Session.objects.filter(code="BAD").exists()


def test_it_refuses_a_sheet_without_a_required_column_as_a_file_error(cast, tmp_path):
    header = [h for h in ENGLISH_HEADER if h != "source"]
    rows = [row[:SOURCE] + row[SOURCE + 1 :] for row in session_rows("NOSRC", 2)]
    report = import_file(write_xlsx(tmp_path / "nosource.xlsx", header, rows))

    assert [(e.row, e.column) for e in report.errors] == [(0, "file")]
    assert "source" in report.errors[0].message


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_a_bad_last_row_leaves_the_database_untouched(cast, tmp_path, suffix):
    good = session_rows("KEEP", 6)
    write = write_csv if suffix == "csv" else write_xlsx
    assert import_file(write(tmp_path / f"first.{suffix}", ENGLISH_HEADER, good)).ok
    before = list(Turn.objects.order_by("id").values_list("id", "utterance_id", "text"))

    changed = [list(row) for row in good] + session_rows("NEW", 300)
    changed[0][TEXT] = "바뀐 발화"
    changed[-1][STAGE] = "없는단계"
    report = import_file(write(tmp_path / f"second.{suffix}", ENGLISH_HEADER, changed))

    assert [(e.row, e.column) for e in report.errors] == [(len(changed) + 1, "stage")]
    assert list(Turn.objects.order_by("id").values_list("id", "utterance_id", "text")) == before
    assert not Session.objects.filter(code="NEW").exists()


def test_a_cell_longer_than_the_limit_is_named_with_its_whole_length(cast, tmp_path):
    # openpyxl stores at most Excel's 32,767 characters: 98 KB of UTF-8, more than expat hands over at once.
    rows = session_rows("LONG", 2, {1: {TEXT: "나" * 70_000}})
    report = import_file(write_xlsx(tmp_path / "long.xlsx", ENGLISH_HEADER, rows))

    assert [(e.row, e.column) for e in report.errors] == [(3, "text")]
    assert "32,767자" in report.errors[0].message
