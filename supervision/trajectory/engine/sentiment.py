"""One more valence cue for English client turns: VADER's compound score (vaderSentiment, pinned).

VADER (Hutto & Gilbert, 2014) is a rule-based sentiment lexicon of about 7,500 rated English words and
idioms, with rules for negation, intensifiers and dampeners, contrastive "but", and punctuation emphasis.
Our word lists cover the clinical families (hopelessness, self-blame, risk ...) but miss much plain
evaluative language ("it went well", "that was awful", "I feel lighter"); VADER covers that general layer.
Deterministic, local (the lexicon ships with the package), no network. Korean turns (any Hangul) are skipped.
"""

from __future__ import annotations

import re
from functools import lru_cache

_HANGUL_RE = re.compile(r"[\uac00-\ud7a3]")
_ASCII_RE = re.compile(r"[A-Za-z]")


@lru_cache(maxsize=1)
def _analyzer():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def english_compound(text: str) -> float | None:
    """VADER compound score in [-1, 1] for an English text; None for Korean or empty text."""
    if not text or _HANGUL_RE.search(text) or not _ASCII_RE.search(text):
        return None
    return float(_analyzer().polarity_scores(text)["compound"])
