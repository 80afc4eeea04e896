"""Turn text → a sparse TF-IDF row, the same code at training and at inference.

Character n-grams in the manner of scikit-learn's ``char_wb`` analyzer (n-grams that do not span a word
boundary; the padding space may open or close one) of the turn's words and nonverbal cues, plus (optionally,
off by default) shorter n-grams of the previous turn, and the stage. Each n-gram is hashed (a polynomial
hash over code points, 32 bits) into one of ``2**bits`` buckets, and a table maps the buckets seen in
training to columns; unseen buckets are dropped. Everything is done on whole batches with NumPy: a Python
loop over n-grams cost about 40 µs a turn, this about 4 (``make bench-suggester``), which is what lets an
import carry its suggestions within 25 % of its time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

STAGES = ("라포", "탐색", "개입", "정리")
# Columns after the n-gram vocabulary: one per stage, then "the turn has no words".
META_COLUMNS = len(STAGES) + 1

_PRIME = np.uint32(1_000_003)
_MIX = np.uint32(0x9E3779B1)  # Fibonacci hashing: spreads the low bits over the high ones kept
_SALT_TEXT = 0x51ED27
_SALT_PREVIOUS = 0xA3B19C
_SALT_CROSS = 0x3C6EF3
_SALT_CONTEXT = 0x6A09E6
_SPACE, _SEPARATOR = 32, 0


@dataclass(frozen=True)
class FeatureSpec:
    """How turns become n-grams; stored with the model so a model is read the way it was trained."""

    bits: int = 20
    text_ngrams: tuple[int, int] = (1, 4)
    # Off: the previous turn's 2–3-grams lowered techniques micro-F1 by 0.01 in the cross-validation and cost
    # a third of the featurising time. (0, 0) = not read.
    previous_ngrams: tuple[int, int] = (0, 0)
    # Character n-grams of the turn that may span words (scikit-learn's ``char`` analyzer): "죽고 싶은 건
    # 아니에요" is a denial only across its words. (0, 0) = none; the safety scorer reads them.
    cross_ngrams: tuple[int, int] = (0, 0)
    # The session's turns before the previous one (``context_turns`` of them, nearest first, joined): their
    # character n-grams in ``context_ngrams``. The safety scorer reads two: a disclosure often points back
    # ("그렇게 한 거예요", "충동이 또 올라왔어요") to what the client said a turn or two earlier. (0, 0) = none.
    context_ngrams: tuple[int, int] = (0, 0)
    context_turns: int = 0

    @property
    def turns_before(self) -> int:
        """How many of the session's turns before a turn this spec reads."""
        return 1 + (self.context_turns if self.context_ngrams[1] > 0 else 0)

    def as_dict(self) -> dict:
        found = {
            "bits": self.bits,
            "text_ngrams": list(self.text_ngrams),
            "previous_ngrams": list(self.previous_ngrams),
        }
        if self.cross_ngrams[1] > 0:  # absent otherwise, so a spec without them reads as before
            found["cross_ngrams"] = list(self.cross_ngrams)
        if self.context_ngrams[1] > 0:
            found["context_ngrams"] = list(self.context_ngrams)
            found["context_turns"] = self.context_turns
        return found

    @classmethod
    def from_dict(cls, data: dict) -> FeatureSpec:
        return cls(
            bits=int(data["bits"]),
            text_ngrams=tuple(int(n) for n in data["text_ngrams"]),
            previous_ngrams=tuple(int(n) for n in data["previous_ngrams"]),
            cross_ngrams=tuple(int(n) for n in data.get("cross_ngrams", (0, 0))),
            context_ngrams=tuple(int(n) for n in data.get("context_ngrams", (0, 0))),
            context_turns=int(data.get("context_turns", 0)),
        )


@dataclass
class TurnInput:
    """What the suggester reads of a turn. ``previous`` is the text of the turn before it in the session,
    ``context`` those of the turns before that one (``turn_input``)."""

    text: str
    stage: str = ""
    nonverbal: Sequence[str] = ()
    previous: str = ""
    context: str = ""


def turn_input(text: str, stage: str, nonverbal: Sequence[str], before: Sequence[str]) -> TurnInput:
    """A turn as the suggester reads it, ``before`` being the texts of the turns before it in its session,
    nearest first (as many as the model reads, ``SuggesterModel.turns_before``; fewer at a session's start).
    The one way a turn's context is put together, at training and at every kind of inference."""
    return TurnInput(text, stage, nonverbal, before[0] if before else "", " ".join(t for t in before[1:] if t))


