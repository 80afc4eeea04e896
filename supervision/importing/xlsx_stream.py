"""Streaming rows out of an xlsx worksheet, fast enough for 100,000-row files.

openpyxl opens the workbook read-only (workbook part, shared strings and styles, all parsed through
defusedxml); the one big part, the worksheet, is then streamed with expat directly. openpyxl's own
read-only worksheet parses it twice (once to size it when the file has no ``<dimension>``, as openpyxl's
own files do not) through defusedxml's pure-Python tree builder, about five times slower. The sheet
stream refuses any DTD or entity declaration, which is what keeps entity expansion bombs out.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from xml.parsers import expat

from openpyxl.reader.excel import ExcelReader
from openpyxl.styles.stylesheet import apply_stylesheet
from openpyxl.utils.datetime import from_excel

CHUNK = 1 << 16


class SheetRefused(Exception):
    pass


class XlsxRows:
    """``(spreadsheet row number, tuple of cell values)`` of the workbook's first worksheet."""

    def __init__(self, path: Path) -> None:
        reader = ExcelReader(str(path), read_only=True, data_only=True)
        self._reader = reader
        reader.read_manifest()
        reader.read_strings()
        reader.read_workbook()
        apply_stylesheet(reader.archive, reader.wb)
        sheets = [rel.target for _, rel in reader.parser.find_sheets() if "chartsheet" not in rel.Type]
        if not sheets or sheets[0] not in reader.valid_files:
            raise SheetRefused("no worksheet")
        self.sheet_path = sheets[0]
        self.shared_strings = reader.shared_strings
        self.date_styles = set(reader.wb._date_formats)
        self.epoch = reader.wb.epoch

    def close(self) -> None:
        self._reader.archive.close()

    def declared_rows(self) -> int | None:
        """The row count from ``<dimension ref="A1:O100">`` when the sheet states it near its start."""
        with self._reader.archive.open(self.sheet_path) as handle:
            head = handle.read(4096).decode("utf-8", "replace")
        start = head.find("<dimension ")
        if start < 0:
            return None
        ref = head[start:].split('ref="', 1)[-1].split('"', 1)[0]
        last = ref.split(":")[-1]
        digits = "".join(ch for ch in last if ch.isdigit())
        return int(digits) if digits else None

    def __iter__(self) -> Iterator[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        state = _SheetState(self.shared_strings, self.date_styles, self.epoch, rows)
        # No namespace processing: element names arrive as written ("c", or "x:c" from some producers).
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = CHUNK
        parser.StartElementHandler = state.start
        parser.EndElementHandler = state.end
        parser.CharacterDataHandler = state.text
        parser.StartDoctypeDeclHandler = _refuse
        parser.EntityDeclHandler = _refuse
        parser.ExternalEntityRefHandler = _refuse
        carry = b""
        with self._reader.archive.open(self.sheet_path) as handle:
            while chunk := handle.read(CHUNK):
                chunk = carry + chunk
                # An inline string is <c t="inlineStr"><is><t>…</t></is></c>; dropping the <is> wrapper
                # (bytes.replace runs in C) spares two Python callbacks per cell. A tag cut in two by the
                # chunk boundary waits for the next chunk.
                cut = chunk.rfind(b"<")
                if cut >= 0 and len(chunk) - cut < 6 and b">" not in chunk[cut:]:
                    chunk, carry = chunk[:cut], chunk[cut:]
                else:
                    carry = b""
                parser.Parse(chunk.replace(b"<is>", b"").replace(b"</is>", b""), False)
                if rows:
                    yield from rows
                    rows.clear()
            parser.Parse(carry, True)
        yield from rows


def _refuse(*args):
    raise SheetRefused("DTD or entity declaration in the worksheet")


_COLUMNS: dict[str, int] = {}


def _column_index(reference: str) -> int:
    """0-based column of a cell reference such as ``AB12`` (letters looked up once per column)."""
    letters = reference.rstrip("0123456789")
    index = _COLUMNS.get(letters)
    if index is None:
        if not (0 < len(letters) <= 3 and letters.isascii() and letters.isupper()):
            raise SheetRefused(f"bad cell reference {reference[:20]!r}")  # Excel's last column is XFD
        index = 0
        for char in letters:
            index = index * 26 + ord(char) - 64
        index -= 1
        if len(_COLUMNS) < 20_000:
            _COLUMNS[letters] = index
    return index


class _SheetState:
    __slots__ = (
        "buffer",
        "capture",
        "cells",
        "column",
        "date_styles",
        "epoch",
        "in_cell",
        "in_phonetic",
        "kind",
        "more",
        "out",
        "row_number",
        "shared",
        "style",
    )

    def __init__(self, shared, date_styles, epoch, out) -> None:
        self.shared, self.date_styles, self.epoch, self.out = shared, date_styles, epoch, out
        self.row_number = 0
        self.cells: dict[int, object] = {}
        self.column = -1
        self.kind = "n"
        self.style = 0
        self.buffer: str | None = None
        self.more: list[str] = []
        self.capture = False
        self.in_cell = False
        self.in_phonetic = False

    def start(self, name: str, attrs: dict) -> None:
        tag = name.rpartition(":")[2] if ":" in name else name
        if tag == "c":
            reference = attrs.get("r")
            self.column = _column_index(reference) if reference else self.column + 1
            self.kind = attrs.get("t", "n")
            style = attrs.get("s")
            self.style = int(style) if style else 0
            self.buffer = None
            self.in_cell = True
        elif tag == "t":
            self.capture = self.in_cell and not self.in_phonetic
        elif tag == "v":
            self.capture = True
        elif tag == "row":
            number = attrs.get("r")
            self.row_number = int(number) if number else self.row_number + 1
            self.cells = {}
            self.column = -1
        elif tag == "rPh":
            self.in_phonetic = True

    def end(self, name: str) -> None:
        tag = name.rpartition(":")[2] if ":" in name else name
        if tag == "c":
            self.in_cell = False
            if self.buffer is not None:
                if self.more:
                    self.buffer = "".join([self.buffer, *self.more])
                    self.more = []
                kind = self.kind
                self.cells[self.column] = (
                    self.buffer if kind == "inlineStr" or kind == "str" else self._value(self.buffer)
                )
        elif tag == "v" or tag == "t":
            self.capture = False
        elif tag == "rPh":
            self.in_phonetic = False
        elif tag == "row" and self.cells:
            cells = self.cells
            get = cells.get
            self.out.append((self.row_number, tuple([get(i) for i in range(max(cells) + 1)])))

    def text(self, data: str) -> None:
        if self.capture:
            # buffer_text hands over a cell's text in one piece unless it is very long
            if self.buffer is None:
                self.buffer = data
            else:
                self.more.append(data)

    def _value(self, raw: str) -> object:
        kind = self.kind
        if kind == "s":
            return self.shared[int(raw)]
        if kind in ("inlineStr", "str", "e"):
            return raw
        if kind == "b":
            return raw == "1"
        if kind == "d":
            return datetime.datetime.fromisoformat(raw)
        number = float(raw)
        if number.is_integer() and "." not in raw and "E" not in raw.upper():
            number = int(raw)
        if self.style in self.date_styles:
            return from_excel(number, self.epoch)
        return number
