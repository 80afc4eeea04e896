"""The stored suggester (CONTRACT §9): a JSON file (version, digests, labels, thresholds, intercepts) and a
NumPy ``.npz`` beside it (vocabulary buckets, idf, one coefficient matrix per axis). No pickle anywhere:
``numpy.load`` is called with ``allow_pickle=False`` and the JSON is plain data.

Loading checks the file's integrity before anything is used: the JSON carries the SHA-256 of the ``.npz``
and a digest of its own content, so a weight file that was edited, swapped or cut short is refused with a
``ModelRefused`` that says which check failed (callers keep serving without suggestions).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .features import (
    Block,
    FeatureSpec,
    FoldedCoef,
    TurnInput,
    Vectoriser,
    meta_rows,
    text_blocks,
    turn_blocks,
)

FORMAT = "portal-suggester/1"
VERSION_PATTERN = re.compile(r"^portal-suggester-(\d+)$")
COUNSELOR, CLIENT = "counselor", "client"
TECHNIQUES, CLIENT_STATES = "techniques", "client_states"
# The axis a speaker's turns are suggested on (taxonomy §0: techniques on counselor turns only, client
# states on client turns only).
AXIS_OF_SPEAKER = {COUNSELOR: TECHNIQUES, CLIENT: CLIENT_STATES}
RUNNERS_UP = 5
# The trajectory audit of a session or window nobody labelled reads a suggested label only when the model
# gives it at least even odds. The per-label thresholds are tuned for the F1 of the suggestion list a
# supervisor reads and decides on, and the safety states' for recall, which puts many of them below 0.5; the
# audit weighs every label it reads like a curated one, and there the doubtful ones cost more than they gave.
# ``make bench-suggester-audit`` (labels stripped, each window file suggested by a model trained without it,
# 707 windows): macro-F1 0.780 with every suggested label, 0.828 with these (text alone 0.816, optimistic:
# the word lists were written on these files); blind-1 0.748 and 0.765 (text alone 0.632). Floors of 0.6
# and 0.7 did better on the development files and worse on blind-1 (0.713, 0.679). The safety check still
# reads every suggested safety state.
AUDIT_MIN_PROBABILITY = 0.5


def labels_for_audit(labels: Iterable[str], scores: Mapping[str, float]) -> list[str]:
    """The suggested ``labels`` the trajectory audit reads (``AUDIT_MIN_PROBABILITY``); a label without a
    probability is kept."""
    return [code for code in labels if scores.get(code, 1.0) >= AUDIT_MIN_PROBABILITY]


class ModelRefused(Exception):
    """The model file cannot be used; the message says why, in words an operator can act on."""


@dataclass
class AxisModel:
    labels: list[str]
    coef: np.ndarray  # (vocabulary + meta columns) × labels, float32
    intercept: np.ndarray  # labels
    thresholds: np.ndarray  # labels; a label is suggested when its probability reaches it
    min_labels: int = 0  # 1: a turn with words gets at least its most likely label
    # A label under this fraction of the turn's likeliest label's probability is not suggested, even at its
    # threshold (``decide``); 0 = off. Chosen by the inner cross-validation (``training.RELATIVE_FLOORS``).
    relative_floor: float = 0.0

    def probabilities(self, matrix) -> np.ndarray:
        return _sigmoid(np.asarray(matrix @ self.coef) + self.intercept)


@dataclass
class SafetyScorer:
    """The safety-critical client states' own scorer: its features read more than the turn's words (n-grams
    across words, the turn before it — usually the counselor's question), because disclosures are often
    answers ("일주일에 두세 번이요") or veiled. Its probabilities replace the client-state axis's for its
    labels; their thresholds stay in that axis."""

    labels: list[str]
    vectoriser: Vectoriser
    coef: np.ndarray  # vectoriser width × labels, float32
    intercept: np.ndarray
    c: float | None = None  # the regularisation the inner cross-validation chose (a record only)
    nb_alpha: float = 0.0  # fitted on naive-Bayes-scaled columns (``training.nb_ratios``; a record only)

    def __post_init__(self) -> None:
        self.folded: FoldedCoef = self.vectoriser.fold(self.coef)

    def probabilities(self, turns: Sequence[TurnInput]) -> np.ndarray:
        return _sigmoid(np.asarray(self.vectoriser.transform(turns) @ self.coef) + self.intercept)

    def probabilities_sharing(
        self,
        turns: Sequence[TurnInput],
        own: list[Block],
        meta: list[np.ndarray],
        cross: Mapping[int, Block] | None = None,
    ) -> np.ndarray:
        """``probabilities`` (within float32 rounding, ``Vectoriser.scores``) given the (row, bucket) blocks
        of the turns' own text that the main vectoriser computed (``own_text_blocks``; its spec shares this
        one's text n-grams and bits), its blocks across words by n (``cross_word_blocks``) and their
        ``meta_rows``: hashing the client turns' words a second time was a fifth of the model's time."""
        vectoriser = self.vectoriser
        rows, columns = vectoriser.slotted(list(turn_blocks(turns, vectoriser.spec, own=own, cross=cross)))
        return _sigmoid(vectoriser.scores(rows, columns, turns, self.folded, meta) + self.intercept)


def decide(
    probabilities: np.ndarray,
    thresholds: np.ndarray,
    *,
    has_words: np.ndarray | None = None,
    min_labels: int = 0,
    relative_floor: float = 0.0,
    exempt: Sequence[int] = (),
) -> np.ndarray:
    """The labels suggested for each row of ``probabilities`` (turns × the axis's labels), one rule for the
    model and its training (``AxisModel``'s fields): those at or above their thresholds, less those under
    ``relative_floor`` × the row's likeliest label; then, with ``min_labels``, a turn with words (``has_words``,
    needed only then) that has none gets its likeliest label.

    The ``exempt`` columns (the safety states, whose scorer is tuned for recall and not calibrated against the
    other labels) are never dropped by the floor, never set it and never fill an empty turn.

    The floor, because a new writer's turns draw more labels than they carry: each blind window file left out
    in turn (blind-1 … -11, 1,488 labelled counselor turns), the thresholds alone suggested 1.66 techniques a
    turn where the files give 1.49 (precision 0.58, recall 0.65); a floor of 0.7 raised micro-F1 on each of the
    eleven files (pooled 0.611 → 0.618), and the inner cross-validation of the whole training set puts the
    best floor at 0.75–0.8 (0.673 → 0.677), so it is chosen there."""
    chosen = probabilities >= thresholds
    ranked = probabilities
    if len(exempt):
        ranked = probabilities.copy()
        ranked[:, list(exempt)] = -1.0
    if relative_floor and len(probabilities):
        under = ranked < relative_floor * ranked.max(axis=1, keepdims=True)
        under[:, list(exempt)] = False
        chosen &= ~under
    if min_labels:
        empty = has_words & ~chosen.any(axis=1)
        chosen[np.flatnonzero(empty), ranked[empty].argmax(axis=1)] = True
    return chosen


def _sigmoid(scores: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(scores, -30, 30)))


@dataclass
class Suggestion:
    labels: list[str]
    scores: dict[str, float]


class SuggesterModel:
    def __init__(
        self, *, meta: dict, vectoriser: Vectoriser, axes: dict[str, AxisModel], safety: SafetyScorer | None = None
    ) -> None:
        self.meta = meta
        self.vectoriser = vectoriser
        self.axes = axes
        self.safety = safety
        self._folded = {name: vectoriser.fold(axis.coef) for name, axis in axes.items()}
        self._safety_columns: list[int] = []
        if safety is not None and CLIENT_STATES in axes:
            self._safety_columns = [axes[CLIENT_STATES].labels.index(label) for label in safety.labels]
        # The safety scorer reads the turn's own text as the main vectoriser does (same bits and n-grams, so
        # the same buckets): its pairs are hashed once and looked up in both tables.
        self._safety_shares_text = safety is not None and (
            safety.vectoriser.spec.bits,
            safety.vectoriser.spec.text_ngrams,
        ) == (
            vectoriser.spec.bits,
            vectoriser.spec.text_ngrams,
        )
        # The n-grams across words hashed per axis (none before portal-suggester-25): the main vectoriser's, and
        # on client turns the safety scorer's too when it shares the bits, so it takes them as ``known``.
        main_cross = vectoriser.spec.cross_ngrams
        self._cross_ngrams = {name: main_cross for name in axes}
        if self._safety_columns and safety.vectoriser.spec.bits == vectoriser.spec.bits:
            ranges = [r for r in (main_cross, safety.vectoriser.spec.cross_ngrams) if r[1] > 0]
            if ranges:
                self._cross_ngrams[CLIENT_STATES] = (min(r[0] for r in ranges), max(r[1] for r in ranges))

    @property
    def version(self) -> str:
        return self.meta["model_version"]

    @property
    def number(self) -> int:
        return version_number(self.version)

    @property
    def turns_before(self) -> int:
        """How many of a session's turns before a turn the model reads (``features.turn_input``)."""
        specs = [self.vectoriser.spec] + ([self.safety.vectoriser.spec] if self.safety is not None else [])
        return max(spec.turns_before for spec in specs)

    def suggest(self, turns: Sequence[TurnInput], speakers: Sequence[str]) -> list[Suggestion]:
        """One suggestion per turn, on its speaker's axis: the labels at or above their thresholds (in the
        model's label order) and the probability of each plus at most ``RUNNERS_UP`` more, rounded to 4."""
        return [Suggestion(labels, dict(scores)) for labels, scores in self.predict(turns, speakers)]

    def probabilities(
        self, turns: Sequence[TurnInput], speakers: Sequence[str]
    ) -> Iterator[tuple[str, np.ndarray, list[TurnInput], np.ndarray]]:
        """Per speaker with an axis: (axis, the speaker's rows in ``turns``, those turns, their probabilities
        on the axis, the safety scorer's in its columns) — float32, what the axis and the scorer give on
        ``vectoriser.transform`` of the whole batch within float32 rounding (``Vectoriser.scores``).

        A speaker's turns are read on their own (rows are independent), once: the turn's own text is hashed
        once for both vectorisers when their specs share the text n-grams, and the products are taken
        without building the CSR matrices (``Vectoriser.scores``). Hashing the client turns twice, sorting
        the rows and scipy's checks of the matrices were half of the model's time at import."""
        if not len(turns):
            return
        speakers = np.asarray(speakers)
        vectoriser = self.vectoriser
        for speaker, axis_name in AXIS_OF_SPEAKER.items():
            rows = np.flatnonzero(speakers == speaker)
            if not len(rows) or axis_name not in self.axes:
                continue
            axis = self.axes[axis_name]
            group = [turns[r] for r in rows.tolist()]
            meta = meta_rows(group)
            own, cross = text_blocks(group, vectoriser.spec, self._cross_ngrams[axis_name])
            blocks = list(turn_blocks(group, vectoriser.spec, own=own, cross=cross))
            probabilities = _sigmoid(
                vectoriser.scores(*vectoriser.slotted(blocks), group, self._folded[axis_name], meta) + axis.intercept
            )
            if axis_name == CLIENT_STATES and self._safety_columns:
                probabilities[:, self._safety_columns] = (
                    self.safety.probabilities_sharing(group, own, meta, cross)
                    if self._safety_shares_text
                    else self.safety.probabilities(group)
                )
            yield axis_name, rows, group, probabilities

    def predict(
        self, turns: Sequence[TurnInput], speakers: Sequence[str], *, runners_up: int = RUNNERS_UP
    ) -> list[Prediction]:
        """``suggest`` as plain tuples (labels, [(label, probability), …]): what the import writes, for
        tens of thousands of turns at a time, without an object per turn more than it needs.

        ``runners_up=0`` gives the probabilities of the suggested labels only. The import and the audit ask
        for that: ranking every turn's runners-up (a partition and a sort of each row, and rounding the whole
        matrix) was two thirds of the model's time on 25,600 turns, and they never read them."""
        result: list[Prediction] = [_NOTHING] * len(turns)
        for axis_name, rows, group, probabilities in self.probabilities(turns, speakers):
            axis = self.axes[axis_name]
            chosen = self._chosen(axis_name, group, probabilities)
            picked_rows, picked_columns = np.nonzero(chosen)  # row by row, columns ascending: the model's order
            ends = np.cumsum(np.bincount(picked_rows, minlength=len(rows))).tolist()
            picked = picked_columns.tolist()
            labels = axis.labels
            names = [labels[j] for j in picked]
            if runners_up:
                widest = min(int(chosen.sum(axis=1).max(initial=0)) + runners_up, probabilities.shape[1])
                # the ``widest`` most likely labels of each row, most likely first (a partition, then a sort)
                top = np.argpartition(-probabilities, widest - 1, axis=1)[:, :widest]
                order = np.take_along_axis(
                    top, np.argsort(-np.take_along_axis(probabilities, top, axis=1), axis=1, kind="stable"), axis=1
                ).tolist()
                rounded = np.round(probabilities.astype(np.float64), 4).tolist()
            else:
                shown = np.round(probabilities[picked_rows, picked_columns].astype(np.float64), 4).tolist()
                pairs = list(zip(names, shown, strict=True))
            starts = [0, *ends[:-1]]
            if runners_up:
                for i, (row, start, end) in enumerate(zip(rows.tolist(), starts, ends, strict=True)):
                    mine = picked[start:end]
                    rest = [j for j in order[i] if j not in mine][:runners_up]
                    probability = rounded[i]
                    result[row] = (names[start:end], [(labels[j], probability[j]) for j in mine + rest])
            else:  # slices of lists made once for the whole axis: the import's path, a turn at a time
                for row, start, end in zip(rows.tolist(), starts, ends, strict=True):
                    result[row] = (names[start:end], pairs[start:end])
        return result

    def _chosen(self, axis_name: str, group: Sequence[TurnInput], probabilities: np.ndarray) -> np.ndarray:
        """Which of the axis's labels each turn of ``group`` is suggested (``decide``)."""
        axis = self.axes[axis_name]
        has_words = None  # read only where the axis fills empty turns: the import's hot path skips it otherwise
        if axis.min_labels:
            has_words = np.fromiter((bool(t.text.strip()) for t in group), dtype=bool, count=len(group))
        return decide(
            probabilities,
            axis.thresholds,
            has_words=has_words,
            min_labels=axis.min_labels,
            relative_floor=axis.relative_floor,
            exempt=self._safety_columns if axis_name == CLIENT_STATES else (),
        )

    def audit_label_sets(self, turns: Sequence[TurnInput], speakers: Sequence[str]) -> list[list[str]]:
        """Per turn, the suggested labels the trajectory audit reads: to the last bit
        ``labels_for_audit(labels, dict(scores))`` of ``predict(…, runners_up=0)``, the 0.5 floor applied to the
        rounded probability as there. A turn's list is shared with every turn suggested the same labels
        (read it, never change it): the audit used to take every turn's labels and probabilities from
        ``predict`` and build a dict of them to drop the doubtful ones, a list, a dict and a list of pairs
        per turn (``predict``'s own Python time was 0.41 s of the labeller's 1.75 s over 4,000 windows,
        cProfile); 12,673 repository turns have 1,025 distinct label sets, each built once here."""
        result: list[list[str]] = [_NO_LABELS] * len(turns)
        for axis_name, rows, group, probabilities in self.probabilities(turns, speakers):
            chosen = self._chosen(axis_name, group, probabilities)
            picked_rows, picked_columns = np.nonzero(chosen)
            shown = np.round(probabilities[picked_rows, picked_columns].astype(np.float64), 4)
            chosen[picked_rows, picked_columns] = shown >= AUDIT_MIN_PROBABILITY
            # one key per distinct row of ``chosen`` (its bits packed), each decoded once
            packed = np.packbits(chosen, axis=1)
            keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            labels = self.axes[axis_name].labels
            decoded = [[labels[j] for j in np.flatnonzero(chosen[i]).tolist()] for i in first.tolist()]
            for row, key in zip(rows.tolist(), inverse.ravel().tolist(), strict=True):
                result[row] = decoded[key]
        return result


_NO_LABELS: list[str] = []
Prediction = tuple[list[str], list[tuple[str, float]]]
_NOTHING: Prediction = ([], [])


def version_number(version: str) -> int:
    match = VERSION_PATTERN.match(version or "")
    return int(match.group(1)) if match else 0


def _self_digest(meta: dict) -> str:
    body = {k: v for k, v in meta.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def weights_path(json_path: Path) -> Path:
    return json_path.with_suffix(".npz")


def save_model(path: Path, *, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Writes ``path`` (JSON) and its ``.npz``; the JSON records the ``.npz``'s SHA-256 and its own digest."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    weights = buffer.getvalue()
    meta = {**meta, "format": FORMAT, "weights_file": weights_path(path).name}
    meta["weights_sha256"] = hashlib.sha256(weights).hexdigest()
    meta["digest"] = _self_digest(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    weights_path(path).write_bytes(weights)
    path.write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def load_model(path: Path) -> SuggesterModel:
    """Reads and checks the model; ``ModelRefused`` names the file and what is wrong with it."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelRefused(f"제안 모델 파일이 없습니다: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelRefused(f"제안 모델 파일을 읽을 수 없습니다(잘렸거나 손상됨): {path}: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelRefused(f"제안 모델 형식이 아닙니다(format {FORMAT!r} 필요): {path}")
    if meta.get("digest") != _self_digest(meta):
        raise ModelRefused(f"제안 모델 파일의 내용이 기록된 digest와 다릅니다(수정되었거나 손상됨): {path}")
    if not VERSION_PATTERN.match(str(meta.get("model_version", ""))):
        raise ModelRefused(f"model_version이 portal-suggester-<n> 형식이 아닙니다: {path}")
    weights = weights_path(path)
    try:
        raw = weights.read_bytes()
    except OSError as exc:
        raise ModelRefused(f"제안 모델 가중치 파일을 읽을 수 없습니다: {weights}: {exc}") from None
    if hashlib.sha256(raw).hexdigest() != meta.get("weights_sha256"):
        raise ModelRefused(
            f"제안 모델 가중치 파일의 SHA-256이 모델 파일에 기록된 값과 다릅니다(바뀌었거나 잘림): {weights}"
        )
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        spec = FeatureSpec.from_dict(meta["features"])
        vectoriser = Vectoriser(spec, arrays["buckets"], arrays["idf"])
        axes = {}
        for name in (TECHNIQUES, CLIENT_STATES):
            axis = meta["axes"][name]
            axes[name] = AxisModel(
                labels=list(axis["labels"]),
                coef=arrays[f"{name}_coef"].astype(np.float32),
                intercept=np.asarray(axis["intercepts"], dtype=np.float32),
                thresholds=np.asarray(axis["thresholds"], dtype=np.float32),
                min_labels=int(axis.get("min_labels", 0)),
                relative_floor=float(axis.get("relative_floor", 0.0)),
            )
            if axes[name].coef.shape != (vectoriser.width, len(axes[name].labels)):
                raise ValueError(f"{name}: coefficient shape {axes[name].coef.shape}")
        safety = None
        if "safety" in meta:  # portal-suggester-3 on; earlier files have none
            part = meta["safety"]
            safety = SafetyScorer(
                labels=list(part["labels"]),
                vectoriser=Vectoriser(
                    FeatureSpec.from_dict(part["features"]), arrays["safety_buckets"], arrays["safety_idf"]
                ),
                coef=arrays["safety_coef"].astype(np.float32),
                intercept=np.asarray(part["intercepts"], dtype=np.float32),
                c=part.get("c"),
                nb_alpha=float(part.get("nb_alpha", 0.0)),
            )
            if safety.coef.shape != (safety.vectoriser.width, len(safety.labels)):
                raise ValueError(f"safety: coefficient shape {safety.coef.shape}")
        return SuggesterModel(meta=meta, vectoriser=vectoriser, axes=axes, safety=safety)
    except (KeyError, ValueError, TypeError, zipfile.BadZipFile, OSError) as exc:
        raise ModelRefused(f"제안 모델의 내용이 맞지 않습니다: {path}: {exc}") from None
