"""Fitting the suggester: one L2 logistic regression per label (class weights balanced) on the shared
TF-IDF features, separately for the two axes, with per-label thresholds picked on out-of-fold
probabilities of an inner cross-validation grouped by session — never on the turns being reported.

Safety-critical states have a scorer of their own (wider features, the turns before) and are tuned
for recall: their threshold is set under the lowest out-of-fold probability of a true disclosure (with a
margin), bounded by a false-alarm rate, because a missed disclosure costs more than a false alarm.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from .corpus import LabelledTurn, inputs
from .features import FeatureSpec, TurnInput, Vectoriser, fit_vectoriser
from .model import AXIS_OF_SPEAKER, CLIENT_STATES, TECHNIQUES, AxisModel, SafetyScorer, decide

GRID = np.round(np.arange(0.05, 0.951, 0.025), 3)
# The relative floors (``AxisModel.relative_floor``) the inner cross-validation chooses from; 0 = none.
RELATIVE_FLOORS = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85)


@dataclass
class Settings:
    # The turn's own character n-grams within words (1–4) and, since portal-suggester-25, across words (4–6:
    # "어떤 느낌", "해 볼 수" — a technique is often a phrase, not a word), in 100,000 columns. Chosen
    # on writers the model never read: trained on -24's set and scored on blind-39 … -47 (techniques micro-F1,
    # pooled over 2,120 labelled counselor turns), within words only 0.602 (100,000 columns 0.604), across
    # words 3–5 0.606, 4–6 0.609, 5–7 0.611, 4–6 in 100,000 columns 0.615 (150,000: 0.615). Then checked apart
    # from that choice on blind-27 … -38 of the training set, each left out in turn and the rest trained on:
    # 0.589 → 0.603 pooled, ten of the twelve files up (docs/suggester-history.md).
    spec: FeatureSpec = field(default_factory=lambda: FeatureSpec(cross_ngrams=(4, 6)))
    max_features: int = 100_000
    c: float = 4.0
    inner_folds: int = 3
    safety_margin: float = 0.7  # threshold = margin × the lowest out-of-fold probability of a disclosure
    safety_max_false_alarm_rate: float = 0.02  # ≈ 3 in 140 client turns
    # The safety scorer (``SafetyScorer``): the turn's character n-grams within and across words, the
    # previous turn's (the counselor's question) and the two turns' before that (the client's own earlier
    # words: "그렇게 한 거예요" points back), over client turns only. None = the axis's own columns.
    # The context, in the 5-fold study (suggester_safety.py, 591 sessions), recall at 1.5 / 3 / 5 / 10 false
    # alarms per 140 client turns: without it 0.819 / 0.877 / 0.926 / 0.966; two turns' 2-grams 0.850 / 0.911 /
    # 0.942 / 0.972, their 3-grams 0.840 / 0.917 / 0.948 / 0.972, 2–3-grams 0.844 / 0.899 / 0.939 / 0.966 (and
    # 35 % more model time); one turn's 2–3-grams 0.813 / 0.908 / 0.933 / 0.972. Four turns and eight did
    # worse (on 531 sessions). 2-grams are the cheapest: the import's bar leaves the model little time.
    # Four turns since portal-suggester-11: on writers the model never read (each of blind-1 … blind-7 left
    # out in turn, the rest trained on) they found 63 of 73 disclosures against 58 with two (six: 62), at the
    # same false alarms (71 against 70 in 957 labelled client turns): a new writer's client points back further
    # ("그걸로 버틸래요", "6, 7 정도요" to a question about how high it gets). With the larger training set the
    # 5-fold study no longer prefers two: recall 309 / 308 of 326 at 4.5 / 4.6 per 140, 0.923 / 0.908 at 3.
    safety_spec: FeatureSpec | None = field(
        default_factory=lambda: FeatureSpec(
            text_ngrams=(1, 4), previous_ngrams=(2, 4), cross_ngrams=(3, 6), context_ngrams=(2, 2), context_turns=4
        )
    )
    safety_max_features: int = 150_000
    # The scorer's C: the one of these whose inner out-of-fold probabilities find the most disclosures within
    # the false-alarm rate (in the 5-fold study, 16 ranked them better than 4; 1 worse).
    safety_c_grid: tuple[float, ...] = (4.0, 16.0, 64.0)
    safety_positive_weight: float = 0.0  # 0 = "balanced"
    # The scorer's columns scaled by each state's naive-Bayes log-count ratio before its regression (``nb_ratios``;
    # 0 = plain TF-IDF columns, as shipped). Each blind window file left out in turn (blind-1 … -11, 192
    # disclosures in 1,616 labelled client turns; suggester_safety.py --by-writer), recall at 1.5 / 3 / 5 / 10
    # false alarms per 140 client turns: plain 0.562 / 0.651 / 0.740 / 0.802, scaled (alpha 1) 0.615 / 0.740 /
    # 0.771 / 0.828, at the tuned thresholds 156 found against 150. But on the six held-out files the model
    # trained with it (a candidate on -16's data, not the shipped -17) found 237 of 293 disclosures against
    # 245, at 63 false alarms against 60: the gain did not carry over to those writers, so it stays off (--set
    # safety_nb_alpha=1.0 for studies).
    safety_nb_alpha: float = 0.0

    @property
    def turns_before(self) -> int:
        """How many of a session's turns before a turn the specs read."""
        return max(spec.turns_before for spec in (self.spec, self.safety_spec) if spec is not None)


