"""The figures of CONTRACT §7, from two sources' labels: pure Python on NumPy arrays, no database.

A source is a ``Ratings``: per axis, the turns it rated on that axis and what it said. The definitions are
the contract's, word for word. Precision, recall, F1, accuracy and Cohen's κ are scikit-learn's formulas
worked out on counts of the distinct (reference, rater) answers, α is the ``krippendorff`` package's on
value counts built with NumPy; every figure is the same double those packages gave (test_scoring_oracle.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from taxonomy import catalogue

TECHNIQUES, CLIENT_STATES, STAGE, DIALOG_ACT = "techniques", "client_states", "stage", "dialog_act"
MULTI_LABEL_AXES = (TECHNIQUES, CLIENT_STATES)
SINGLE_VALUED_AXES = (STAGE, DIALOG_ACT)
AXES = (*MULTI_LABEL_AXES, *SINGLE_VALUED_AXES)
# §7: a missing or JSON-null dialog act is scored as this class (it is not an act: "null" is one).
NO_ACT = "none"
DECIMALS = 4

# Label order in the output: the taxonomy document's (unknown values, which the readers refuse, last).
_ORDER = {
    TECHNIQUES: catalogue.TECHNIQUE_CODES,
    CLIENT_STATES: catalogue.CLIENT_STATE_CODES,
    STAGE: catalogue.STAGE_CODES,
    DIALOG_ACT: (*catalogue.DIALOG_ACT_CODES, NO_ACT),
}


@dataclass
class Ratings:
    """One source's labels. Each axis maps the turns it rated on that axis to its answer: a set of codes
    on the multi-label axes, one class on the single-valued ones (``NO_ACT`` for a missing act). A turn
    missing from an axis was not rated on it."""

    techniques: dict[Hashable, frozenset[str]] = field(default_factory=dict)
    client_states: dict[Hashable, frozenset[str]] = field(default_factory=dict)
    stage: dict[Hashable, str] = field(default_factory=dict)
    dialog_act: dict[Hashable, str] = field(default_factory=dict)

    def axis(self, name: str) -> dict:
        return getattr(self, name)

    def rated_turns(self) -> set:
        return set().union(*(self.axis(name).keys() for name in AXES))


def _round(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), DECIMALS)


def label_rank(axis: str, label: str) -> int:
    """A label's place in the taxonomy document's order (for lists grouped by label)."""
    order = _ORDER[axis]
    return order.index(label) if label in order else len(order)


def _ordered(values: Iterable[str], axis: str) -> list[str]:
    values = set(values)
    known = [code for code in _ORDER[axis] if code in values]
    return known + sorted(values - set(known))


def _counted_pairs(reference: Mapping, rater: Mapping) -> tuple[set, Counter]:
    """The turns both sources rated, and how many of them got each (reference, rater) pair of answers.

    Every figure of an axis is a function of these counts: a source repeats a few hundred answers over
    100,000 turns (and equal frozensets hash alike), so the figures are worked out per distinct pair
    instead of per turn. ``map`` and ``Counter`` keep the pass over the turns in C."""
    turns = reference.keys() & rater.keys()
    return turns, Counter(zip(map(reference.__getitem__, turns), map(rater.__getitem__, turns), strict=True))


# The figures below are scikit-learn's (1.9) formulas, written out on the counts with the same float
# operations in the same order, so every figure is the same double it gave (test_scoring_oracle.py checks
# it against the old code on random fixtures, unrounded): scikit-learn itself checked and encoded its
# inputs per call (2.2 s of a report's first view for a run of 100,000 turns, cProfile).


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator as float64, 0 where the denominator is 0 (§7; ``zero_division=0``)."""
    numerator, denominator = np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


def _f1(tp: np.ndarray, true_sum: np.ndarray, pred_sum: np.ndarray) -> np.ndarray:
    """2·TP / (2·TP + FP + FN), written as scikit-learn does: 2·TP / (true + predicted)."""
    return _divide(2.0 * np.asarray(tp, dtype=np.float64), 1.0 * np.asarray(true_sum, dtype=np.float64) + pred_sum)


def _cohen_kappa(confusion: np.ndarray) -> float:
    """Cohen's κ of a confusion matrix (reference rows, rater columns), NaN when undefined (expected
    disagreement 0: both sides constant and equal): ``cohen_kappa_score``'s arithmetic."""
    confusion = confusion.astype(np.float64)
    sum0, sum1 = np.sum(confusion, axis=0), np.sum(confusion, axis=1)
    total = np.sum(sum0)
    if total == 0:
        return math.nan
    expected = np.outer(sum0, sum1) / total
    weights = np.ones(confusion.shape, dtype=np.float64)
    np.fill_diagonal(weights, 0)
    disagreement = np.sum(weights * expected)
    if disagreement == 0:
        return math.nan
    return float(1 - np.sum(weights * confusion) / disagreement)