def session_inputs(turns: Iterable[tuple[str, str, Sequence[str]]], turns_before: int) -> list[TurnInput]:
    """``turn_input`` of a session's (or a window's) turns given in order as (text, stage, cues)."""
    found, texts = [], []
    for text, stage, nonverbal in turns:
        found.append(turn_input(text, stage, nonverbal, texts[: -turns_before - 1 : -1]))
        texts.append(text)
    return found


_WHITESPACE_POINTS = np.array([9, 10, 11, 12, 13, 0x85, 0xA0, 0x3000], dtype=np.uint32)
# Whether a code point is one of them, looked up (points above the last are clipped to a False slot):
# np.isin cost twice as much.
_IS_WHITESPACE = np.zeros(int(_WHITESPACE_POINTS.max()) + 2, dtype=bool)
_IS_WHITESPACE[_WHITESPACE_POINTS] = True


def _points(texts: list[str]) -> np.ndarray:
    """The texts' code points, lower-cased, each text padded by a space on either side (the ``char_wb``
    padding) and followed by a NUL separator; other whitespace becomes a space. Done on the whole batch at
    once: a regular expression or ``split`` per text cost more than all the hashing."""
    joined = " \x00 ".join(texts)
    if joined.count("\x00") >= len(texts):  # a NUL in a text itself (counted: no copy of the batch's text)
        joined = " \x00 ".join(t.replace("\x00", " ") for t in texts)
    points = np.frombuffer((" " + joined + " ").lower().encode("utf-32-le"), dtype=np.uint32).copy()
    points[_IS_WHITESPACE[np.minimum(points, len(_IS_WHITESPACE) - 1)]] = _SPACE
    return points


Block = tuple[np.ndarray, np.ndarray]  # (row, bucket) of one n's n-grams, positions in order: int32, int64


def _ngram_blocks(
    texts: list[str], ngrams: tuple[int, int], salt: int, bits: int, *, across_words: bool = False
) -> Iterator[Block]:
    """(row, bucket) of every n-gram of ``texts``, a block for each n in ``ngrams`` in turn; with
    ``across_words`` n-grams may hold spaces (not two in a row). Rows are int32 and the hashes updated in
    place: at import the model's time went to allocating and filling fresh arrays more than to arithmetic."""
    if not texts:
        return
    chain = _HashChain(_points(texts), bits)
    for n, hashes in chain.by_n(ngrams[1]):
        if n >= ngrams[0]:
            yield chain.block(n, hashes, salt, chain.valid(n, across_words=across_words))


class _HashChain:
    """The polynomial hash of the n-gram at every position of a batch's code points (``_points``), for n = 1,
    2, … in turn, each from the (n-1)-gram's, with what tells which of them are n-grams: one pass gives the
    n-grams within words (the ``char_wb`` kind) and across them, so a batch read both ways is hashed once."""

    def __init__(self, points: np.ndarray, bits: int) -> None:
        self.points = points
        size = len(points)
        self.is_separator = points == _SEPARATOR
        self.separators = np.zeros(size + 1, dtype=np.int32)
        np.cumsum(self.is_separator, out=self.separators[1:])
        self.rows = self.separators[1:]  # a position's row: the separators before it (a separator is in none)
        self.is_space = points == _SPACE
        self.spaces = np.zeros(size + 1, dtype=np.int32)
        np.cumsum(self.is_space, out=self.spaces[1:])
        self.shift = np.uint32(32 - bits)

    def by_n(self, high: int) -> Iterator[tuple[int, np.ndarray]]:
        """(n, the hash at each position that starts n code points) for n = 1 … ``high``; the array is
        updated in place, so each is good until the next is asked for."""
        size = len(self.points)
        hashes = np.zeros(size, dtype=np.uint32)
        with np.errstate(over="ignore"):
            for n in range(1, high + 1):
                count = size - n + 1
                if count <= 0:
                    return
                hashes = hashes[:count]
                np.multiply(hashes, _PRIME, out=hashes)
                np.add(hashes, self.points[n - 1 :], out=hashes)
                yield n, hashes

    def valid(self, n: int, *, across_words: bool) -> np.ndarray:
        """Which positions start an n-gram: within one text, not a run of spaces of the text itself, and
        without ``across_words`` within one word (its padding spaces included)."""
        count = len(self.points) - n + 1
        if n == 1:
            return ~self.is_separator & ~self.is_space
        valid = self.separators[n:] == self.separators[:count]
        if n == 2:  # a run of spaces (in the text itself) is no n-gram
            valid &= ~(self.is_space[:count] & self.is_space[1:])
        elif across_words:
            valid &= ~(self.is_space[n - 2 : n - 2 + count] & self.is_space[n - 1 :])
        else:
            valid &= self.spaces[n - 1 : n - 1 + count] == self.spaces[1 : 1 + count]
        return valid

    def block(self, n: int, hashes: np.ndarray, salt: int, valid: np.ndarray) -> Block:
        """(row, bucket) of the n-grams at the ``valid`` positions, their hashes salted. The positions are
        listed once and taken from both arrays: indexing each by the mask cost three times as much."""
        positions = np.flatnonzero(valid)
        salted = hashes.take(positions)
        with np.errstate(over="ignore"):
            salted ^= np.uint32((salt * 131 + n) & 0xFFFFFFFF)
            salted *= _MIX
        return self.rows.take(positions), np.right_shift(salted, self.shift, dtype=np.int64)


