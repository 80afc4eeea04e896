"""Which labels a turn is suggested (``engine.model.decide``, one rule for the model and its training): the
thresholds, the relative floor, the fill of an empty turn, and the safety states kept out of the last two."""

import json
import shutil

import numpy as np

from supervision.suggesting.engine.model import _self_digest, decide, load_model, weights_path
from supervision.suggesting.engine.training import RELATIVE_FLOORS, _decision_rule
from supervision.suggesting.loading import DEFAULT_MODEL_PATH

THRESHOLDS = np.array([0.3, 0.3, 0.3, 0.3], dtype=np.float32)
WORDS = np.array([True, True, True])


def chosen_columns(chosen: np.ndarray) -> list[list[int]]:
    return [np.flatnonzero(row).tolist() for row in chosen]


def test_without_a_floor_every_label_at_its_threshold_is_suggested():
    probabilities = np.array([[0.9, 0.35, 0.1, 0.0], [0.4, 0.31, 0.2, 0.0], [0.1, 0.2, 0.1, 0.0]])
    assert chosen_columns(decide(probabilities, THRESHOLDS, has_words=WORDS)) == [[0, 1], [0, 1], []]


def test_the_floor_drops_a_label_far_under_the_turns_likeliest():
    probabilities = np.array([[0.9, 0.35, 0.1, 0.0], [0.4, 0.31, 0.2, 0.0], [0.1, 0.2, 0.1, 0.0]])
    chosen = decide(probabilities, THRESHOLDS, has_words=WORDS, relative_floor=0.7)
    # 0.35 < 0.7 × 0.9 goes; 0.31 ≥ 0.7 × 0.4 stays
    assert chosen_columns(chosen) == [[0], [0, 1], []]


def test_the_fill_gives_an_empty_turn_with_words_its_likeliest_label():
    probabilities = np.array([[0.1, 0.2, 0.1, 0.0], [0.1, 0.2, 0.1, 0.0]])
    chosen = decide(probabilities, THRESHOLDS, has_words=np.array([True, False]), min_labels=1, relative_floor=0.7)
    assert chosen_columns(chosen) == [[1], []]  # a turn of cues alone stays empty


def test_a_safety_state_is_never_dropped_by_the_floor_nor_sets_it_nor_fills():
    # column 3 is a safety state: its scorer is tuned for recall, not calibrated against the others
    probabilities = np.array(
        [
            [0.5, 0.38, 0.1, 0.31],  # the safety state over its threshold, far under 0.8 × 0.5: kept
            [0.45, 0.4, 0.1, 0.99],  # a likelier safety state does not raise the floor for the rest
            [0.1, 0.2, 0.1, 0.29],  # empty: filled with the likeliest label that is not a safety state
        ]
    )
    chosen = decide(probabilities, THRESHOLDS, has_words=WORDS, min_labels=1, relative_floor=0.8, exempt=[3])
    assert chosen_columns(chosen) == [[0, 3], [0, 1, 3], [1]]


def test_training_chooses_a_floor_when_the_runners_up_are_mostly_wrong():
    rng = np.random.default_rng(7)
    turns = 400
    y = np.zeros((turns, 4), dtype=bool)
    y[np.arange(turns), rng.integers(0, 4, turns)] = True
    # the true label likely, a second one at its threshold but much less likely, and wrong
    oof = np.where(y, 0.8, 0.0) + np.where(~y & (rng.random((turns, 4)) < 0.3), 0.35, 0.05)
    _, floor = _decision_rule(oof, y, THRESHOLDS, np.ones(turns, dtype=bool), [])
    assert floor in RELATIVE_FLOORS and floor > 0  # the lowest that drops them (ties keep the lower)
    # when the runners-up are right as often as the likeliest, no floor
    both = y | (oof > 0.3)
    assert _decision_rule(oof, both, THRESHOLDS, np.ones(turns, dtype=bool), [])[1] == 0.0


def test_the_model_file_carries_each_axis_floor_and_an_older_file_reads_as_none(tmp_path):
    model = load_model(DEFAULT_MODEL_PATH)
    meta = json.loads(DEFAULT_MODEL_PATH.read_text())
    for name, axis in model.axes.items():
        assert axis.relative_floor == meta["axes"][name]["relative_floor"]
        assert axis.relative_floor in RELATIVE_FLOORS
    # a file written before the floor (portal-suggester-15 and earlier), digests intact, loads without one
    for axis in meta["axes"].values():
        del axis["relative_floor"]
    meta["digest"] = _self_digest(meta)
    older = tmp_path / "suggester.json"
    older.write_text(json.dumps(meta))
    shutil.copy(weights_path(DEFAULT_MODEL_PATH), weights_path(older))
    assert [axis.relative_floor for axis in load_model(older).axes.values()] == [0.0, 0.0]
