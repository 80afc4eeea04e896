"""What a window says, as the verdict layer reads it: the words of its turns, apart from any rule.

Each turn becomes a character n-gram TF-IDF row, the label suggester's own featuriser (``suggesting.engine
.features``: hashed ``char_wb`` n-grams, NumPy on whole batches, about 4 µs a turn); a window is four means of
those rows — the client's turns in its early half and in its late half, the counselor's likewise — and a
multinomial logistic regression reads the four side by side. The halves are where the trajectory is: the
client's late words against the early ones, the counselor's answers as the window goes on.

Why words as well as the engine's evidence: over the hand-written window files, left out one writer at a time,
this reading alone scored 0.99 macro-F1 against the engine's 0.83 and the evidence layer's 0.95 (table in
``benchmarks/trajectory/README.md``); the engine's word lists and label weights are a few hundred hand-picked
cues, this reads every n-gram the writers used. Fitted by ``benchmarks/fit_audit_layer.py``; the arrays live
in an ``.npz`` read without pickle, named with its SHA-256 in ``layer.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import scipy.sparse as sp

from supervision.suggesting.engine.features import FeatureSpec, TurnInput, Vectoriser

# A window's words, per speaker, in order: (client texts, counselor texts).
WindowTexts = tuple[Sequence[str], Sequence[str]]
PARTS = ("client_early", "client_late", "counselor_early", "counselor_late")
T = TypeVar("T")


def halves(items: Sequence[T]) -> tuple[Sequence[T], Sequence[T]]:
    """Early and late half of one speaker's turns (their texts, their labels); the late half takes the middle
    turn, as the engine's persistence does (``states[len // 2:]``)."""
    half = len(items) // 2
    return items[:half], items[half:]


def window_text_matrix(client: Vectoriser, counselor: Vectoriser, windows: Sequence[WindowTexts]) -> sp.csr_matrix:
    """One row per window: the mean TF-IDF row of each part (``PARTS``), side by side (zeros for an empty
    part). A text that comes back in several windows (windows cut with an overlap) is featurised once."""
    blocks = []
    for speaker, vectoriser in enumerate((client, counselor)):
        unique: dict[str, int] = {}
        # per half: the entries of a (windows x distinct texts) matrix of 1 / the half's turn count
        rows: tuple[list[int], list[int]] = ([], [])
        columns: tuple[list[int], list[int]] = ([], [])
        weights: tuple[list[float], list[float]] = ([], [])
        for w, texts in enumerate(windows):
            for part, chunk in enumerate(halves(texts[speaker])):
                for text in chunk:
                    rows[part].append(w)
                    columns[part].append(unique.setdefault(text, len(unique)))
                    weights[part].append(1.0 / len(chunk))
        turns = vectoriser.transform([TurnInput(text) for text in unique])
        for part in (0, 1):
            mean = sp.csr_matrix((weights[part], (rows[part], columns[part])), shape=(len(windows), len(unique)))
            blocks.append(mean @ turns)
    return sp.hstack(blocks, format="csr")


@dataclass(frozen=True)
class WindowTextModel:
    client: Vectoriser
    counselor: Vectoriser
    coef: np.ndarray  # classes x (4 x vectoriser width), in the order of the layer's classes
    intercept: np.ndarray

    def probabilities(self, windows: Sequence[WindowTexts]) -> np.ndarray:
        z = np.asarray(window_text_matrix(self.client, self.counselor, windows) @ self.coef.T) + self.intercept
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
