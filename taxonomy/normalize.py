"""How a person's spelling of a label is compared with the catalogue."""

import difflib
import unicodedata
from typing import Any


def normalize_text(text: str) -> str:
    """Composed Unicode (NFC), as the portal stores and compares all text. Korean typed on a Mac or copied from
    some programs arrives decomposed (NFD: '공' as ㄱ+ㅗ+ㅇ jamo): it looks the same but is not equal, so a
    search or a label lookup would miss it."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def normalize_typed(text: str | None) -> str:
    """What a person typed in a form's text box, as the page counted it: trimmed, composed (``normalize_text``),
    each line break one character. Browsers post a textarea's line breaks as CR LF but count them as one
    against its ``maxlength``: a 1,990-character reply of twenty lines would otherwise be refused as too long."""
    return normalize_text((text or "").strip().replace("\r\n", "\n"))


def normalize_value(value: Any) -> Any:
    """``normalize_text`` through a parsed row: strings, and the strings inside lists and objects."""
    if isinstance(value, str):
        return normalize_text(value)
    if isinstance(value, list):
        return [normalize_value(item) for item in value]
    if isinstance(value, dict):
        return {key: normalize_value(item) for key, item in value.items()}
    return value


def normalize_label(text: str) -> str:
    """Spaces anywhere, letter case and the Unicode form do not matter: '정서 반영', '정서반영' and ' 정서반영 '
    are one label."""
    return "".join(normalize_text(text).split()).strip("\"'“”‘’").casefold()


def closest(word: str, candidates: list[str], n: int = 3) -> list[str]:
    """The ``n`` candidates most like ``word`` (for 'did you mean' hints), best first."""
    key = normalize_label(word)
    by_key = {normalize_label(c): c for c in candidates}
    matches = difflib.get_close_matches(key, list(by_key), n=n, cutoff=0.0)
    return [by_key[m] for m in matches]