def _targets(turns: Sequence[LabelledTurn], axis: str, labels: Sequence[str]) -> np.ndarray:
    index = {label: i for i, label in enumerate(labels)}
    y = np.zeros((len(turns), len(labels)), dtype=bool)
    for row, turn in enumerate(turns):
        for code in getattr(turn, axis):
            if code in index:
                y[row, index[code]] = True
    return y


def _fit_axis(
    matrix, y: np.ndarray, c: float, class_weight="balanced", nb_alpha: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """One L2 logistic regression per label of ``y``. With ``nb_alpha``, each label's regression is fitted on
    the columns scaled by that label's naive-Bayes log-count ratio (``nb_ratios``), and the ratio is folded
    back into its coefficients: the model reads the same columns at run time, with nothing more to compute."""
    coef = np.zeros((matrix.shape[1], y.shape[1]), dtype=np.float32)
    intercept = np.full(y.shape[1], -12.0, dtype=np.float32)  # a label never seen: never suggested
    for j in range(y.shape[1]):
        positives = int(y[:, j].sum())
        if positives == 0 or positives == len(y):
            continue
        ratios = nb_ratios(matrix, y[:, j], nb_alpha) if nb_alpha else None
        columns = matrix @ sparse.diags(ratios) if ratios is not None else matrix
        # The dual problem: far fewer turns than n-gram columns (half the time of the primal here).
        model = LogisticRegression(C=c, class_weight=class_weight, solver="liblinear", dual=True, max_iter=500)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(columns, y[:, j])
        coef[:, j] = model.coef_[0] * ratios if ratios is not None else model.coef_[0]
        intercept[j] = model.intercept_[0]
    return coef, intercept


def nb_ratios(matrix, truth: np.ndarray, alpha: float) -> np.ndarray:
    """Per column, the log of how much more often it occurs in the label's turns than in the others, with
    ``alpha`` added to every count (NBSVM: Wang and Manning, "Baselines and Bigrams", ACL 2012). Columns that
    occur as often either way weigh little; a regression on the scaled columns needs less data to trust the
    telling ones."""
    present = matrix.copy()
    present.data = np.ones_like(present.data)
    p = alpha + np.asarray(present[truth].sum(axis=0)).ravel()
    q = alpha + np.asarray(present[~truth].sum(axis=0)).ravel()
    return np.log((p / p.sum()) / (q / q.sum())).astype(np.float32)


def _f1(tp: float, fp: float, fn: float) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _pick_thresholds(
    probabilities: np.ndarray, y: np.ndarray, labels: Sequence[str], safety: frozenset[str], settings: Settings
) -> np.ndarray:
    thresholds = np.full(len(labels), 0.5, dtype=np.float32)
    for j, label in enumerate(labels):
        p, truth = probabilities[:, j], y[:, j]
        if not truth.any():
            continue
        if label in safety:
            lowest = float(p[truth].min()) * settings.safety_margin
            negatives = np.sort(p[~truth])[::-1]
            allowed = int(settings.safety_max_false_alarm_rate * len(p))
            # the probability above which only ``allowed`` negatives lie: going lower would raise alarms
            floor = float(negatives[allowed]) if allowed < len(negatives) else 0.0
            thresholds[j] = max(min(lowest, 0.5), floor + 1e-6, 0.01)
            continue
        predicted = p[:, None] >= GRID[None, :]
        tp = (predicted & truth[:, None]).sum(axis=0)
        fp = (predicted & ~truth[:, None]).sum(axis=0)
        fn = truth.sum() - tp
        f1 = np.where(tp > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)
        thresholds[j] = GRID[int(np.argmax(f1))]
    return thresholds


def _micro_f1(chosen: np.ndarray, y: np.ndarray) -> float:
    tp = float((chosen & y).sum())
    return _f1(tp, float((chosen & ~y).sum()), float((~chosen & y).sum()))


def _decision_rule(
    oof: np.ndarray, y: np.ndarray, thresholds: np.ndarray, has_words: np.ndarray, exempt: Sequence[int]
) -> tuple[int, float]:
    """``min_labels`` and ``relative_floor`` for ``decide``, by micro-F1 on the out-of-fold probabilities:
    the fill when it helps, then the first floor with the best figure (ties keep the lower; 0 first)."""

    def micro_f1(min_labels: int, floor: float) -> float:
        chosen = decide(
            oof, thresholds, has_words=has_words, min_labels=min_labels, relative_floor=floor, exempt=exempt
        )
        return round(_micro_f1(chosen, y), 6)

    min_labels = int(micro_f1(1, 0.0) > micro_f1(0, 0.0))
    floor = max(RELATIVE_FLOORS, key=lambda f: (micro_f1(min_labels, f), -f))
    return min_labels, floor


@dataclass
class Fitted:
    vectoriser: Vectoriser
    axes: dict[str, AxisModel]
    safety: SafetyScorer | None = None


def _fit_safety(
    turns: Sequence[LabelledTurn], turn_inputs: Sequence[TurnInput], labels: Sequence[str], settings: Settings
) -> tuple[SafetyScorer, np.ndarray, np.ndarray]:
    """The safety scorer on client turns (``turn_inputs`` carry the turn before each, read in the whole
    session), with its out-of-fold probabilities (inner grouped CV) and targets."""
    vectoriser = fit_vectoriser(turn_inputs, settings.safety_spec, max_features=settings.safety_max_features)
    x = vectoriser.transform(turn_inputs)
    x.sum_duplicates()
    y = _targets(turns, CLIENT_STATES, labels)
    groups = np.array([t.session for t in turns])
    weight = "balanced" if not settings.safety_positive_weight else {False: 1.0, True: settings.safety_positive_weight}
    folds = min(settings.inner_folds, len(set(groups)))
    splits = list(GroupKFold(n_splits=folds).split(x, groups=groups)) if folds >= 2 else []
    best: tuple[int, float, np.ndarray] | None = None
    for c in settings.safety_c_grid if splits else settings.safety_c_grid[:1]:
        oof = np.zeros(y.shape, dtype=np.float32)
        for train, test in splits:
            coef, intercept = _fit_axis(x[train], y[train], c, weight, settings.safety_nb_alpha)
            oof[test] = 1.0 / (1.0 + np.exp(-np.clip(np.asarray(x[test] @ coef) + intercept, -30, 30)))
        found = _found_within_budget(oof, y, settings.safety_max_false_alarm_rate)
        if best is None or found > best[0]:
            best = (found, c, oof)
    _, c, oof = best
    coef, intercept = _fit_axis(x, y, c, weight, settings.safety_nb_alpha)
    scorer = SafetyScorer(list(labels), vectoriser, coef, intercept, c, settings.safety_nb_alpha)
    return scorer, oof, y


def _found_within_budget(probabilities: np.ndarray, y: np.ndarray, rate: float) -> int:
    """Disclosures scored above every negative but the ``rate`` highest, summed over the labels."""
    found = 0
    for j in range(y.shape[1]):
        negatives = np.sort(probabilities[~y[:, j], j])[::-1]
        allowed = int(rate * len(y))
        floor = negatives[allowed] if allowed < len(negatives) else -1.0
        found += int((probabilities[y[:, j], j] > floor).sum())
    return found


def fit(
    turns: Sequence[LabelledTurn],
    *,
    label_codes: dict[str, Sequence[str]],
    safety: frozenset[str],
    settings: Settings | None = None,
    only: Sequence[str] = (TECHNIQUES, CLIENT_STATES),
) -> Fitted:
    """The vectoriser and both axes' models, thresholds from the inner grouped cross-validation. ``only``
    fits fewer axes (the others are absent): the safety study needs the client states alone."""
    settings = settings or Settings()
    turn_inputs = inputs(turns, settings.turns_before)
    vectoriser = fit_vectoriser(turn_inputs, settings.spec, max_features=settings.max_features)
    matrix = vectoriser.transform(turn_inputs)
    matrix.sum_duplicates()  # canonical rows for the solver (inference leaves duplicates to the product)
    speakers = np.array([t.speaker for t in turns])
    sessions = np.array([t.session for t in turns])
    has_words = np.array([bool(t.text.strip()) for t in turns])
    # unrated turns (a window's unlabelled ones) were read for their successors' ``previous``, not learnt from
    rated = np.array([t.rated for t in turns], dtype=bool)
    axes = {}
    for speaker, axis in AXIS_OF_SPEAKER.items():
        if axis not in only:
            continue
        rows = np.flatnonzero((speakers == speaker) & rated)
        labels = list(label_codes[axis])
        y = _targets([turns[r] for r in rows], axis, labels)
        x = matrix[rows]
        groups = sessions[rows]
        folds = min(settings.inner_folds, len(set(groups)))
        oof = np.zeros(y.shape, dtype=np.float32)
        if folds >= 2:
            for train, test in GroupKFold(n_splits=folds).split(x, groups=groups):
                coef, intercept = _fit_axis(x[train], y[train], settings.c)
                oof[test] = AxisModel(labels, coef, intercept, np.zeros(len(labels))).probabilities(x[test])
        thresholds = _pick_thresholds(oof, y, labels, safety if axis == CLIENT_STATES else frozenset(), settings)
        words = has_words[rows]
        exempt = [j for j, label in enumerate(labels) if label in safety] if axis == CLIENT_STATES else []
        min_labels, floor = _decision_rule(oof, y, thresholds, words, exempt)
        coef, intercept = _fit_axis(x, y, settings.c)
        axes[axis] = AxisModel(labels, coef, intercept, thresholds, min_labels, floor)
    scorer = None
    if CLIENT_STATES in axes and settings.safety_spec is not None:
        client = np.flatnonzero((speakers == "client") & rated)
        labels = [label for label in axes[CLIENT_STATES].labels if label in safety]
        scorer, oof, y = _fit_safety([turns[r] for r in client], [turn_inputs[r] for r in client], labels, settings)
        thresholds = _pick_thresholds(oof, y, labels, safety, settings)
        for label, threshold in zip(labels, thresholds, strict=True):
            axes[CLIENT_STATES].thresholds[axes[CLIENT_STATES].labels.index(label)] = threshold
    return Fitted(vectoriser, axes, scorer)


def arrays_of(fitted: Fitted, *, half: bool = False) -> dict[str, np.ndarray]:
    dtype = np.float16 if half else np.float32
    arrays = {"buckets": fitted.vectoriser.buckets.astype(np.int32), "idf": fitted.vectoriser.idf.astype(np.float32)}
    for axis in (TECHNIQUES, CLIENT_STATES):
        arrays[f"{axis}_coef"] = fitted.axes[axis].coef.astype(dtype)
    if fitted.safety is not None:
        arrays["safety_buckets"] = fitted.safety.vectoriser.buckets.astype(np.int32)
        arrays["safety_idf"] = fitted.safety.vectoriser.idf.astype(np.float32)
        arrays["safety_coef"] = fitted.safety.coef.astype(dtype)
    return arrays


def safety_meta(fitted: Fitted) -> dict:
    """The safety scorer's part of the model file (absent without a scorer)."""
    if fitted.safety is None:
        return {}
    return {
        "safety": {
            "labels": fitted.safety.labels,
            "intercepts": [round(float(v), 6) for v in fitted.safety.intercept],
            "features": fitted.safety.vectoriser.spec.as_dict(),
            "c": fitted.safety.c,
            "nb_alpha": fitted.safety.nb_alpha,
        }
    }


def axes_meta(fitted: Fitted) -> dict:
    return {
        axis: {
            "labels": model.labels,
            "intercepts": [round(float(v), 6) for v in model.intercept],
            "thresholds": [round(float(v), 6) for v in model.thresholds],
            "min_labels": model.min_labels,
            "relative_floor": model.relative_floor,
        }
        for axis, model in fitted.axes.items()
    }
