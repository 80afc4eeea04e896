"""Phrase matching for the lexicon rules.

English is matched on tokens (dictionary lookups are much faster than a regex alternation of hundreds of
phrases), optionally on their stems (a stemmer given to the matcher is applied to the entries' tokens and the
text's tokens alike, so "worsening", "hopelessly", "giving up" meet "worsen", "hopeless", "give up"; negators,
hedges and intensifiers are read on the unstemmed tokens); Korean is matched on substrings (one Aho-Corasick
automaton over the phrases) because Korean endings attach to stems, so word boundaries would miss most hits.
Each hit carries whether it was negated and how much an intensifier scaled it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import ahocorasick

P = TypeVar("P")

_TOKEN_RE = re.compile(r"\([a-z]+\)|[a-z0-9]+(?:'[a-z]+)?|[.,!?;:]")
_BARRIERS = frozenset(".,!?;:")
_HANGUL_RE = re.compile(r"[\uac00-\ud7a3]")
_ASCII_RE = re.compile(r"[A-Za-z]")
_KO_CLAUSE_END = re.compile(r"[.!?,\n]")
_EN_CONDITIONAL = frozenset(("if", "unless"))
_KO_CONDITIONAL = re.compile(r"[^\s.!?,]{0,2}?(?:으면|면)")


# English inflection folding ("en_stemmer": "inflection"): only inflectional endings are removed (plural and
# third person -s, -ed, -ing, adverbial -ly after -less/-ful/-ous/-ive, a final silent e), plus the irregular
# past forms of common verbs, so "gave up" / "giving up" / "gives up" meet "give up" and "hopelessly" meets
# "hopeless". Derivational suffixes are kept: "hopeful" is not "hope", "thankful" not "thanks", "useless" not
# "use" (a general stemmer such as Porter2 folds those and a cue lexicon needs them apart).
_IRREGULAR = {
    "gave": "give",
    "given": "give",
    "felt": "feel",
    "went": "go",
    "gone": "go",
    "got": "get",
    "gotten": "get",
    "made": "make",
    "kept": "keep",
    "lost": "lose",
    "thought": "think",
    "took": "take",
    "taken": "take",
    "came": "come",
    "fell": "fall",
    "fallen": "fall",
    "ran": "run",
    "began": "begin",
    "begun": "begin",
    "told": "tell",
    "said": "say",
    "sat": "sit",
    "slept": "sleep",
    "woke": "wake",
    "woken": "wake",
    "brought": "bring",
    "spoke": "speak",
    "broke": "break",
    "left": "leave",
    "meant": "mean",
    "held": "hold",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "knew": "know",
    "known": "know",
    "saw": "see",
    "seen": "see",
    "found": "find",
    "stood": "stand",
    "built": "build",
}
_NOT_INFLECTED = frozenset(
    (
        "nothing",
        "something",
        "anything",
        "everything",
        "morning",
        "evening",
        "during",
        "ceiling",
        "thing",
        "things",
        "bring",
        "sing",
        "king",
        "ring",
        "wing",
        "spring",
        "string",
        "swing",
        "sting",
        "feeling",
        "always",
        "perhaps",
        "less",
        "unless",
        "yes",
        "this",
        "thus",
        "was",
        "has",
        "is",
        "as",
        "us",
        "its",
        "news",
        "series",
        "species",
        "lens",
        "chaos",
        "red",
        "bed",
        "need",
        "feed",
        "seed",
        "speed",
        "indeed",
        "hundred",
        "sacred",
        "naked",
        "wicked",
        "crooked",
        "ragged",
        "rugged",
        "wretched",
        "beloved",
        "used",
    )
)
_EN_VOWELS = "aeiouy"
_EN_DOUBLE = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")


def fold_inflection(tok: str) -> str:
    """The inflection-free form of an English token (the same for "give", "gives", "giving", "gave")."""
    tok = _IRREGULAR.get(tok, tok)
    if tok in _NOT_INFLECTED or not tok.isalpha():
        return tok
    w = tok
    for suf, rep in (("lessly", "less"), ("fully", "ful"), ("ously", "ous"), ("ively", "ive")):
        if w.endswith(suf):
            return w[: -len(suf)] + rep
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suf in ("ingly", "edly", "ing", "ed"):
        base = w[: -len(suf)]
        if w.endswith(suf) and len(base) >= 2 and any(c in _EN_VOWELS for c in base):
            if suf in ("ed", "edly") and base.endswith("i"):
                base = base + "e" if len(base) <= 2 else base[:-1] + "y"  # died -> die, tried -> try
            elif base.endswith(_EN_DOUBLE):
                base = base[:-1]
            w = base
            break
    if len(w) > 3 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    return w


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
    # "의미 없어요", "기대가 없", "나아진 게 없": 없 after the cue denies it. Applied only to cues for which the
    # matcher's `absent_applies` holds (positive ones): many negative stems are written to stop right before
    # 없 ("소용", "살 이유", "저 같은 건") and must not be flipped by the 없 that completes them.
    ko_absent: re.Pattern[str] | None = None
    # Hedge adverbs that a negation reaches through ("don't really feel like", "didn't even want"): dropped
    # right after an English negator so the phrase behind them matches as written.
    en_transparent: frozenset[str] = frozenset()


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
        absent_applies: Callable[[P], bool] | None = None,
        stem: Callable[[str], str] | None = None,
    ) -> None:
        self._negation = negation
        self._stem = stem
        self._absent = negation.ko_absent if absent_applies is not None else None
        self._absent_applies = absent_applies
        self._intens = intensifiers
        en: dict[str, list[tuple[tuple[str, ...], P, bool]]] = {}
        ko: dict[str, list[tuple[str, P]]] = {}
        for phrase, payload in entries:
            phrase = normalise(phrase).strip()
            if _HANGUL_RE.search(phrase):
                ko.setdefault(phrase[0], []).append((phrase, payload))
            else:
                # An entry written "=i handled" matches its tokens exactly even when the matcher stems: where the
                # tense or form carries the meaning ("helped me" is recalled coping, "help me" a plea).
                marked = phrase.startswith("=")
                exact = stem is None or marked
                toks = tuple(tokenize(phrase[1:] if marked else phrase))
                if not exact:
                    toks = tuple(stem(t) for t in toks)  # type: ignore[misc]
                if toks:
                    key = toks[0] if stem is None or not exact else "=" + toks[0]
                    en.setdefault(key, []).append((toks, payload, exact))
        self._has_exact = stem is not None and any(k.startswith("=") for k in en)
        # Longest first so "want to die" wins over "die" and "죽고 싶지 않" over "죽고 싶".
        self._en = {k: sorted(v, key=lambda e: -len(e[0])) for k, v in en.items()}
        # The entries under each first key by length, then by their whole token tuple (the first entry of a
        # phrase wins, as in the longest-first lists): a position is matched with one dict look-up per
        # length instead of a comparison per entry (common first words such as "i" start hundreds).
        self._en_by_len: dict[str, dict[int, dict[tuple[str, ...], P]]] = {}
        for k, cands in self._en.items():
            by_len = self._en_by_len.setdefault(k, {})
            for phrase, payload, _exact in cands:
                by_len.setdefault(len(phrase), {}).setdefault(phrase, payload)
        # Per distinct English token, once per process: its match key (the stem when the matcher stems), the
        # phrase lengths that may start at it (longest first) and the entries matched on keys / on the exact
        # words ("=…" entries).
        self._en_token: dict[str, tuple] = {}
        # A phrase listed twice keeps its first entry.
        self._ko_payload: dict[str, P] = {}
        for cands in ko.values():
            for phrase, payload in cands:
                self._ko_payload.setdefault(phrase, payload)
        # A word's intensifier factor is the largest of all intensifiers it starts with ("너무나" also starts
        # with "너무"); the longest-prefix regex plus this table gives exactly that in one match.
        ko_int = intensifiers.ko
        self._ko_intens_factor = {
            k: max(f for j, f in ko_int.items() if k.startswith(j)) if ko_int[k] >= 1.0 else ko_int[k] for k in ko_int
        }
        self._ko_intens_re = re.compile(
            "|".join(re.escape(k) for k in sorted(ko_int, key=len, reverse=True)) if ko_int else "(?!)"
        )
        # Korean phrases in one Aho-Corasick automaton: every phrase occurrence in one pass over the text, in C
        # (profiled: a trie-shaped regex tried its ~250 first-character branches at every position, and a
        # per-character Python loop cost more still).
        self._ko_automaton: ahocorasick.Automaton | None = None
        if ko:
            self._ko_automaton = ahocorasick.Automaton()
            for phrase in self._ko_payload:
                self._ko_automaton.add_word(phrase, phrase)
            self._ko_automaton.make_automaton()

    def scan(self, text: str) -> list[Hit[P]]:
        text = normalise(text)
        hits: list[Hit[P]] = []
        if self._en and _ASCII_RE.search(text):
            toks = tokenize(text)
            if not self._negation.en_transparent.isdisjoint(toks):
                toks = self._drop_hedges(toks)
            known, learn = self._en_token.get, self._learn_token
            self._scan_en(toks, [known(t) or learn(t) for t in toks], hits)
        if self._ko_automaton is not None and _HANGUL_RE.search(text):
            self._scan_ko(text, hits)
        return hits

    def negated(self, text: str, start: int, end: int) -> bool:
        """Whether the span text[start:end] (a clause-pattern match in normalised text) is negated."""
        if _HANGUL_RE.search(text, start, end):
            return self._ko_negated(text, start, end)
        toks = tokenize(text[:start])
        return self._en_negated(toks, len(toks))

    def _drop_hedges(self, toks: list[str]) -> list[str]:
        negators, hedges = self._negation.en_tokens, self._negation.en_transparent
        out: list[str] = []
        for tok in toks:
            if tok in hedges and out and (out[-1] in negators):
                continue
            out.append(tok)
        return out

    def _learn_token(self, tok: str) -> tuple:
        key = self._stem(tok) if self._stem is not None else tok
        on_keys = self._en_by_len.get(key) or {}
        on_words = (self._en_by_len.get("=" + tok) or {}) if self._has_exact else {}
        lengths = tuple(sorted({*on_keys, *on_words}, reverse=True))
        entry = (key, lengths, on_keys, on_words)
        if len(self._en_token) < 200_000:
            self._en_token[tok] = entry
        return entry

    def _scan_en(self, toks: list[str], known: list[tuple], hits: list[Hit[P]]) -> None:
        # A token loop with dict look-ups: measured faster than a trie regex over the joined tokens. `known`
        # holds each token's match key (the stem when the matcher stems) and its entries by length; `toks` are
        # the words for negation and intensity. The longest phrase wins at a position; at equal length an
        # entry matched on keys before one matched on the exact words.
        keys = [entry[0] for entry in known]
        i, n = 0, len(toks)
        while i < n:
            _key, lengths, on_keys, on_words = known[i]
            for k in lengths:
                payload = None
                phrases = on_keys.get(k)
                if phrases is not None:
                    payload = phrases.get(tuple(keys[i : i + k]))
                if payload is None:
                    phrases = on_words.get(k)
                    if phrases is not None:
                        payload = phrases.get(tuple(toks[i : i + k]))
                if payload is not None:
                    hits.append(Hit(payload, self._en_negated(toks, i), self._en_scale(toks, i)))
                    i += k
                    break
            else:
                i += 1

    def _en_negated(self, toks: list[str], i: int) -> bool:
        for j in range(i - 1, max(-1, i - 1 - self._negation.en_window), -1):
            tok = toks[j]
            if tok in _BARRIERS:
                return False
            if tok in self._negation.en_tokens:
                # "If I don't punish myself ..." states a condition, not that the client doesn't.
                return not any(t in _EN_CONDITIONAL for t in toks[max(0, j - 3) : j])
        return False

    def _en_scale(self, toks: list[str], i: int) -> float:
        # Intensifiers (factor > 1) raise a cue, downtoners ("a bit", "slightly", factor < 1) lower it; the
        # strongest of each kind counts.
        up = down = 1.0
        for j in range(i - 1, max(-1, i - 1 - self._intens.en_window), -1):
            tok = toks[j]
            if tok in _BARRIERS:
                break
            f = self._intens.en.get(tok, 1.0)
            up, down = max(up, f), min(down, f)
        return up * down

    def _scan_ko(self, text: str, hits: list[Hit[P]]) -> None:
        # Left to right, the longest phrase at each position, the next search after its end: the automaton
        # reports every occurrence (overlapping ones too), so keep the longest per start and skip what a
        # kept phrase covers.
        longest: dict[int, str] = {}
        for last, phrase in self._ko_automaton.iter(text):  # type: ignore[union-attr]
            start = last - len(phrase) + 1
            if len(phrase) > len(longest.get(start, "")):
                longest[start] = phrase
        payloads = self._ko_payload
        absent, applies = self._absent, self._absent_applies
        resume = 0
        for start in sorted(longest):
            if start < resume:
                continue
            phrase = longest[start]
            end = resume = start + len(phrase)
            payload = payloads[phrase]
            negated = self._ko_negated(text, start, end)
            if not negated and absent is not None and applies(payload):  # type: ignore[misc]
                after = text[end : end + self._negation.ko_window]
                found = absent.search(after)
                negated = found is not None and _KO_CONDITIONAL.match(after, found.end()) is None
            hits.append(Hit(payload, negated, self._ko_scale(text, start)))

    def _ko_negated(self, text: str, start: int, end: int) -> bool:
        # Short negation "안 죽어요"/"못 견디" precedes the predicate as its own word.
        before = text[max(0, start - 4) : start].rstrip()
        prefixes = self._negation.ko_prefix
        if before.endswith(prefixes):  # one call rejects most hits (profiled: this runs for every Korean hit)
            for neg in prefixes:
                if before.endswith(neg) and (len(before) == len(neg) or not _HANGUL_RE.match(before[-len(neg) - 1])):
                    return True
        # Long negation "-지 않다", "-지 못하다" and copula "아니다" follow the stem.
        after = text[end : end + self._negation.ko_window]
        found = self._negation.ko_suffix.search(after)
        # "-지 않으면" / "안 하면" state a condition ("안 먹으면 살이 쪄요"), not a denial.
        return found is not None and _KO_CONDITIONAL.match(after, found.end()) is None

    def _ko_scale(self, text: str, start: int) -> float:
        before = text[max(0, start - 12) : start]
        prefix, factors = self._ko_intens_re, self._ko_intens_factor
        # No intensifier anywhere before the hit, so none starts a word of its clause: the usual case, and
        # one search instead of splitting the clause into words (profiled: the split cost 2.7 us a hit).
        if prefix.search(before) is None:
            return 1.0
        cut = _KO_CLAUSE_END.split(before)[-1]
        up = down = 1.0
        for word in cut.split()[-self._intens.ko_window :]:
            found = prefix.match(word)
            if found is not None:
                f = factors[found.group()]
                up, down = max(up, f), min(down, f)
        return up * down