def _kappa(confusion: np.ndarray) -> float | None:
    """Cohen's κ, ``None`` when undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _round(_cohen_kappa(confusion))


def multi_label_axis(reference: Mapping, rater: Mapping, axis: str, order=None) -> dict:
    turns, pairs = _counted_pairs(reference, rater)
    if not turns:
        return {"turns": 0, "micro_f1": None, "macro_f1": None, "kappa": None, "labels": {}}
    labels = _ordered(set().union(*(ours | theirs for ours, theirs in pairs)), axis)
    if not labels:
        # Both sides said "none of these" on every turn: no label to score; F1 is 0 by definition.
        return {"turns": len(turns), "micro_f1": 0.0, "macro_f1": None, "kappa": None, "labels": {}}
    column = {label: j for j, label in enumerate(labels)}
    tp, true_sum, pred_sum = ([0] * len(labels) for _ in range(3))
    for (ours, theirs), count in pairs.items():
        for label in ours:
            true_sum[column[label]] += count
        for label in theirs:
            pred_sum[column[label]] += count
        for label in ours & theirs:
            tp[column[label]] += count
    tp, true_sum, pred_sum = (np.array(v, dtype=np.int64) for v in (tp, true_sum, pred_sum))
    precision, recall, f1 = _divide(tp, pred_sum), _divide(tp, true_sum), _f1(tp, true_sum, pred_sum)
    micro = _f1(tp.sum(keepdims=True), true_sum.sum(keepdims=True), pred_sum.sum(keepdims=True))[0]
    # Per label the 2×2 table [[TN, FP], [FN, TP]] of its presence on the turns.
    fp, fn = pred_sum - tp, true_sum - tp
    tn = len(turns) - tp - fp - fn
    kappas = [_kappa(np.array([[tn[j], fp[j]], [fn[j], tp[j]]], dtype=np.int64)) for j in range(len(labels))]
    defined = [k for k in kappas if k is not None]
    return {
        "turns": len(turns),
        "micro_f1": _round(micro),
        "macro_f1": _round(np.mean(f1)),
        "kappa": _round(np.mean(defined)) if defined else None,
        "labels": {
            label: {
                "precision": _round(precision[j]),
                "recall": _round(recall[j]),
                "f1": _round(f1[j]),
                "support": int(true_sum[j]),
                "kappa": kappas[j],
            }
            for j, label in enumerate(labels)
        },
    }


def single_valued_axis(reference: Mapping, rater: Mapping, axis: str, order=None) -> dict:
    turns, pairs = _counted_pairs(reference, rater)
    if not turns:
        return {"turns": 0, "accuracy": None, "macro_f1": None, "kappa": None, "confusion": {}}
    classes = _ordered({value for pair in pairs for value in pair}, axis)
    index = {value: i for i, value in enumerate(classes)}
    matrix = np.zeros((len(classes), len(classes)), dtype=np.int64)
    for (ours, theirs), count in pairs.items():
        matrix[index[ours], index[theirs]] = count
    tp = np.diagonal(matrix)
    ids = range(len(classes))
    return {
        "turns": len(turns),
        "accuracy": _round(int(tp.sum()) / len(turns)),
        "macro_f1": _round(np.mean(_f1(tp, matrix.sum(axis=1), matrix.sum(axis=0)))),
        "kappa": _kappa(matrix),
        "confusion": {
            classes[i]: {classes[j]: int(matrix[i, j]) for j in ids if matrix[i, j]} for i in ids if matrix[i].any()
        },
    }


def safety_block(reference: Mapping, rater: Mapping, names: Mapping[Hashable, str], order=None) -> dict:
    """Each (client turn, safety-critical state) of the reference on turns both rated for client states."""
    critical = catalogue.SAFETY_CRITICAL_STATES
    support = found = 0
    missed = []
    # Only the turns with a safety-critical state are put in transcript order: a stable sort of them, in the
    # order the turns come from the set, keeps equal keys as sorting every turn would.
    flagged = [turn for turn in reference.keys() & rater.keys() if not critical.isdisjoint(reference[turn])]
    for turn in sorted(flagged, key=order.__getitem__) if order is not None else sorted(flagged):
        for state in _ordered(reference[turn] & critical, CLIENT_STATES):
            support += 1
            if state in rater[turn]:
                found += 1
            else:
                missed.append({"utterance_id": names[turn], "state": state})
    return {
        "support": support,
        "found": found,
        "recall": _round(found / support) if support else None,
        "missed": missed,
    }


def agreement(
    reference: Ratings,
    rater: Ratings,
    *,
    names: Mapping[Hashable, str],
    order: Mapping[Hashable, tuple] | None = None,
) -> dict:
    """The ``turns``, ``axes`` and ``safety`` of the §7 JSON (the caller adds ``rater`` and ``against``).

    ``names`` gives each turn's utterance id; ``order`` (turn → sortable key) puts the missed safety states
    in transcript order.
    """
    axes = {}
    for axis in MULTI_LABEL_AXES:
        axes[axis] = multi_label_axis(reference.axis(axis), rater.axis(axis), axis, order)
    for axis in SINGLE_VALUED_AXES:
        axes[axis] = single_valued_axis(reference.axis(axis), rater.axis(axis), axis, order)
    both = set().union(*(reference.axis(a).keys() & rater.axis(a).keys() for a in AXES))
    return {
        "turns": len(both),
        "axes": axes,
        "safety": safety_block(reference.client_states, rater.client_states, names, order),
    }


def krippendorff_alpha(sources: Sequence[Ratings], axis: str, *, min_sources: int = 3) -> dict:
    """Krippendorff's α (nominal) per axis over the turns that ``min_sources`` or more sources rated.

    On a multi-label axis each (turn, label) is a unit valued present/absent, for the labels any source
    used on those turns. ``{"sources": n, "turns": n, "alpha": x}``; ``alpha`` is ``None`` below
    ``min_sources`` sources or when α is undefined (a single value throughout).
    """
    per_source = [source.axis(axis) for source in sources]
    counts = Counter(chain.from_iterable(per_source))
    turns = sorted(t for t, n in counts.items() if n >= min_sources)
    raters = sum(1 for ratings in per_source if not ratings.keys().isdisjoint(turns))
    result = {"sources": raters, "turns": len(turns), "alpha": None}
    if not turns or raters < min_sources:
        return result
    # Each source's answers on the units' turns, as indexes into its distinct answers (-1: not rated).
    answers = []
    for ratings in per_source:
        said = list(map(ratings.get, turns))
        distinct = {value: i for i, value in enumerate(set(said) - {None})}
        distinct[None] = -1
        answers.append((list(distinct)[:-1], np.fromiter(map(distinct.__getitem__, said), np.intp, len(said))))
    if axis in MULTI_LABEL_AXES:
        labels = _ordered(set().union(*(value for values, _ in answers for value in values)), axis)
        if not labels:
            return result
        column = {label: j for j, label in enumerate(labels)}
        present = np.zeros((len(turns), len(labels)), dtype=np.int64)
        rated = np.zeros(len(turns), dtype=np.int64)
        for values, which in answers:
            # One row of presence per distinct answer, and a last one of zeros that index -1 picks.
            table = np.zeros((len(values) + 1, len(labels)), dtype=np.int64)
            for i, value in enumerate(values):
                table[i, [column[label] for label in value]] = 1
            present += table[which]
            rated += which >= 0
        absent = rated[:, None] - present
        value_counts = np.stack([absent.ravel(), present.ravel()], axis=1)
    else:
        classes = _ordered({value for values, _ in answers for value in values}, axis)
        index = {value: i for i, value in enumerate(classes)}
        cells = [
            np.flatnonzero(which >= 0) * len(classes)
            + np.array([index[v] for v in values], dtype=np.intp)[which[which >= 0]]
            for values, which in answers
        ]
        value_counts = np.bincount(np.concatenate(cells), minlength=len(turns) * len(classes)).astype(np.int64)
        value_counts = value_counts.reshape(len(turns), len(classes))
    if (value_counts.sum(axis=0) > 0).sum() < 2:
        return result  # one value throughout: α is undefined
    result["alpha"] = _round(_nominal_alpha(value_counts))
    return result


def _nominal_alpha(value_counts: np.ndarray) -> float:
    """Krippendorff's nominal α of value counts (units × values, every unit pairable): the ``krippendorff``
    package's ``alpha(value_counts=…, level_of_measurement="nominal")`` (0.9.0), the same double.

    The package builds a values × values array for every unit (a million units × 2 × 2 for a multi-label axis
    of 50,000 turns: 0.3 s an axis). Here each cell of the coincidence matrix sums only its units' non-zero
    terms — adding a zero changes no sum — in unit order and one after the other (``cumsum``), as the
    package's sum along its first axis does; a pairwise ``np.sum`` would round differently."""
    values = value_counts.shape[1]
    pairable = np.maximum(value_counts.sum(axis=1), 2) - 1
    # When every unit's divisor is a power of two (three sources on every turn: 2), every term and every
    # partial sum is a multiple of 1/scale small enough to be exact, so the package's sum is the exact one,
    # counted here in integers: one product and one dot per cell instead of the terms one by one.
    scale = int(pairable.max())
    exact = not (pairable & (pairable - 1)).any()
    o = np.zeros((values, values), dtype=np.float64)
    for c in range(values):
        for k in range(c, values):
            pairs = value_counts[:, c] * value_counts[:, k]
            if c == k:
                pairs = pairs - value_counts[:, c]
            total = int(np.dot(pairs, scale // pairable)) if exact else 2**53
            if total < 2**53:
                o[c, k] = o[k, c] = total / scale
            else:
                units = np.flatnonzero(pairs)
                o[c, k] = o[k, c] = np.cumsum(pairs[units] / pairable[units])[-1] if units.size else 0.0
    n_v = o.sum(axis=0)
    e = np.divide(np.outer(n_v, n_v) - np.diagflat(n_v), n_v.sum() - 1, dtype=np.float64)
    d = (np.arange(values)[:, np.newaxis] != np.arange(values)[np.newaxis, :]).astype(np.float64)
    return float(1 - (o * d).sum() / (e * d).sum())
