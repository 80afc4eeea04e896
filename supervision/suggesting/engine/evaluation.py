"""Cross-validated figures of the suggester: each held-out group of sessions is suggested by a model
trained (thresholds included, by its own inner cross-validation) on the other sessions only, and the
answers are scored with the agreement feature's definitions (CONTRACT §7)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from supervision.agreement.scoring import Ratings, agreement

from .corpus import LabelledTurn, inputs
from .model import AXIS_OF_SPEAKER, SuggesterModel
from .training import Fitted, Settings, fit


def as_model(fitted: Fitted) -> SuggesterModel:
    return SuggesterModel(
        meta={"model_version": "portal-suggester-0"},
        vectoriser=fitted.vectoriser,
        axes=fitted.axes,
        safety=fitted.safety,
    )


def held_out_suggestions(
    evaluated: Sequence[LabelledTurn],
    extra: Sequence[LabelledTurn],
    folds: Sequence[set[str]],
    *,
    label_codes: dict,
    safety: frozenset[str],
    settings: Settings | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
) -> list[list[str]]:
    """Per turn of ``evaluated``, the labels suggested by a model that never saw its session's fold.
    ``extra`` turns are always trained on (never scored); ``folds`` are sets of session names. With ``jobs``
    above 1 the folds are fitted in that many worker processes at once; each fold's answer is the same."""
    predicted: list[list[str]] = [[] for _ in evaluated]
    task = _FoldTask(evaluated, extra, folds, label_codes, safety, settings)
    if jobs <= 1 or len(folds) <= 1:
        done = (task(number) for number in range(len(folds)))
        _collect(done, predicted, len(folds), progress)
        return predicted
    # spawned workers (the engine needs no Django, and a fork would copy the caller's connections and threads),
    # each sent the turns once; only the answers travel back
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(folds)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_receive,
        initargs=(task,),
    ) as pool:
        futures = [pool.submit(_run_fold, number) for number in range(len(folds))]
        _collect((future.result() for future in as_completed(futures)), predicted, len(folds), progress)
    return predicted


class _FoldTask:
    """One fold: fit without its sessions, suggest its turns. Returns the fold's (turn index, labels)."""

    def __init__(self, evaluated, extra, folds, label_codes, safety, settings):
        self.evaluated, self.extra, self.folds = evaluated, extra, folds
        self.label_codes, self.safety, self.settings = label_codes, safety, settings

    def __call__(self, number: int) -> list[tuple[int, list[str]]]:
        fold = self.folds[number]
        test = [i for i, t in enumerate(self.evaluated) if t.session in fold]
        if not test:
            return []
        train = [t for t in self.evaluated if t.session not in fold] + [t for t in self.extra if t.session not in fold]
        model = as_model(fit(train, label_codes=self.label_codes, safety=self.safety, settings=self.settings))
        turns = [self.evaluated[i] for i in test]
        suggestions = model.suggest(inputs(turns, model.turns_before), [t.speaker for t in turns])
        return [(i, suggestion.labels) for i, suggestion in zip(test, suggestions, strict=True)]


_TASK: _FoldTask | None = None  # in a worker process: the task it was sent when it started


def _receive(task: _FoldTask) -> None:
    global _TASK
    _TASK = task


def _run_fold(number: int) -> list[tuple[int, list[str]]]:
    assert _TASK is not None
    return _TASK(number)


def _collect(done, predicted: list[list[str]], total: int, progress: Callable[[int, int], None] | None) -> None:
    for count, answers in enumerate(done, start=1):
        for i, labels in answers:
            predicted[i] = labels
        if progress:
            progress(count, total)


def figures(turns: Sequence[LabelledTurn], predicted: Sequence[list[str]], *, rater: str) -> dict:
    """The §7 JSON of the suggestions against the turns' own labels (techniques and client states)."""
    reference, rater_ratings = Ratings(), Ratings()
    names, order = {}, {}
    for i, (turn, labels) in enumerate(zip(turns, predicted, strict=True)):
        axis = AXIS_OF_SPEAKER.get(turn.speaker)
        if axis is None:
            continue
        reference.axis(axis)[i] = frozenset(getattr(turn, axis))
        rater_ratings.axis(axis)[i] = frozenset(labels)
        names[i], order[i] = turn.utterance_id, (turn.session, turn.seq)
    return {"rater": rater, "against": "golden", **agreement(reference, rater_ratings, names=names, order=order)}


def false_alarms(turns: Sequence[LabelledTurn], predicted: Sequence[list[str]], safety: frozenset[str]) -> dict:
    """Client turns suggested a safety-critical state they do not carry, per state, and the client turns."""
    client = [i for i, t in enumerate(turns) if t.speaker == "client"]
    alarms = {
        state: sum(1 for i in client if state in predicted[i] and state not in turns[i].client_states)
        for state in sorted(safety)
    }
    return {
        "client_turns": len(client),
        "false_alarms": alarms,
        "per_140": round(sum(alarms.values()) * 140 / max(len(client), 1), 2),
    }


def session_folds(turns: Sequence[LabelledTurn], count: int, *, seed: int = 0) -> list[set[str]]:
    """``count`` folds of whole sessions, shuffled with a fixed seed (balanced by number of sessions)."""
    sessions = sorted({t.session for t in turns})
    rng = np.random.default_rng(seed)
    rng.shuffle(sessions)
    return [set(sessions[i::count]) for i in range(min(count, len(sessions)))]


def safety_folds_study(
    evaluated: Sequence[LabelledTurn],
    extra: Sequence[LabelledTurn],
    folds: Sequence[set[str]],
    *,
    label_codes: dict,
    safety: frozenset[str],
    settings: Settings | None = None,
) -> tuple[list[list[str]], list[dict[str, float]]]:
    """``held_out_suggestions`` for the client turns alone (the client-state axis, safety scorer included),
    with each turn's probabilities of the safety-critical states: the study of what the safety states miss."""
    predicted: list[list[str]] = [[] for _ in evaluated]
    scores: list[dict[str, float]] = [{} for _ in evaluated]
    for fold in folds:
        train = [t for t in evaluated if t.session not in fold] + [t for t in extra if t.session not in fold]
        fold_rows = [i for i, t in enumerate(evaluated) if t.session in fold]
        if not fold_rows:
            continue
        fitted = fit(train, label_codes=label_codes, safety=safety, settings=settings, only=("client_states",))
        model = as_model(fitted)
        # inputs over the whole fold, so each client turn has the turns before it
        fold_inputs = dict(zip(fold_rows, inputs([evaluated[i] for i in fold_rows], model.turns_before), strict=True))
        test = [i for i in fold_rows if evaluated[i].speaker == "client"]
        turns = [evaluated[i] for i in test]
        turn_inputs = [fold_inputs[i] for i in test]
        axis = model.axes["client_states"]
        probabilities = axis.probabilities(model.vectoriser.transform(turn_inputs))
        if model.safety is not None:
            columns = [axis.labels.index(label) for label in model.safety.labels]
            probabilities[:, columns] = model.safety.probabilities(turn_inputs)
        wanted = [(j, label) for j, label in enumerate(axis.labels) if label in safety]
        for row, (i, suggestion) in enumerate(
            zip(test, model.suggest(turn_inputs, [t.speaker for t in turns]), strict=True)
        ):
            predicted[i] = suggestion.labels
            scores[i] = {label: float(probabilities[row, j]) for j, label in wanted}
    return predicted, scores
