"""The spreadsheet columns of CONTRACT §3: English names, Korean headers, and header matching."""

from __future__ import annotations

# In the order the export and the template write them.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("session", "회기"),
    ("utterance_id", "발화ID"),
    ("seq", "순서"),
    ("speaker", "화자"),
    ("stage", "단계"),
    ("text", "발화"),
    ("techniques", "기법"),
    ("client_states", "내담자상태"),
    ("nonverbal", "비언어"),
    ("dialog_act", "대화행위"),
    ("source", "출처"),
    ("rationale", "근거"),
    ("critique", "논평"),
    ("trainee", "수련생"),
    ("held_on", "일자"),
    # Optional, after the §3 columns: who wrote each comment line and a critique's intent deviation, one line
    # per line of the ``rationale``/``critique`` cell (a blank line = no value), so that the portal's own
    # export comes back unchanged (issue 33). Files without them import as before.
    ("rationale_author", "근거 작성 주체"),
    ("critique_author", "논평 작성 주체"),
    ("critique_dimension", "논평 평가 차원"),
    ("critique_expected", "논평 권장"),
    ("critique_actual", "논평 실제"),
    ("critique_severity", "논평 심각도"),
)
FIELD_NAMES = tuple(name for name, _ in COLUMNS)
KOREAN = dict(COLUMNS)
REQUIRED_COLUMNS = ("utterance_id", "seq", "speaker", "stage", "text", "source")
LIST_COLUMNS = ("techniques", "client_states", "nonverbal")
# Per comment kind, the fields whose columns run line by line beside that kind's text column.
COMMENT_FIELD_COLUMNS: dict[str, tuple[str, ...]] = {
    "rationale": ("author",),
    "critique": ("author", "dimension", "expected", "actual", "severity"),
}
COMMENT_COLUMNS = tuple(f"{kind}_{name}" for kind, names in COMMENT_FIELD_COLUMNS.items() for name in names)


def _key(header: str) -> str:
    # Spaces and case do not matter ("Utterance ID", "발화 ID", "utterance_id").
    return "".join(header.split()).replace("_", "").casefold()


_BY_KEY = {_key(alias): name for name, ko in COLUMNS for alias in (name, ko)}


def field_for_header(header: object) -> str | None:
    if not isinstance(header, str):
        return None
    return _BY_KEY.get(_key(header))
