"""How a person's spelling of a label is compared with the catalogue."""

import difflib


def normalize_label(text: str) -> str:
    """Spaces anywhere and letter case do not matter: '정서 반영', '정서반영' and ' 정서반영 ' are one label."""
    return "".join(text.split()).strip("\"'“”‘’").casefold()


def closest(word: str, candidates: list[str], n: int = 3) -> list[str]:
    """The ``n`` candidates most like ``word`` (for 'did you mean' hints), best first."""
    key = normalize_label(word)
    by_key = {normalize_label(c): c for c in candidates}
    matches = difflib.get_close_matches(key, list(by_key), n=n, cutoff=0.0)
    return [by_key[m] for m in matches]
