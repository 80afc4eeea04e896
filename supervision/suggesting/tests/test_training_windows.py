"""The audit's window files as training data: their labels are partial (whole windows come unlabelled, and
about half the turns of the others), so a window turn without labels on its axis is unknown — read as the
turn before the next one, never learnt as "none of these" — while in a golden session it means "none"."""

import json

from supervision.suggesting.engine.corpus import inputs, read_jsonl_file
from supervision.suggesting.engine.evaluation import as_model
from supervision.suggesting.engine.features import TurnInput
from supervision.suggesting.engine.training import fit
from supervision.suggesting.tests.test_safety_scorer import CODES, RISK_QUESTION, SAFETY, _corpus

ANSWER = "네, 꽤 자주 그래요."


def _write(path, rows):
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    return path


def _turn(uid, seq, speaker, text, **labels):
    return {"utterance_id": uid, "seq": seq, "speaker": speaker, "stage": "탐색", "text": text, **labels}


def _window(n, *, labelled):
    answer = {"client_states": ["suicidal_ideation_admit"]} if labelled else {}
    return {
        "window_id": f"w{n}",
        "label": "neutral",
        "turns": [
            _turn(f"W{n}-C-001", 0, "counselor", RISK_QUESTION),  # unlabelled in both kinds
            _turn(f"W{n}-K-001", 1, "client", ANSWER, **answer),
        ],
    }


def test_a_window_turn_without_labels_is_unrated_and_a_golden_one_is_rated(tmp_path):
    windows = read_jsonl_file(
        _write(tmp_path / "windows.jsonl", [_window(1, labelled=True), _window(2, labelled=False)])
    )
    assert [(t.utterance_id, t.rated) for t in windows] == [
        ("W1-C-001", False),
        ("W1-K-001", True),
        ("W2-C-001", False),
        ("W2-K-001", False),
    ]
    # the unrated question is still the labelled answer's context
    assert inputs(windows)[1].previous == RISK_QUESTION
    golden = read_jsonl_file(_write(tmp_path / "G1.jsonl", [_turn("G1-C-001", 0, "counselor", "안녕하세요.")]))
    assert [t.rated for t in golden] == [True]


def _disclosure_probability(training):
    model = as_model(fit(training, label_codes=CODES, safety=SAFETY))
    [(_labels, scores)] = model.predict([TurnInput(ANSWER, "탐색", (), RISK_QUESTION)], ["client"], runners_up=30)
    return dict(scores)["suicidal_ideation_admit"]


def test_unlabelled_window_turns_are_not_learnt_as_none_of_these(tmp_path):
    sessions = _corpus()
    windows = read_jsonl_file(_write(tmp_path / "windows.jsonl", [_window(n, labelled=False) for n in range(40)]))
    unrated = _disclosure_probability(sessions + windows)
    for turn in windows:
        turn.rated = True  # what the windows would teach if a missing label meant "none of these"
    as_none = _disclosure_probability(sessions + windows)
    assert unrated >= 0.5 > as_none
