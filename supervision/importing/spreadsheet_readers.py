"""csv and xlsx readers: a file → ``(row_number, raw_dict)`` pairs keyed by the English field names.

Row numbers are the rows a spreadsheet program shows (header = row 1). Anything wrong with the file as a
whole raises ``FileRejected`` (reported as row 0, column ``file``) before a single row is parsed.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from python_calamine import CalamineWorkbook

from supervision.importing.columns import REQUIRED_COLUMNS, field_for_header
from supervision.importing.readers import FileRejected, RowProblem, check_not_empty, too_many_rows

# The export's formula escape (CONTRACT §4): exactly one leading ' before one of these is removed again.
FORMULA_STARTS = frozenset("=+-@\t\r")
XLSX_PARTS = ("[Content_Types].xml", "xl/workbook.xml")


def header_mapping(header: tuple | list) -> list[tuple[int, str]]:
    """Positions of the known columns; unknown headers are ignored, a repeated or missing one is refused."""
    mapping: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for position, cell in enumerate(header):
        name = field_for_header(cell.strip() if isinstance(cell, str) else cell)
        if name is None:
            continue
        if name in seen:
            raise FileRejected(f"'{name}' 열이 두 번 있습니다({seen[name] + 1}번째와 {position + 1}번째 열).")
        seen[name] = position
        mapping.append((position, name))
    missing = [name for name in REQUIRED_COLUMNS if name not in seen]
    if missing:
        raise FileRejected(
            "필수 열이 없습니다: "
            + ", ".join(missing)
            + ". 첫 행은 머리글(영문 또는 한글, 예: utterance_id 또는 발화ID)이어야 합니다."
        )
    return mapping


def read_csv(path: Path) -> Iterator[tuple[int, dict | RowProblem]]:
    """UTF-8 csv, with or without BOM, CRLF or LF line ends, cells may span lines."""
    check_not_empty(path)
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith(b"PK\x03\x04") or b"\x00" in head:
        raise FileRejected(
            "CSV 파일이 아닙니다(확장자는 .csv인데 내용은 다른 형식입니다). .xlsx라면 확장자를 고쳐 주세요."
        )
    return _csv_rows(path)


def _csv_rows(path: Path) -> Iterator[tuple[int, dict | RowProblem]]:
    # One cell's ceiling, not the file's: an unclosed quote cannot swallow the rest of a large file into memory.
    csv.field_size_limit(max(settings.IMPORT_MAX_CELL_CHARS * 100, 131_072))
    limit = settings.IMPORT_MAX_ROWS
    rows = 0
    try:
        with path.open("r", encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None or not any(cell.strip() for cell in header):
                raise FileRejected("머리글 행이 없습니다(파일이 비어 있습니다).")
            mapping = header_mapping(header)
            width = max(position for position, _ in mapping) + 1
            for number, cells in enumerate(reader, start=2):
                if len(cells) < width:
                    if not any(cells) or not any(cell.strip() for cell in cells):
                        continue
                    cells += [""] * (width - len(cells))
                elif not any(cells):
                    continue
                rows += 1
                if rows > limit:
                    raise too_many_rows()
                raw = {}
                for position, name in mapping:
                    value = cells[position]
                    if value[:1] == "'" and value[1:2] in FORMULA_STARTS:
                        value = value[1:]
                    raw[name] = value
                yield number, raw
    except UnicodeDecodeError as exc:
        raise FileRejected(
            f"UTF-8로 읽을 수 없는 파일입니다({exc.start}번째 바이트 부근). 엑셀에서 'CSV UTF-8'로 저장해 주세요."
        ) from None
    except csv.Error as exc:
        raise FileRejected(f"CSV 형식이 잘못되었습니다({exc}).") from None
    if rows == 0:
        raise FileRejected("읽을 발화가 없습니다(머리글 아래에 행이 없습니다).")


def check_xlsx_container(path: Path | BinaryIO) -> None:
    """The file (a path, or an open binary file) must be a zip holding the xlsx parts, and must not unpack to
    more than the limit (zip bomb)."""
    if not zipfile.is_zipfile(path):
        raise FileRejected("xlsx 파일이 아닙니다(손상되었거나 다른 형식입니다). 엑셀에서 .xlsx로 다시 저장해 주세요.")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            names = {member.filename for member in members}
    except (zipfile.BadZipFile, OSError, ValueError):
        raise FileRejected("xlsx 파일이 손상되어 열 수 없습니다.") from None
    if any(part not in names for part in XLSX_PARTS):
        raise FileRejected("xlsx 파일이 아닙니다(엑셀 통합 문서의 구성 요소가 없습니다).")
    with zipfile.ZipFile(path) as archive:
        for member in members:
            if member.filename.endswith((".xml", ".rels")) and _declares_a_dtd(archive, member):
                raise FileRejected(
                    f"xlsx 파일의 '{member.filename}'에 문서형 정의(DTD·엔터티 선언)가 있어 거부합니다"
                    "(XML 폭탄 방지). 엑셀에서 다시 저장해 주세요."
                )
    unpacked = sum(member.file_size for member in members)
    packed = max(sum(member.compress_size for member in members), 1)
    limit = settings.IMPORT_MAX_UNZIPPED_BYTES
    if unpacked > limit or unpacked / packed > settings.IMPORT_MAX_ZIP_RATIO:
        raise FileRejected(
            f"압축을 풀면 {unpacked / 1_048_576:,.0f} MB가 되는 파일이라 거부합니다"
            f"(한도 {limit / 1_048_576:,.0f} MB: 설정 IMPORT_MAX_UNZIPPED_BYTES, "
            f"압축률 {settings.IMPORT_MAX_ZIP_RATIO}배: 설정 IMPORT_MAX_ZIP_RATIO)."
        )


def _declares_a_dtd(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bool:
    """Excel never writes a DOCTYPE; one in a part can only be an entity bomb or an external-entity probe.
    A DOCTYPE must precede the root element, so the first kilobytes are enough."""
    try:
        with archive.open(member) as part:
            head = part.read(4096)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError):
        raise FileRejected("xlsx 파일이 손상되어 열 수 없습니다.") from None
    return b"<!DOCTYPE" in head.upper() or b"<!ENTITY" in head.upper()


def read_xlsx(path: Path) -> Iterator[tuple[int, dict | RowProblem]]:
    """The first worksheet, read by calamine (Rust): about four times faster than a Python XML stream and it
    never expands DTD entities. The container checks above run first, so a zip bomb is refused unopened."""
    check_not_empty(path)
    check_xlsx_container(path)
    try:
        workbook = CalamineWorkbook.from_path(str(path))
        if not workbook.sheet_names:
            raise FileRejected("xlsx 파일에 시트가 없습니다.")
        sheet = workbook.get_sheet_by_index(0)
    except FileRejected:
        raise
    except Exception as exc:  # calamine reports damaged or hostile parts as its own error types
        raise FileRejected(
            f"xlsx 파일을 열 수 없습니다(손상되었거나 안전하지 않은 내용, {exc.__class__.__name__})."
        ) from None
    if sheet.height - 1 > settings.IMPORT_MAX_ROWS:
        raise too_many_rows()
    return _xlsx_rows(sheet)


def _xlsx_rows(sheet) -> Iterator[tuple[int, dict | RowProblem]]:
    limit = settings.IMPORT_MAX_ROWS
    # calamine's rows start at the sheet's first used row; the row numbers shown to people are the sheet's.
    first_row = sheet.start[0] + 1 if sheet.start else 1
    rows_read = sheet.to_python(skip_empty_area=False)
    if first_row != 1 or not rows_read or not any(cell not in (None, "") for cell in rows_read[0]):
        raise FileRejected("머리글 행이 없습니다(첫 시트의 1행이 비어 있습니다).")
    mapping = header_mapping(rows_read[0])
    rows = 0
    for number, cells in enumerate(rows_read[1:], start=2):
        if not any(cell is not None and cell != "" for cell in cells):
            continue
        rows += 1
        if rows > limit:
            raise too_many_rows()
        width = len(cells)
        raw = {name: cells[position] if position < width else None for position, name in mapping}
        for name, value in raw.items():
            if value == "":
                raw[name] = None if name != "text" else ""
        if raw["text"] is None:
            raw["text"] = ""  # an empty cell is an empty utterance (allowed for a silence act)
        yield number, raw
    if rows == 0:
        raise FileRejected("읽을 발화가 없습니다(머리글 아래에 행이 없습니다).")


# A worksheet row element, with or without a namespace prefix (``<row r="2">``, ``<x:row>``).
_SHEET_ROW = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?row[\s>/]")


def count_xlsx_rows(data: bytes, *, stop_after: int) -> int:
    """Rows in the workbook's worksheets, counted on the decompressed XML stream without parsing it (memory
    stays at one chunk); stops counting once past ``stop_after``. Run after ``check_xlsx_container``."""
    rows = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for member in archive.infolist():
            if not (member.filename.startswith("xl/worksheets/") and member.filename.endswith(".xml")):
                continue
            tail = b""
            with archive.open(member) as part:
                while chunk := part.read(1 << 20):
                    window = tail + chunk
                    # a tag cut by the chunk boundary is counted in the next window, never twice
                    cut = max(len(window) - 16, 0)
                    rows += sum(1 for match in _SHEET_ROW.finditer(window) if match.start() < cut)
                    tail = window[cut:]
                    if rows > stop_after:
                        return rows
                rows += len(_SHEET_ROW.findall(tail))
    return rows


def count_csv_rows(data: bytes, *, stop_after: int) -> int:
    """Data rows of a UTF-8 csv (cells may span lines), counted by the csv reader; stops once past ``stop_after``."""
    csv.field_size_limit(max(settings.IMPORT_MAX_CELL_CHARS * 100, 131_072))
    rows = -1  # the header
    try:
        reader = csv.reader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=""))
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows += 1
                if rows > stop_after:
                    break
    except UnicodeDecodeError as exc:
        raise FileRejected(
            f"UTF-8로 읽을 수 없는 파일입니다({exc.start}번째 바이트 부근). 엑셀에서 'CSV UTF-8'로 저장해 주세요."
        ) from None
    except csv.Error as exc:
        raise FileRejected(f"CSV 형식이 잘못되었습니다({exc}).") from None
    return max(rows, 0)
