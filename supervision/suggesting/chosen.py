"""The suggested labels alone, for the callers that store or read only those: the import (the labels and
their probabilities, CONTRACT §9) and the trajectory audit of unlabelled windows (the labels).

``SuggesterModel.predict`` also ranks every turn's runners-up (a partition and a sort of each row, rounding
and a list of every probability): two thirds of its time on 25,600 turns (0.58 s CPU against 0.16 s for the
features and 0.04 s for the products), and nobody here reads them. This takes the same steps through the
model's public parts — its vectoriser, each axis's probabilities, thresholds and ``min_labels`` — and stops
at the labels. Which labels a turn gets is the model's rule, so the tests hold this to ``predict`` turn for
turn (labels and probabilities) on the repository's windows: a change of rule in the model fails them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .engine.features import TurnInput
from .engine.model import AXIS_OF_SPEAKER, SuggesterModel

Chosen = tuple[list[str], list[tuple[str, float]]]
_NOTHING: Chosen = ([], [])


def chosen_labels(
    model: SuggesterModel, turns: Sequence[TurnInput], speakers: Sequence[str], *, probabilities: bool = True
) -> list[Chosen]:
    """Per turn: (the suggested labels in the model's order, [(label, probability rounded to 4), …] of those
    labels — empty when ``probabilities`` is false). A speaker with no axis gets nothing (a shared empty
    pair: not to be changed in place)."""
    result: list[Chosen] = [_NOTHING] * len(turns)
    if not turns:
        return result
    matrix = model.vectoriser.transform(turns)
    speaker_of = np.asarray(speakers)
    for speaker, axis_name in AXIS_OF_SPEAKER.items():
        rows = np.flatnonzero(speaker_of == speaker)
        if not len(rows):
            continue
        axis = model.axes[axis_name]
        p = axis.probabilities(matrix[rows])
        chosen = p >= axis.thresholds
        if axis.min_labels:
            has_words = np.fromiter((bool(turns[r].text.strip()) for r in rows), dtype=bool, count=len(rows))
            empty = has_words & ~chosen.any(axis=1)
            chosen[np.flatnonzero(empty), p[empty].argmax(axis=1)] = True
        picked_rows, picked_columns = np.nonzero(chosen)  # row by row, columns ascending: the model's order
        ends = np.cumsum(np.bincount(picked_rows, minlength=len(rows))).tolist()
        picked = picked_columns.tolist()
        shown = np.round(p[picked_rows, picked_columns].astype(np.float64), 4).tolist() if probabilities else None
        names = axis.labels
        start = 0
        for i, row in enumerate(rows.tolist()):
            end = ends[i]
            codes = [names[j] for j in picked[start:end]]
            result[row] = (codes, list(zip(codes, shown[start:end], strict=True)) if probabilities else [])
            start = end
    return result
