"""The OLD scoring code, kept verbatim as an oracle for tests only (test_scoring_oracle.py): the figures of
CONTRACT §7 by scikit-learn per label and the ``krippendorff`` package on value counts built turn by turn, as
the portal computed them before scoring.py counted everything at once (issue 35). The portal must give
exactly these figures, float for float; never import this module outside tests."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import krippendorff
import numpy as np
from scipy import sparse

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


def _metrics():
    """scikit-learn's metrics module, imported on first use: the admin imports this module at every start of
    the project (each management command, each web worker) and the import costs about a second."""
    from sklearn import metrics

    return metrics


@contextmanager
def _quiet():
    """scikit-learn warns about the cases §7 defines (κ undefined, a class one side never used): the
    figures already say so with null and 0."""
    from sklearn.exceptions import UndefinedMetricWarning

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _kappa(reference: np.ndarray, rater: np.ndarray, labels: Sequence) -> float | None:
    """Cohen's κ, ``None`` when undefined (expected agreement 1: both sides constant and equal)."""
    with _quiet():
        return _round(_metrics().cohen_kappa_score(reference, rater, labels=labels, replace_undefined_by=np.nan))


# The four (reference, rater) presence pairs; weighted by a label's 2×2 counts they are exactly its two
# presence vectors, so scikit-learn computes κ from four weighted samples instead of every turn.
_PAIRS_REFERENCE = np.array([0, 0, 1, 1])
_PAIRS_RATER = np.array([0, 1, 0, 1])


def _kappa_of_cells(cells: np.ndarray) -> float | None:
    with _quiet():
        value = _metrics().cohen_kappa_score(
            _PAIRS_REFERENCE,
            _PAIRS_RATER,
            labels=[0, 1],
            sample_weight=cells.ravel(),
            replace_undefined_by=np.nan,
        )
    return _round(value)


def _common(reference: Mapping, rater: Mapping, order: Mapping[Hashable, tuple] | None) -> list:
    turns = reference.keys() & rater.keys()
    return sorted(turns, key=order.__getitem__) if order is not None else sorted(turns)


def multi_label_axis(reference: Mapping, rater: Mapping, axis: str, order=None) -> dict:
    turns = _common(reference, rater, order)
    if not turns:
        return {"turns": 0, "micro_f1": None, "macro_f1": None, "kappa": None, "labels": {}}
    labels = _ordered(set().union(*(reference[t] | rater[t] for t in turns)), axis)
    if not labels:
        # Both sides said "none of these" on every turn: no label to score; F1 is 0 by definition.
        return {"turns": len(turns), "micro_f1": 0.0, "macro_f1": None, "kappa": None, "labels": {}}
    column = {label: j for j, label in enumerate(labels)}
    # A one-column matrix is not multi-label to scikit-learn: an all-zero column keeps it one (it adds
    # nothing to the summed TP, FP, FN and is dropped from the per-label figures).
    width = max(len(labels), 2)
    ref, rat = _indicators(turns, reference, column, width), _indicators(turns, rater, column, width)
    with _quiet():
        precision, recall, f1, support = _metrics().precision_recall_fscore_support(
            ref, rat, average=None, zero_division=0
        )
        micro = _metrics().f1_score(ref, rat, average="micro", zero_division=0)
        cells = _metrics().multilabel_confusion_matrix(ref, rat)  # per label [[TN, FP], [FN, TP]]
    kappas = [_kappa_of_cells(cell) for cell in cells[: len(labels)]]
    defined = [k for k in kappas if k is not None]
    return {
        "turns": len(turns),
        "micro_f1": _round(micro),
        "macro_f1": _round(np.mean(f1[: len(labels)])),
        "kappa": _round(np.mean(defined)) if defined else None,
        "labels": {
            label: {
                "precision": _round(precision[j]),
                "recall": _round(recall[j]),
                "f1": _round(f1[j]),
                "support": int(support[j]),
                "kappa": kappas[j],
            }
            for j, label in enumerate(labels)
        },
    }


