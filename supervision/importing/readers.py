"""Readers turn a file into ``(row_number, raw_dict)`` pairs, or raise ``FileRejected``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from supervision.rules import (
    NOT_AN_OBJECT_LINE,
    UNREADABLE_UTF8_LINE,
    first_unencodable,
    may_hold_unencodable,
    unreadable_json_problem,
)


class FileRejected(Exception):
    """The file as a whole cannot be read (reported as row 0, column ``file``)."""


def check_not_empty(path: Path) -> None:
    """Readers stream, so a file's size is not their limit: rows are (``IMPORT_MAX_ROWS``, see
    ``too_many_rows``). The byte cap belongs to web uploads (``supervision.importing.jobs.check_upload``)."""
    if path.stat().st_size == 0:
        raise FileRejected("파일이 비어 있습니다.")


def too_many_rows() -> FileRejected:
    return FileRejected(
        f"행이 너무 많습니다. 한도는 {settings.IMPORT_MAX_ROWS:,}행입니다(설정 IMPORT_MAX_ROWS). "
        "파일을 나누어 가져오세요."
    )


def read_jsonl(path: Path) -> Iterator[tuple[int, dict | RowProblem]]:
    """Golden JSONL (CONTRACT §2): one object per line; blank lines are skipped."""
    check_not_empty(path)
    rows = 0
    with path.open("rb") as handle:
        for number, raw_line in enumerate(handle, start=1):
            if not raw_line.strip():
                continue
            rows += 1
            if rows > settings.IMPORT_MAX_ROWS:
                raise too_many_rows()
            try:
                line = raw_line.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                yield number, RowProblem("utterance_id", UNREADABLE_UTF8_LINE)
                continue
            try:
                value = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                yield number, RowProblem("utterance_id", unreadable_json_problem(exc))
                continue
            if not isinstance(value, dict):
                yield number, RowProblem("utterance_id", NOT_AN_OBJECT_LINE)
                continue
            if may_hold_unencodable(line) and (unencodable := _first_unencodable_field(value)):
                yield number, RowProblem(*unencodable)
                continue
            yield number, value
    if rows == 0:
        raise FileRejected("읽을 발화가 없습니다.")


def _first_unencodable_field(value: dict) -> tuple[str, str] | None:
    """(field, message) of the first field holding a lone surrogate ("\\ud800" in the JSON): nothing after the
    reader could store, print or show it."""
    if problem := first_unencodable(list(value)):  # a field's name: no column to name
        return "utterance_id", problem
    for key, item in value.items():
        if problem := first_unencodable(item):
            return key, problem
    return None


class RowProblem:
    """A row the reader could not turn into a dict; the parser reports it as an error of that row."""

    def __init__(self, column: str, message: str) -> None:
        self.column = column
        self.message = message
