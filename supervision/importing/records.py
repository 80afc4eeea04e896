from __future__ import annotations

import datetime
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RowError:
    """One problem with the input. ``row`` is the row as a spreadsheet shows it (header = 1) or the
    1-based JSONL line; 0 means the file as a whole (then ``column`` is ``file``)."""

    row: int
    column: str
    message: str

    def as_dict(self) -> dict:
        return {"row": self.row, "column": self.column, "message": self.message}

    def __str__(self) -> str:
        return f"row {self.row}, column {self.column}: {self.message}"


@dataclass(frozen=True)
class CommentRecord:
    kind: str
    text: str
    author: str
    intent_deviation: dict
    # The fields the input states (``author`` and the intent-deviation keys); a JSONL comment states them all,
    # a spreadsheet line those whose optional columns the file has. A comment already stored (recognised by
    # kind and text) takes the stated fields and keeps the others.
    given: frozenset = frozenset({"author", "dimension", "expected", "actual", "severity"})


@dataclass
class TurnRecord:
    row: int
    session: str
    utterance_id: str
    seq: int
    speaker: str
    stage: str
    text: str
    source: str
    techniques: list[str] = field(default_factory=list)
    client_states: list[str] = field(default_factory=list)
    nonverbal: list[str] = field(default_factory=list)
    dialog_act: str | None = None
    comments: list[CommentRecord] = field(default_factory=list)
    trainee: str | None = None
    held_on: datetime.date | None = None


class ImportAborted(Exception):
    """Raised inside the write transaction to roll it back (e.g. a dry run, or a late conflict)."""