def _indicators(turns: list, ratings: Mapping, column: Mapping[str, int], width: int) -> sparse.csr_matrix:
    """Turns × labels, 1 where the source has the label on the turn (an unrated turn has none). Sparse:
    scikit-learn checks a dense multi-label matrix column by column, ten times slower at 100,000 turns."""
    rows, cols = [], []
    for i, turn in enumerate(turns):
        for label in ratings.get(turn, ()):
            rows.append(i)
            cols.append(column[label])
    data = np.ones(len(rows), dtype=np.int8)
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(turns), width), dtype=np.int8)


def single_valued_axis(reference: Mapping, rater: Mapping, axis: str, order=None) -> dict:
    turns = _common(reference, rater, order)
    if not turns:
        return {"turns": 0, "accuracy": None, "macro_f1": None, "kappa": None, "confusion": {}}
    ref_values = [reference[t] for t in turns]
    rat_values = [rater[t] for t in turns]
    classes = _ordered(set(ref_values) | set(rat_values), axis)
    # Integer codes: scikit-learn sorts string labels itself, slowly, and in its own order.
    index = {value: i for i, value in enumerate(classes)}
    ref = np.fromiter((index[v] for v in ref_values), dtype=np.int16, count=len(turns))
    rat = np.fromiter((index[v] for v in rat_values), dtype=np.int16, count=len(turns))
    ids = list(range(len(classes)))
    with _quiet():
        matrix = _metrics().confusion_matrix(ref, rat, labels=ids)
        accuracy = _metrics().accuracy_score(ref, rat)
        macro = _metrics().f1_score(ref, rat, labels=ids, average="macro", zero_division=0)
    return {
        "turns": len(turns),
        "accuracy": _round(accuracy),
        "macro_f1": _round(macro),
        "kappa": _kappa(ref, rat, labels=ids),
        "confusion": {
            classes[i]: {classes[j]: int(matrix[i, j]) for j in ids if matrix[i, j]} for i in ids if matrix[i].any()
        },
    }


def safety_block(reference: Mapping, rater: Mapping, names: Mapping[Hashable, str], order=None) -> dict:
    """Each (client turn, safety-critical state) of the reference on turns both rated for client states."""
    critical = catalogue.SAFETY_CRITICAL_STATES
    support = found = 0
    missed = []
    for turn in _common(reference, rater, order):
        flagged = reference[turn] & critical
        for state in _ordered(flagged, CLIENT_STATES) if flagged else ():
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
    counts: dict[Hashable, int] = {}
    for ratings in per_source:
        for turn in ratings:
            counts[turn] = counts.get(turn, 0) + 1
    turns = sorted(t for t, n in counts.items() if n >= min_sources)
    raters = sum(1 for ratings in per_source if any(t in ratings for t in turns))
    result = {"sources": raters, "turns": len(turns), "alpha": None}
    if not turns or raters < min_sources:
        return result
    if axis in MULTI_LABEL_AXES:
        labels = _ordered(set().union(*(r[t] for r in per_source for t in turns if t in r)), axis)
        if not labels:
            return result
        column = {label: j for j, label in enumerate(labels)}
        present = np.zeros((len(turns), len(labels)), dtype=np.int64)
        rated = np.zeros(len(turns), dtype=np.int64)
        for ratings in per_source:
            mask = np.fromiter((t in ratings for t in turns), dtype=bool, count=len(turns))
            rated += mask
            present += _indicators(turns, ratings, column, len(labels)).toarray()
        absent = rated[:, None] - present
        value_counts = np.stack([absent.ravel(), present.ravel()], axis=1)
    else:
        classes = _ordered({r[t] for r in per_source for t in turns if t in r}, axis)
        index = {value: i for i, value in enumerate(classes)}
        value_counts = np.zeros((len(turns), len(classes)), dtype=np.int64)
        for ratings in per_source:
            for i, turn in enumerate(turns):
                if turn in ratings:
                    value_counts[i, index[ratings[turn]]] += 1
    if (value_counts.sum(axis=0) > 0).sum() < 2:
        return result  # one value throughout: α is undefined
    with _quiet():
        alpha = krippendorff.alpha(value_counts=value_counts, level_of_measurement="nominal")
    result["alpha"] = _round(alpha)
    return result
