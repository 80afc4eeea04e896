"""The importer streams a file through in chunks: what a chunk writes is rolled back when a later chunk has an
error, the report is the one the whole file gives at once, and a session spread over chunks ends up as if the
file had been read whole."""

import datetime

import pytest

from supervision.importing import services
from supervision.importing.services import import_file
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session, Turn, TurnTechnique

pytestmark = pytest.mark.django_db

HEADER = [*ENGLISH_HEADER, "trainee", "held_on"]


def _rows(code: str, turns: int, *, trainee_at: int | None = None, held_on_at: int | None = None) -> list[list]:
    rows = [[*row, "", ""] for row in session_rows(code, turns)]
    if trainee_at is not None:
        rows[trainee_at][-2] = "trainee_a"
    if held_on_at is not None:
        rows[held_on_at][-1] = "2026-10-05"
    return rows


def _report(path, chunk_rows, monkeypatch):
    monkeypatch.setattr(services, "CHUNK_ROWS", chunk_rows)
    return import_file(path)


def test_an_error_in_a_later_chunk_rolls_back_what_earlier_chunks_wrote(cast, tmp_path, monkeypatch):
    rows = _rows("STRA", 10) + _rows("STRB", 10)
    rows[17][6] = "반엉"  # an unknown technique on a counselor turn in the last chunk
    rows[19][1] = "STRB-K-002"  # the id of row 15 again, two chunks later
    rows[12][2] = "12"  # a seq out of range
    path = write_csv(tmp_path / "late.csv", HEADER, rows)

    whole = _report(path, 100_000, monkeypatch)
    chunked = _report(path, 4, monkeypatch)

    assert chunked.errors == whole.errors
    assert {e.column for e in chunked.errors} >= {"techniques", "utterance_id", "seq"}
    assert chunked.summary() == whole.summary()
    assert not Session.objects.exists()
    assert not Turn.objects.exists()


def test_a_session_spread_over_chunks_is_written_as_a_whole(cast, tmp_path, monkeypatch):
    path = write_csv(tmp_path / "spread.csv", HEADER, _rows("STRC", 10, trainee_at=9, held_on_at=7))

    report = _report(path, 3, monkeypatch)

    assert report.summary() == {"sessions": 1, "turns": 10, "created": 10, "updated": 0, "warnings": []}
    session = Session.objects.get(code="STRC")
    assert session.trainee.username == "trainee_a"
    assert session.held_on == datetime.date(2026, 10, 5)
    assert Turn.objects.filter(session=session).count() == 10
    assert TurnTechnique.objects.filter(turn__session=session).count() == 5

    again = _report(path, 3, monkeypatch)
    assert (again.created, again.updated, again.deleted) == (0, 0, 0)

    shorter = write_csv(tmp_path / "shorter.csv", HEADER, _rows("STRC", 8, trainee_at=1, held_on_at=7))
    trimmed = _report(shorter, 3, monkeypatch)
    assert (trimmed.created, trimmed.updated, trimmed.deleted) == (0, 0, 2)
    assert [w.column for w in trimmed.warnings] == ["file"]
    assert Turn.objects.filter(session=session).count() == 8


def test_a_dry_run_over_chunks_counts_and_writes_nothing(cast, tmp_path, monkeypatch):
    path = write_csv(tmp_path / "dry.csv", HEADER, _rows("STRD", 9))
    monkeypatch.setattr(services, "CHUNK_ROWS", 2)

    report = import_file(path, dry_run=True)

    assert (report.sessions, report.turns, report.created) == (1, 9, 9)
    assert not Session.objects.exists()
