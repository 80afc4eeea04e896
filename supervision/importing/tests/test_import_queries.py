"""The writer is set-based: the number of queries does not grow with the number of rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from supervision.importing.services import import_file
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv

pytestmark = pytest.mark.django_db


def _queries(path) -> int:
    # COPY runs on the raw psycopg cursor and is not captured; one COPY per table whatever the size.
    with CaptureQueriesContext(connection) as captured:
        report = import_file(path)
    assert report.errors == []
    return len(captured)


def test_query_count_does_not_grow_with_rows_or_sessions(cast, tmp_path):
    small = write_csv(tmp_path / "small.csv", ENGLISH_HEADER, session_rows("QS", 4))
    large_rows = [row for n in range(30) for row in session_rows(f"QL{n}", 60)]
    large = write_csv(tmp_path / "large.csv", ENGLISH_HEADER, large_rows)
    # The first import ever also creates the label suggester's run of its model version (once, not per row).
    _queries(write_csv(tmp_path / "first.csv", ENGLISH_HEADER, session_rows("QF", 2)))

    assert _queries(small) == _queries(large) < 25
    assert _queries(small) == _queries(large)  # re-import (nothing to write) is constant too
