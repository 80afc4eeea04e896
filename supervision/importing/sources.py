"""Picks the reader for a file by its extension; each spreadsheet reader checks the content agrees."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from supervision.importing.readers import FileRejected, RowProblem, read_jsonl
from supervision.importing.spreadsheet_readers import read_csv, read_xlsx

READERS = {".jsonl": read_jsonl, ".csv": read_csv, ".xlsx": read_xlsx}


def rows_from_path(path: Path) -> Iterator[tuple[int, dict | RowProblem]]:
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        supported = ", ".join(sorted(READERS))
        raise FileRejected(f"지원하지 않는 파일 형식 '{path.suffix}'입니다({supported}).")
    return reader(path)