def _joined(blocks: Iterable[Block]) -> tuple[np.ndarray, np.ndarray]:
    blocks = list(blocks)
    if not blocks:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate([r for r, _ in blocks], dtype=np.int64), np.concatenate([b for _, b in blocks])


def _ngram_buckets(
    texts: list[str], ngrams: tuple[int, int], salt: int, bits: int, *, across_words: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``_ngram_blocks`` as one (row, bucket) pair of int64 arrays."""
    return _joined(_ngram_blocks(texts, ngrams, salt, bits, across_words=across_words))


def own_text_blocks(turns: Sequence[TurnInput], spec: FeatureSpec) -> list[Block]:
    """The (row, bucket) blocks of the turns' own text and cues: the first part of ``turn_blocks``. Two specs
    with the same ``bits`` and ``text_ngrams`` give the same blocks (the salt is fixed), which is what lets the
    safety scorer reuse the main vectoriser's."""
    return list(_ngram_blocks(_own_texts(turns), spec.text_ngrams, _SALT_TEXT, spec.bits))


def _own_texts(turns: Sequence[TurnInput]) -> list[str]:
    """What a turn's own n-grams are read from: its text, then its nonverbal cues."""
    return [" ".join((t.text, *t.nonverbal)) if t.nonverbal else t.text for t in turns]


def cross_word_blocks(
    turns: Sequence[TurnInput], spec: FeatureSpec, *, known: Mapping[int, Block] | None = None
) -> dict[int, Block]:
    """The (row, bucket) block of each n of ``spec.cross_ngrams`` (n-grams that may span words) of the turns'
    text, by n; none when the spec reads none. ``known``: blocks already computed for some n by a spec with the
    same ``bits`` (the salt is fixed, so the buckets are the same), reused rather than hashed again: the main
    vectoriser's 4–6-grams are the safety scorer's too."""
    low, high = spec.cross_ngrams
    if high <= 0:
        return {}
    known = known or {}
    missing = [n for n in range(low, high + 1) if n not in known]
    found: dict[int, Block] = {}
    if missing:
        first, last = min(missing), max(missing)
        texts = [t.text for t in turns]
        blocks = _ngram_blocks(texts, (first, last), _SALT_CROSS, spec.bits, across_words=True)
        found = dict(zip(range(first, last + 1), blocks, strict=False))  # none past the longest text
    return {n: block for n in range(low, high + 1) if (block := known.get(n) or found.get(n)) is not None}


def text_blocks(
    turns: Sequence[TurnInput], spec: FeatureSpec, cross_ngrams: tuple[int, int] | None = None
) -> tuple[list[Block], dict[int, Block]]:
    """``own_text_blocks`` and ``cross_word_blocks`` of the same turns — the latter of ``cross_ngrams`` (by
    default the spec's; a wider range serves a second spec with the same bits too, as ``known``) — from one
    hash chain: the n-grams across words of a turn's text are those of its text and cues that end before the
    cues, so hashing the text again for them (and again for the safety scorer's 3-grams) was not needed; it
    was a fifth of the featurising time of a batch of mixed turns. The same blocks, bucket for bucket and in the same order
    (``test_predict_reference``)."""
    low, high = spec.text_ngrams
    cross_low, cross_high = cross_ngrams or spec.cross_ngrams
    if not turns:
        return [], {}
    chain = _HashChain(_points(_own_texts(turns)), spec.bits)
    within_text, text_size = _within_text(chain, turns) if cross_high > 0 else (None, len(chain.points))
    own, cross = [], {}
    for n, hashes in chain.by_n(max(high, cross_high)):
        if low <= n <= high:
            own.append(chain.block(n, hashes, _SALT_TEXT, chain.valid(n, across_words=False)))
        if cross_low <= n <= cross_high and n <= text_size:  # none past the longest text, as there
            valid = chain.valid(n, across_words=True)
            if within_text is not None:
                valid &= within_text[n - 1 :]  # the n-gram's last code point is in the text or its padding
            cross[n] = chain.block(n, hashes, _SALT_CROSS, valid)
    return own, cross


def _within_text(chain: _HashChain, turns: Sequence[TurnInput]) -> tuple[np.ndarray | None, int]:
    """Whether each position of the turns' own texts (``text_blocks``) lies in the turn's text or the padding
    space after it rather than in its cues (``None`` when no turn has cues), and how many code points the
    texts alone would give ``_points``."""
    cued = [row for row, turn in enumerate(turns) if turn.nonverbal]
    if not cued:
        return None, len(chain.points)
    size = len(chain.points)
    ends = np.append(np.flatnonzero(chain.is_separator), size)  # where each row's points end
    starts = np.concatenate(([0], ends[:-1] + 1))
    # the padding space opens the row, the text and a space follow; ``_points`` lower-cases, which lengthens
    # one code point only, U+0130 "İ" (to "i̇"): counted rather than every cued text lowered again
    lengths = [len(text) + text.count("\u0130") for text in (turns[row].text for row in cued)]
    cue_starts = starts[cued] + np.array(lengths, dtype=np.int64) + 2
    depth = np.zeros(size + 1, dtype=np.int32)
    np.add.at(depth, cue_starts, 1)
    np.add.at(depth, ends[cued], -1)
    return np.cumsum(depth[:size]) == 0, size - int((ends[cued] - cue_starts).sum())


def turn_blocks(
    turns: Sequence[TurnInput],
    spec: FeatureSpec,
    *,
    own: list[Block] | None = None,
    cross: Mapping[int, Block] | None = None,
) -> Iterator[Block]:
    """The (row, bucket) blocks of the turns' own text and cues, then of their text across words, then of
    the previous turns' text, then of the context's. ``own``: the first part, already computed
    (``own_text_blocks`` of the same turns with a spec sharing its text n-grams); ``cross``: blocks across words
    already computed by n (``cross_word_blocks`` of a spec with the same bits)."""
    yield from own if own is not None else own_text_blocks(turns, spec)
    yield from cross_word_blocks(turns, spec, known=cross).values()
    if spec.previous_ngrams[1] > 0:
        previous = [t.previous for t in turns]
        yield from _ngram_blocks(previous, spec.previous_ngrams, _SALT_PREVIOUS, spec.bits)
    if spec.context_ngrams[1] > 0:
        context = [t.context for t in turns]
        yield from _ngram_blocks(context, spec.context_ngrams, _SALT_CONTEXT, spec.bits)


def turn_buckets(turns: Sequence[TurnInput], spec: FeatureSpec) -> tuple[np.ndarray, np.ndarray]:
    """(row, bucket) pairs of the turns' own text and cues and of the previous turns' text."""
    return _joined(turn_blocks(turns, spec))


def meta_entries(turns: Sequence[TurnInput]) -> tuple[np.ndarray, np.ndarray]:
    """(row, meta column) of the stage one-hot and the no-words flag."""
    stage_index = {stage: i for i, stage in enumerate(STAGES)}
    rows, columns = [], []
    for row, turn in enumerate(turns):
        column = stage_index.get(turn.stage)
        if column is not None:
            rows.append(row)
            columns.append(column)
        if not turn.text.strip():
            rows.append(row)
            columns.append(len(STAGES))
    return np.array(rows, dtype=np.int64), np.array(columns, dtype=np.int64)


def meta_rows(turns: Sequence[TurnInput]) -> list[np.ndarray]:
    """The rows of each meta column in turn (``meta_entries`` by column): one Python expression per turn
    and column rather than a loop of appends."""
    stage_index = {stage: i for i, stage in enumerate(STAGES)}
    stages = np.fromiter((stage_index.get(t.stage, -1) for t in turns), dtype=np.int8, count=len(turns))
    no_words = np.fromiter((not t.text.strip() for t in turns), dtype=bool, count=len(turns))
    return [np.flatnonzero(stages == i) for i in range(len(STAGES))] + [np.flatnonzero(no_words)]


def rows_to_csr(rows: np.ndarray, columns: np.ndarray, data: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix of (row, column, value) entries, duplicates kept (the product adds them up). Built
    with a stable radix sort of the rows, in blocks of rows that fit 16 bits: scipy's own constructor sorts
    every row's columns as well, which cost more than the hashing."""
    order = np.empty(len(rows), dtype=np.int64)
    if len(rows):
        if shape[0] <= 1 << 16:
            order = np.argsort(rows.astype(np.uint16), kind="stable")
        else:
            order = np.argsort(rows, kind="stable")
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    matrix = sp.csr_matrix((data[order], columns[order], indptr), shape=shape)
    matrix.has_canonical_format = False
    return matrix


class Vectoriser:
    """Buckets → columns (``table``), with the columns' idf; the TF-IDF rows are sublinear in tf and
    L2-normalised, the meta columns appended after."""

    def __init__(self, spec: FeatureSpec, buckets: np.ndarray, idf: np.ndarray) -> None:
        self.spec = spec
        self.buckets = buckets.astype(np.int64)
        self.idf = idf.astype(np.float32)
        # each column's squared weight as the norms add it up (the float32 square, in float64), looked up
        # instead of squared and converted entry by entry
        self.idf_squared = (self.idf * self.idf).astype(np.float64)
        self.table = np.full(1 << spec.bits, -1, dtype=np.int32)
        self.table[self.buckets] = np.arange(len(self.buckets), dtype=np.int32)
        # ``table`` with the buckets not seen in training sent to one more column, whose folded coefficients
        # are zero (``fold``): ``scores`` reads every n-gram and the unseen ones add nothing
        self.slots = np.where(self.table >= 0, self.table, len(self.buckets)).astype(np.int32)

    @property
    def width(self) -> int:
        return len(self.buckets) + META_COLUMNS

    def transform(self, turns: Sequence[TurnInput]) -> sp.csr_matrix:
        return self.tfidf(*self.known(*turn_buckets(turns, self.spec)), turns)

    def known(self, rows: np.ndarray, buckets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) of the buckets seen in training, in their order; the others are dropped."""
        columns = self.table[buckets]
        known = columns >= 0
        return rows[known], columns[known]

    def slotted(self, blocks: Sequence[Block]) -> tuple[np.ndarray, np.ndarray]:
        """(row, slot) of every n-gram of the blocks joined, in their order, as ``scores`` reads them: an
        n-gram seen in training in its column, the others in the zero column after the vocabulary. Nothing
        is filtered: dropping the unseen n-grams (5 % of the main vectoriser's, 20 % of the safety
        scorer's) cost more than carrying them through the product. int32: half the bytes to fill."""
        size = sum(len(buckets) for _, buckets in blocks)
        rows, columns, end = np.empty(size, np.int32), np.empty(size, np.int32), 0
        for block_rows, buckets in blocks:
            start, end = end, end + len(buckets)
            rows[start:end] = block_rows
            self.slots.take(buckets, out=columns[start:end])
        return rows, columns

    def weights(self, rows: np.ndarray, columns: np.ndarray, count: int) -> np.ndarray:
        """Each occurrence weighs its column's idf; a row is divided by the root of the sum of its
        occurrences' squared weights. With every n-gram once in a turn (nearly all of them, in turns this
        short) that is the L2 norm of the TF-IDF row; duplicates are left for the product to add up, so no
        per-row sort is needed (it was the largest single cost)."""
        squares = np.bincount(rows, weights=self.idf_squared.take(columns), minlength=count)
        norms = np.sqrt(np.where(squares > 0, squares, 1.0)).astype(np.float32)
        return self.idf.take(columns) / norms.take(rows)

    def tfidf(self, rows: np.ndarray, columns: np.ndarray, turns: Sequence[TurnInput]) -> sp.csr_matrix:
        """The TF-IDF rows (``weights``) with the meta columns after them, weight 1."""
        count = len(turns)
        data = self.weights(rows, columns, count)
        meta_rows, meta_columns = meta_entries(turns)
        rows = np.concatenate((rows, meta_rows))
        columns = np.concatenate((columns, meta_columns + len(self.buckets)))
        data = np.concatenate((data, np.ones(len(meta_rows), np.float32)))
        return rows_to_csr(rows, columns, data, (count, self.width))

    def fold(self, coef: np.ndarray) -> FoldedCoef:
        """``coef`` (this vectoriser's width × labels) ready for ``scores``."""
        vocabulary = len(self.buckets)
        weighted = np.zeros((vocabulary + 1, coef.shape[1] + 1), dtype=np.float32)  # the last row: ``slots``
        np.multiply(self.idf[:, None], coef[:vocabulary], out=weighted[:vocabulary, :-1])
        np.multiply(self.idf, self.idf, out=weighted[:vocabulary, -1])
        return FoldedCoef(weighted, np.asarray(coef[vocabulary:], dtype=np.float32))

    def scores(
        self,
        rows: np.ndarray,
        columns: np.ndarray,
        turns: Sequence[TurnInput],
        folded: FoldedCoef,
        meta: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """``tfidf(…, turns) @ coef`` without the TF-IDF matrix, given the n-grams' ``slotted`` (row, column)
        pairs and ``fold(coef)``: each occurrence counts 1 against the coefficients with the idf already in
        them and, in the last column, the idf squared, so one sparse product gives each row's weighted sum and
        its squared norm, and the row is divided by the norm afterwards, once per label rather than once per
        occurrence. Then the meta columns (weight 1, not normalised). The same sums in another order: equal to
        the CSR product within float32 rounding (a few 1e-7 in a probability, 1e-5 on a 600-character turn:
        ``test_predict_reference``), in about 30 % less time than weighing every occurrence (three lookups
        each) and multiplying by those weights (the model on 38,000 repository turns: 77,000 → 108,000
        turns/s, one process, best of 5).
        ``meta``: the turns' ``meta_rows``, when the caller has them."""
        count = len(turns)
        ones = np.ones(len(rows), dtype=np.float32)
        entries = sp.coo_matrix((ones, (rows, columns)), shape=(count, len(folded.weighted)))
        sums = np.asarray(entries @ folded.weighted)
        squares = sums[:, -1]
        scores = sums[:, :-1]
        scores /= np.sqrt(np.where(squares > 0, squares, 1.0))[:, None]
        for column, chosen in enumerate(meta if meta is not None else meta_rows(turns)):
            if len(chosen):
                scores[chosen] += folded.meta[column]
        return scores


@dataclass(frozen=True)
class FoldedCoef:
    """A coefficient matrix as ``Vectoriser.scores`` reads it (``Vectoriser.fold``)."""

    weighted: np.ndarray  # (vocabulary + 1) × (labels + 1): idf × coefficient, then idf², a zero row last
    meta: np.ndarray  # META_COLUMNS × labels


def fit_vectoriser(turns: Sequence[TurnInput], spec: FeatureSpec, *, min_df: int = 2, max_features: int) -> Vectoriser:
    """The vocabulary (buckets in at least ``min_df`` turns, the ``max_features`` most frequent) and the
    smoothed idf of scikit-learn's ``TfidfTransformer`` (ln((1 + n) / (1 + df)) + 1)."""
    rows, buckets = turn_buckets(turns, spec)
    pairs = np.unique(rows * (1 << spec.bits) + buckets)
    df = np.bincount(pairs & ((1 << spec.bits) - 1), minlength=1 << spec.bits)
    candidates = np.flatnonzero(df >= min_df)
    if len(candidates) > max_features:
        # The most frequent; ties by bucket number, so the choice is deterministic.
        order = np.lexsort((candidates, -df[candidates]))[:max_features]
        candidates = np.sort(candidates[order])
    idf = np.log((1 + len(turns)) / (1 + df[candidates])) + 1.0
    return Vectoriser(spec, candidates, idf)
