"""Spreadsheet export (CONTRACT §4) and the import template, built on the golden lines.

Export writes the §3 columns with English headers, lists joined by ``; ``, comments as one line each in
the ``rationale``/``critique`` columns, and after them the optional columns of who wrote each line and a
critique's intent deviation (``critique_severity`` …), line by line. It never writes a formula: xlsx cells are stored as text, and a csv
cell that starts with ``= + - @``, a tab or a carriage return gets a leading ``'`` that the importer strips.
"""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from supervision.exporting import golden_lines
from supervision.importing.columns import (
    COLUMNS,
    COMMENT_COLUMNS,
    COMMENT_FIELD_COLUMNS,
    FIELD_NAMES,
    KOREAN,
    LIST_COLUMNS,
)
from supervision.importing.spreadsheet_readers import FORMULA_STARTS
from taxonomy import catalogue

LIST_JOIN = "; "
TEMPLATE_ROWS = 5000  # rows of the template that carry the drop-down lists
TEMPLATE_SHEET = "발화"


def spreadsheet_row(line: dict) -> list[str]:
    """One golden line as the §3 cells (all text)."""
    comments = {"rationale": [], "critique": []}
    fields = {column: [] for column in COMMENT_COLUMNS}
    for comment in line.get("comments") or ():
        kind = comment["kind"]
        # One comment, one line of its kind's column; a comment written over several lines keeps its fields on
        # its first line (a re-import recognises every line as part of the stored comment).
        lines = [part.strip() for part in comment["text"].splitlines() if part.strip()] or [comment["text"]]
        comments[kind] += lines
        for name in COMMENT_FIELD_COLUMNS[kind]:
            fields[f"{kind}_{name}"] += [str(comment.get(name) or "")] + [""] * (len(lines) - 1)
    values = {
        "session": line.get("session", ""),
        "utterance_id": line["utterance_id"],
        "seq": str(line["seq"]),
        "speaker": line["speaker"],
        "stage": line["stage"],
        "text": line["text"],
        "dialog_act": line.get("dialog_act") or "",
        "source": line["source"],
        "rationale": "\n".join(comments["rationale"]),
        "critique": "\n".join(comments["critique"]),
        "trainee": line.get("trainee") or "",
        "held_on": line.get("held_on") or "",
        # Trailing blanks are dropped: a column of blanks is an empty cell.
        **{column: "\n".join(values).rstrip("\n") for column, values in fields.items()},
    }
    for column in LIST_COLUMNS:
        values[column] = LIST_JOIN.join(line.get(column) or ())
    return [values[name] for name in FIELD_NAMES]


def csv_escape(value: str) -> str:
    return "'" + value if value[:1] in FORMULA_STARTS and value else value


def header_row(korean: bool = False) -> list[str]:
    """The §3 column names; ``korean`` gives the Korean headers the template uses (the importer reads both)."""
    return [KOREAN[name] for name in FIELD_NAMES] if korean else list(FIELD_NAMES)


