"""The verdict layer: the engine's evidence about a window, weighed by a model fitted on labelled windows.

The rule engine turns a window into one score and two hand-set thresholds cut it into a verdict. That carried
over poorly to new writers: on two window files by authors it had never seen it scored 0.48 and 0.60
macro-F1 with every label given. The evidence itself was sound; the weighing of it was not. This layer keeps
the engine's evidence — its score terms, the client's clinical states, the counselor's stances and the labels
the window carries (curated or suggested) — and weighs it with a multinomial logistic regression fitted on
the repository's labelled window files by ``benchmarks/fit_audit_layer.py``, which also prints its
leave-one-file-out figures (every file is another writer). The fitted numbers are plain JSON in
``data/layer.json`` (no pickle); without that file, or with ``AuditConfig(learned_layer=False)``, the engine's
thresholds decide as before.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from supervision.suggesting.engine.features import FeatureSpec

from .extractor import ClinicalState, CounselorTurn
from .resources import DATA_DIR
from .window_text import WindowTextModel, WindowTexts, halves, text_model_from_arrays

LAYER_FILE = "layer.json"
logger = logging.getLogger(__name__)

# The score terms (ScoreParts fields, in this order), then the clinical-state summary, then the counselor's
# stances, then the labels: the feature order of ``window_features`` and of the fitted coefficients.
PART_FEATURES = (
    "total",
    "preference",
    "momentum",
    "wall",
    "sycophancy",
    "overt",
    "drift",
    "persistence",
    "risk_rise",
    "risk_answered",
)
STATE_FEATURES = (
    "valence_first",
    "valence_last",
    "valence_mean",
    "valence_min",
    "valence_max",
    "valence_end_minus_start",
    "risk_first",
    "risk_last",
    "risk_max",
    "risk_end_minus_start",
    "high_risk_mass_max",
    "high_risk_mass_last",
    "arousal_mean",
    "share_with_cues",
    "any_safety_cue",
)


class LayerRefused(ValueError):
    """data/layer.json does not fit the engine (a hand edit, or a file from another feature set)."""


@dataclass(frozen=True, slots=True)
class LayerInputs:
    """What the layer reads besides the score terms and states: which stances, client-state codes and technique
    categories it counts (fixed when it is fitted, stored with it)."""

    stances: tuple[str, ...]
    client_codes: tuple[str, ...]
    categories: tuple[str, ...]
    technique_category: Mapping[str, str]

    @property
    def feature_names(self) -> list[str]:
        return [
            *PART_FEATURES,
            *STATE_FEATURES,
            *(f"stance:{s}" for s in self.stances),
            *(f"early:{c}" for c in self.client_codes),
            *(f"late:{c}" for c in self.client_codes),
            *(f"category:{c}" for c in self.categories),
        ]


@dataclass(frozen=True, slots=True)
class WindowLayer:
    inputs: LayerInputs
    classes: tuple[str, ...]  # the verdicts, in the order of the coefficient rows
    mean: np.ndarray  # per feature, for standardising (as fitted)
    scale: np.ndarray
    coef: np.ndarray  # classes x features
    intercept: np.ndarray
    # The window's words (window_text.py), same classes; the verdict is text_weight of its probabilities plus
    # the rest of the evidence model's. None: the evidence model alone.
    text: WindowTextModel | None = None
    text_weight: float = 0.0

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """The evidence model: one row of class probabilities per feature row (softmax of the linear scores)."""
        z = ((rows - self.mean) / self.scale) @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def verdicts(self, rows: np.ndarray, texts: Sequence[WindowTexts]) -> np.ndarray:
        """The verdict's class probabilities per window: its feature row and its words."""
        found = self.probabilities(rows)
        if self.text is None:
            return found
        return self.text_weight * self.text.probabilities(texts) + (1.0 - self.text_weight) * found


