"""Helpers that write real spreadsheet files for the import tests (synthetic data only)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from openpyxl import Workbook

from supervision.importing.columns import FIELD_NAMES

KOREAN_HEADER = ["회기", "발화ID", "순서", "화자", "단계", "발화", "기법", "내담자상태", "비언어", "대화행위", "출처"]
ENGLISH_HEADER = list(FIELD_NAMES[: len(KOREAN_HEADER)])


def session_rows(code: str, turns: int, overrides: dict | None = None) -> list[list]:
    """Rows in the order of the headers above: counselor on even seqs, client on odd ones."""
    rows = []
    for seq in range(turns):
        counselor = seq % 2 == 0
        row = [
            code,
            f"{code}-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}",
            seq,
            "상담자" if counselor else "내담자",
            "탐색",
            f"합성 발화 {seq}",
            "반영" if counselor else "",
            "" if counselor else "affect_contact",
            "",
            "inform",
            "test_synthetic",
        ]
        for position, value in (overrides or {}).get(seq, {}).items():
            row[position] = value
        rows.append(row)
    return rows


def write_xlsx(path: Path, header: list, rows: list[list]) -> Path:
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    workbook.save(path)
    return path


def write_csv(path: Path, header: list, rows: list[list], *, bom: bool = True, newline: str = "\r\n") -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=newline)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(("\ufeff" if bom else "").encode() + buffer.getvalue().encode("utf-8"))
    return path
