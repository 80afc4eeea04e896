"""What a window says, as the verdict layer reads it: the words of its turns, apart from any rule.

Each turn becomes a character n-gram TF-IDF row, the label suggester's own featuriser (``suggesting.engine
.features``: hashed ``char_wb`` n-grams, NumPy on whole batches, about 4 µs a turn); a window is four means of
those rows — the client's turns in its early half and in its late half, the counselor's likewise — and a
multinomial logistic regression reads the four side by side. The halves are where the trajectory is: the
client's late words against the early ones, the counselor's answers as the window goes on.

Why words as well as the engine's evidence: over the hand-written window files, left out one writer at a time,
this reading alone scored 0.99 macro-F1 against the engine's 0.81 and the evidence model's 0.95 (table in
``benchmarks/trajectory/README.md``); the engine's word lists and label weights are a few hundred hand-picked
cues, this reads every n-gram the writers used. Fitted by ``benchmarks/fit_audit_layer.py``; the arrays live
in an ``.npz`` read without pickle, named with its SHA-256 in ``layer.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import scipy.sparse as sp

from supervision.suggesting.engine.features import FeatureSpec, FoldedCoef, TurnInput, Vectoriser, turn_blocks

# A window's words, per speaker, in order: (client texts, counselor texts).
WindowTexts = tuple[Sequence[str], Sequence[str]]
T = TypeVar("T")


def halves(items: Sequence[T]) -> tuple[Sequence[T], Sequence[T]]:
    """Early and late half of one speaker's turns (their texts, their labels); the late half takes the middle
    turn, as the engine's persistence does (``states[len // 2:]``)."""
    half = len(items) // 2
    return items[:half], items[half:]


Pooling = tuple[np.ndarray, np.ndarray, np.ndarray]  # window rows, distinct-text columns, weights (1 / count)


def _pooled(windows: Sequence[WindowTexts], speaker: int) -> tuple[list[str], tuple[Pooling, Pooling]]:
    """One speaker's distinct texts in the windows, and per half the entries of the (windows x texts) matrix
    that takes the mean of the half's turns. A text that comes back in several windows (windows cut with an
    overlap) is one column."""
    unique: dict[str, int] = {}
    rows: tuple[list[int], list[int]] = ([], [])
    columns: tuple[list[int], list[int]] = ([], [])
    weights: tuple[list[float], list[float]] = ([], [])
    for w, texts in enumerate(windows):
        for part, chunk in enumerate(halves(texts[speaker])):
            for text in chunk:
                rows[part].append(w)
                columns[part].append(unique.setdefault(text, len(unique)))
                weights[part].append(1.0 / len(chunk))
    entries = tuple(
        (np.array(rows[part], dtype=np.int64), np.array(columns[part], dtype=np.int64), np.array(weights[part]))
        for part in (0, 1)
    )
    return list(unique), entries


def _mean(entries: Pooling, windows: int, texts: int) -> sp.csr_matrix:
    rows, columns, weights = entries
    return sp.csr_matrix((weights, (rows, columns)), shape=(windows, texts))


def window_text_matrix(client: Vectoriser, counselor: Vectoriser, windows: Sequence[WindowTexts]) -> sp.csr_matrix:
    """One row per window: the mean TF-IDF row of the client's early and late half, then the counselor's, side
    by side (zeros for an empty half); what the text model is fitted on."""
    blocks = []
    for speaker, vectoriser in enumerate((client, counselor)):
        texts, entries = _pooled(windows, speaker)
        turns = vectoriser.transform([TurnInput(text) for text in texts])
        blocks += [_mean(part, len(windows), len(texts)) @ turns for part in entries]
    return sp.hstack(blocks, format="csr")


@dataclass(frozen=True)
class WindowTextModel:
    client: Vectoriser
    counselor: Vectoriser
    coef: np.ndarray  # classes x (4 x vectoriser width), in the order of the layer's classes
    intercept: np.ndarray
    # per speaker, its two halves' coefficients side by side, folded for ``Vectoriser.scores``
    folded: tuple[FoldedCoef, FoldedCoef] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        folded, start = [], 0
        for vectoriser in (self.client, self.counselor):
            width = vectoriser.width
            halves_coef = np.hstack(
                [self.coef[:, start + part * width : start + (part + 1) * width].T for part in (0, 1)]
            )
            folded.append(vectoriser.fold(halves_coef))
            start += 2 * width
        object.__setattr__(self, "folded", tuple(folded))

    def probabilities(self, windows: Sequence[WindowTexts]) -> np.ndarray:
        """softmax(window_text_matrix(...) @ coef.T + intercept), computed the short way: the model is linear
        and a part is a mean, so each distinct turn is scored under its speaker's two halves' coefficients
        (one sparse product per speaker) and a window's score is the mean of its parts' turn scores. Building
        the windows' wide rows had cost as much as the rest of the layer in the stored sessions' audit, where
        every turn is in two windows. The turns' scores come from the suggester's fast path
        (``Vectoriser.scores``: no TF-IDF matrix built), equal to the matrix product within float32
        rounding; building the matrices was two fifths of this model's time (4,000 windows in one process: 0.49
        → 0.28 s of about 5)."""
        classes = len(self.intercept)
        z = np.tile(self.intercept, (len(windows), 1))
        for speaker, vectoriser in enumerate((self.client, self.counselor)):
            texts, entries = _pooled(windows, speaker)
            if texts:
                turns = [TurnInput(text) for text in texts]
                rows, columns = vectoriser.slotted(list(turn_blocks(turns, vectoriser.spec)))
                scores = vectoriser.scores(rows, columns, turns, self.folded[speaker]).astype(np.float64)
                for part, pooling in enumerate(entries):
                    z += _mean(pooling, len(windows), len(texts)) @ scores[:, part * classes : (part + 1) * classes]
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


def text_model_from_arrays(spec: FeatureSpec, arrays: dict[str, np.ndarray]) -> WindowTextModel:
    client = Vectoriser(spec, arrays["client_buckets"], arrays["client_idf"])
    counselor = Vectoriser(spec, arrays["counselor_buckets"], arrays["counselor_idf"])
    model = WindowTextModel(
        client, counselor, arrays["coef"].astype(np.float64), arrays["intercept"].astype(np.float64)
    )
    width = 2 * client.width + 2 * counselor.width
    if model.coef.ndim != 2 or model.coef.shape[1] != width or model.intercept.shape != (model.coef.shape[0],):
        raise ValueError(f"coefficients {model.coef.shape} do not fit {width} columns")
    return model