def window_features(
    parts: object,
    states: Sequence[ClinicalState],
    counselor: Sequence[CounselorTurn],
    client_labels: Sequence[Sequence[str]],
    inputs: LayerInputs,
) -> list[float]:
    """The feature row of one window. ``parts`` is the engine's ScoreParts; ``client_labels`` holds the client
    turns' client-state codes in order (empty lists when the audit reads no labels).

    Labels count as shares of the client turns in each half of the window (early / late, split where the
    engine's persistence splits) and, for the counselor, as the share of turns using each technique category:
    what moved, not how long the window is."""
    row = [float(getattr(parts, name)) for name in PART_FEATURES]
    if states:
        valence = [s.valence for s in states]
        risk = [s.risk for s in states]
        third = max(1, len(states) // 3)

        def change(values: list[float]) -> float:
            return sum(values[-third:]) / third - sum(values[:third]) / third

        row += [
            valence[0],
            valence[-1],
            sum(valence) / len(valence),
            min(valence),
            max(valence),
            change(valence),
            risk[0],
            risk[-1],
            max(risk),
            change(risk),
            max(s.high_risk_mass for s in states),
            states[-1].high_risk_mass,
            sum(s.arousal for s in states) / len(states),
            sum(s.cue_count > 0 for s in states) / len(states),
            float(any(s.safety for s in states)),
        ]
    else:
        row += [0.0] * len(STATE_FEATURES)
    # Shares counted once per window and looked up (a pass over the turns per code cost 12 % of the audit).
    n = len(counselor) or 1
    stances = Counter(c.stance for c in counselor)
    row += [stances[stance] / n for stance in inputs.stances]
    for part in halves(client_labels):
        m = len(part) or 1
        codes = Counter(code for turn in part for code in set(turn))
        row += [codes[code] / m for code in inputs.client_codes]
    category = inputs.technique_category
    categories = Counter(found for c in counselor for found in {category.get(code) for code in c.techniques})
    row += [categories[wanted] / n for wanted in inputs.categories]
    return row


def layer_from_mapping(data: Mapping[str, Any], folder: Path = DATA_DIR) -> WindowLayer:
    """Build the layer from layer.json's content (and its text model's arrays, in ``folder``); refuses one
    whose shapes do not fit its feature list, or whose arrays file is not the one it names."""
    try:
        inputs = LayerInputs(
            stances=tuple(data["stances"]),
            client_codes=tuple(data["client_codes"]),
            categories=tuple(data["categories"]),
            technique_category=dict(data["technique_category"]),
        )
        layer = WindowLayer(
            inputs=inputs,
            classes=tuple(data["classes"]),
            mean=np.asarray(data["mean"], dtype=float),
            scale=np.asarray(data["scale"], dtype=float),
            coef=np.asarray(data["coef"], dtype=float),
            intercept=np.asarray(data["intercept"], dtype=float),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LayerRefused(f"{LAYER_FILE}: 판정층 파일을 읽을 수 없습니다 ({exc!r})") from None
    names = inputs.feature_names
    if list(data.get("features", [])) != names:
        raise LayerRefused(f"{LAYER_FILE}: 특성 목록이 엔진의 것과 다릅니다")
    width = len(names)
    shapes_fit = (
        layer.mean.shape == (width,)
        and layer.scale.shape == (width,)
        and layer.coef.shape == (len(layer.classes), width)
        and layer.intercept.shape == (len(layer.classes),)
        and bool(np.all(layer.scale > 0))
        and sorted(layer.classes) == ["harmful", "neutral", "productive"]
    )
    if not shapes_fit:
        raise LayerRefused(f"{LAYER_FILE}: 계수의 모양이 특성 {width}개, 판정 3개와 맞지 않습니다")
    text = data.get("text_model")
    if text is None:
        return layer
    return replace(layer, text=_text_model(text, folder, len(layer.classes)), text_weight=float(text["weight"]))


def _text_model(entry: Mapping[str, Any], folder: Path, classes: int) -> WindowTextModel:
    """The text model named by layer.json's ``text_model`` entry: its arrays file, checked against the
    SHA-256 recorded there, read without pickle."""
    try:
        path = folder / str(entry["file"])
        weight = float(entry["weight"])
        spec = FeatureSpec.from_dict(entry["features"])
        expected = str(entry["sha256"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LayerRefused(f"{LAYER_FILE}: text_model 항목을 읽을 수 없습니다 ({exc!r})") from None
    if not 0.0 <= weight <= 1.0:
        raise LayerRefused(f"{LAYER_FILE}: text_model.weight는 0과 1 사이여야 합니다")
    try:
        content = path.read_bytes()
    except OSError:
        raise LayerRefused(f"{path.name}: 판정층의 글 모델 파일이 없습니다") from None
    if hashlib.sha256(content).hexdigest() != expected:
        raise LayerRefused(f"{path.name}: 파일의 SHA-256이 {LAYER_FILE}에 적힌 값과 다릅니다 (손상되었거나 바뀐 파일)")
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as arrays:
            model = text_model_from_arrays(spec, {name: arrays[name] for name in arrays.files})
    except (KeyError, ValueError, OSError) as exc:
        raise LayerRefused(f"{path.name}: 글 모델의 배열을 읽을 수 없습니다 ({exc})") from None
    if model.coef.shape[0] != classes:
        raise LayerRefused(f"{path.name}: 글 모델의 판정 수가 {classes}개가 아닙니다")
    return model


@lru_cache(maxsize=4)
def load_layer(data_dir: str | None = None) -> WindowLayer | None:
    """The fitted layer of a data folder, or None: when the folder has none, and when its file is refused (logged
    once per process). Then the engine's thresholds decide, as before the layer: audits go on either way."""
    path = (Path(data_dir) if data_dir else DATA_DIR) / LAYER_FILE
    if not path.exists():
        return None
    try:
        return layer_from_mapping(json.loads(path.read_text(encoding="utf-8")), path.parent)
    except json.JSONDecodeError as exc:
        refused = LayerRefused(f"{LAYER_FILE}: 올바른 JSON이 아닙니다 ({exc.msg}, {exc.lineno}번째 줄)")
    except LayerRefused as exc:
        refused = exc
    logger.error("궤적 감사 판정층을 쓰지 않고 규칙 엔진의 임계값으로 판정합니다: %s", refused)
    return None
