"""Phrase matching for the lexicon rules.

English is matched on tokens (dictionary lookups are much faster than a regex alternation of hundreds of
phrases); Korean is matched on substrings indexed by their first character because Korean endings attach to
stems, so word boundaries would miss most hits. Each hit carries whether it was negated and how much an
intensifier scaled it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

P = TypeVar("P")

_TOKEN_RE = re.compile(r"\([a-z]+\)|[a-z0-9]+(?:'[a-z]+)?|[.,!?;:]")
_BARRIERS = frozenset(".,!?;:")
_HANGUL_RE = re.compile(r"[\uac00-\ud7a3]")
_ASCII_RE = re.compile(r"[A-Za-z]")
_KO_CLAUSE_END = re.compile(r"[.!?,\n]")


@dataclass(frozen=True, slots=True)
class Hit(Generic[P]):
    payload: P
    negated: bool
    scale: float


@dataclass(frozen=True, slots=True)
class NegationRules:
    en_tokens: frozenset[str]
    en_window: int
    ko_prefix: tuple[str, ...]
    ko_suffix: re.Pattern[str]
    ko_window: int


@dataclass(frozen=True, slots=True)
class IntensifierRules:
    en: Mapping[str, float]
    ko: Mapping[str, float]
    en_window: int
    ko_window: int


def normalise(text: str) -> str:
    """Lower-case and fold typographic apostrophes so "don’t" matches "don't"."""
    return text.lower().replace("\u2019", "'").replace("\u2018", "'")


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


class PhraseMatcher(Generic[P]):
    """Longest-match phrase finder over English tokens and Korean substrings."""

    def __init__(
        self,
        entries: Sequence[tuple[str, P]],
        negation: NegationRules,
        intensifiers: IntensifierRules,
    ) -> None:
        self._negation = negation
        self._intens = intensifiers
        en: dict[str, list[tuple[tuple[str, ...], P]]] = {}
        ko: dict[str, list[tuple[str, P]]] = {}
        for phrase, payload in entries:
            phrase = normalise(phrase).strip()
            if _HANGUL_RE.search(phrase):
                ko.setdefault(phrase[0], []).append((phrase, payload))
            else:
                toks = tuple(tokenize(phrase))
                if toks:
                    en.setdefault(toks[0], []).append((toks, payload))
        # Longest first so "want to die" wins over "die" and "죽고 싶지 않" over "죽고 싶".
        self._en = {k: sorted(v, key=lambda e: -len(e[0])) for k, v in en.items()}
        self._ko = {k: sorted(v, key=lambda e: -len(e[0])) for k, v in ko.items()}

    def scan(self, text: str) -> list[Hit[P]]:
        text = normalise(text)
        hits: list[Hit[P]] = []
        if self._en and _ASCII_RE.search(text):
            self._scan_en(tokenize(text), hits)
        if self._ko and _HANGUL_RE.search(text):
            self._scan_ko(text, hits)
        return hits

    def _scan_en(self, toks: list[str], hits: list[Hit[P]]) -> None:
        index = self._en
        i, n = 0, len(toks)
        while i < n:
            cands = index.get(toks[i])
            if cands:
                for phrase, payload in cands:
                    k = len(phrase)
                    if k == 1 or tuple(toks[i : i + k]) == phrase:
                        hits.append(Hit(payload, self._en_negated(toks, i), self._en_scale(toks, i)))
                        i += k
                        break
                else:
                    i += 1
                continue
            i += 1

    def _en_negated(self, toks: list[str], i: int) -> bool:
        for j in range(i - 1, max(-1, i - 1 - self._negation.en_window), -1):
            tok = toks[j]
            if tok in _BARRIERS:
                return False
            if tok in self._negation.en_tokens:
                return True
        return False

    def _en_scale(self, toks: list[str], i: int) -> float:
        scale = 1.0
        for j in range(i - 1, max(-1, i - 1 - self._intens.en_window), -1):
            tok = toks[j]
            if tok in _BARRIERS:
                break
            scale = max(scale, self._intens.en.get(tok, 1.0))
        return scale

    def _scan_ko(self, text: str, hits: list[Hit[P]]) -> None:
        index = self._ko
        i, n = 0, len(text)
        while i < n:
            cands = index.get(text[i])
            if cands:
                for phrase, payload in cands:
                    if text.startswith(phrase, i):
                        end = i + len(phrase)
                        hits.append(Hit(payload, self._ko_negated(text, i, end), self._ko_scale(text, i)))
                        i = end
                        break
                else:
                    i += 1
                continue
            i += 1

    def _ko_negated(self, text: str, start: int, end: int) -> bool:
        # Short negation "안 죽어요"/"못 견디" precedes the predicate as its own word.
        before = text[max(0, start - 4) : start].rstrip()
        for neg in self._negation.ko_prefix:
            if before.endswith(neg) and (len(before) == len(neg) or not _HANGUL_RE.match(before[-len(neg) - 1])):
                return True
        # Long negation "-지 않다", "-지 못하다" and copula "아니다" follow the stem.
        after = text[end : end + self._negation.ko_window]
        return self._negation.ko_suffix.search(after) is not None

    def _ko_scale(self, text: str, start: int) -> float:
        before = text[max(0, start - 12) : start]
        cut = _KO_CLAUSE_END.split(before)[-1]
        scale = 1.0
        for word in cut.split()[-self._intens.ko_window :]:
            for intens, factor in self._intens.ko.items():
                if word.startswith(intens):
                    scale = max(scale, factor)
        return scale