def csv_lines(sessions: Iterable, *, korean_headers: bool = False) -> Iterator[str]:
    """The csv text in chunks; starts with a BOM so that Excel opens the Korean text as UTF-8."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header_row(korean_headers))
    yield "\ufeff" + buffer.getvalue()
    for count, line in enumerate(golden_lines(sessions), start=1):
        if count % 1000 == 1:
            buffer.seek(0)
            buffer.truncate()
        writer.writerow([csv_escape(value) for value in spreadsheet_row(line)])
        if count % 1000 == 0:
            yield buffer.getvalue()
    if buffer.tell():
        yield buffer.getvalue()


def _text_cell(sheet, value: str) -> WriteOnlyCell:
    if ILLEGAL_CHARACTERS_RE.search(value):
        value = ILLEGAL_CHARACTERS_RE.sub("", value)  # xlsx cannot hold C0 control characters
    cell = WriteOnlyCell(sheet, value=value)
    cell.data_type = "s"  # openpyxl would turn a leading '=' into a formula; text stays text
    return cell


SEQ_COLUMN, HELD_ON_COLUMN = FIELD_NAMES.index("seq"), FIELD_NAMES.index("held_on")


def _typed_cells(sheet, row: list[str]) -> list[WriteOnlyCell]:
    """The row as the template would hold it: ``seq`` a number, ``held_on`` a date, every other cell text."""
    cells = [_text_cell(sheet, value) for value in row]
    cells[SEQ_COLUMN] = WriteOnlyCell(sheet, value=int(row[SEQ_COLUMN]))
    if row[HELD_ON_COLUMN]:
        cell = WriteOnlyCell(sheet, value=datetime.date.fromisoformat(row[HELD_ON_COLUMN]))
        cell.number_format = "yyyy-mm-dd"
        cells[HELD_ON_COLUMN] = cell
    return cells


def write_xlsx(
    sessions: Iterable, path: Path | io.BytesIO, *, korean_headers: bool = False, like_template: bool = False
) -> None:
    """CONTRACT §4 (``export_golden``): every cell text, English headers. ``like_template`` (the admin's
    export, opened by people in a spreadsheet program): the template's sheet name, ``seq`` as a number and
    ``held_on`` as a date; text cells stay text, so still never a formula."""
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(TEMPLATE_SHEET if like_template else "transcripts")
    sheet.append([_text_cell(sheet, name) for name in header_row(korean_headers)])
    for line in golden_lines(sessions):
        row = spreadsheet_row(line)
        sheet.append(_typed_cells(sheet, row) if like_template else [_text_cell(sheet, value) for value in row])
    workbook.save(path)


def write_template(target: Path | io.BytesIO) -> None:
    """An empty import sheet with Korean headers and drop-downs, and a second sheet listing every label."""
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = TEMPLATE_SHEET
    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor="DDEBF7")
    for position, (name, korean) in enumerate(COLUMNS, start=1):
        cell = sheet.cell(row=1, column=position, value=korean)
        cell.font, cell.fill = bold, fill
        sheet.column_dimensions[get_column_letter(position)].width = 40 if name == "text" else 14
    sheet.freeze_panes = "A2"
    letters = {name: get_column_letter(position) for position, (name, _) in enumerate(COLUMNS, start=1)}
    choices = {
        "speaker": [alias for s in catalogue.SPEAKERS for alias in (s.code, s.aliases[0])],
        "stage": list(catalogue.STAGE_CODES),
        "dialog_act": list(catalogue.DIALOG_ACT_CODES),
    }
    for name, values in choices.items():
        validation = DataValidation(
            type="list",
            formula1='"' + ",".join(values) + '"',
            allow_blank=True,
            showErrorMessage=True,
            errorTitle="허용되지 않는 값",
            error=f"목록에서 고르세요: {', '.join(values)}",
        )
        validation.add(f"{letters[name]}2:{letters[name]}{TEMPLATE_ROWS}")
        sheet.add_data_validation(validation)

    labels = workbook.create_sheet("라벨")
    labels.append(["축", "코드", "한국어 이름", "범주", "정의", "표면 라벨"])
    for cell in labels[1]:
        cell.font, cell.fill = bold, fill
    categories = {c.code: c.ko for c in catalogue.CATEGORIES}
    for technique in catalogue.TECHNIQUES:
        labels.append(
            [
                "기법",
                technique.code,
                technique.ko,
                f"{technique.category} ({categories[technique.category]})",
                technique.definition,
                "; ".join(technique.surface_labels),
            ]
        )
    for state in catalogue.CLIENT_STATES:
        labels.append(["내담자상태", state.code, state.ko, "", state.definition, "; ".join(state.surface_labels)])
    for act in catalogue.DIALOG_ACTS:
        labels.append(["대화행위", act.code, act.ko, "", "", ""])
    for column, width in zip("ABCDEF", (10, 28, 18, 26, 60, 40), strict=True):
        labels.column_dimensions[column].width = width
    workbook.save(target)
