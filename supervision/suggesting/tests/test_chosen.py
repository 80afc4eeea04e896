"""The labels-only path (``chosen.py``) the import and the audit use is the model's own answer: the same
labels, in the same order, with the same probabilities as ``SuggesterModel.predict``, turn for turn."""

from pathlib import Path

from supervision.suggesting.chosen import chosen_labels
from supervision.suggesting.engine.corpus import inputs, read_jsonl_file
from supervision.suggesting.loading import current_model, window_labeller

WINDOWS = Path(__file__).resolve().parents[3] / "benchmarks" / "trajectory"


def repository_turns():
    turns = []
    for name in ("blind-1.jsonl", "development-1.jsonl", "development-7.jsonl", "generated-check.jsonl"):
        turns += read_jsonl_file(WINDOWS / name)
    # what the model meets besides words: a turn without text (cues only), an empty one, no stage
    turns[0].text, turns[0].nonverbal = "", ["(침묵)"]
    turns[1].text, turns[1].nonverbal, turns[1].stage = "", [], ""
    return turns


def test_it_gives_the_models_labels_and_probabilities_turn_for_turn():
    model = current_model()
    turns = repository_turns()
    speakers = [t.speaker for t in turns]
    expected = model.predict(inputs(turns), speakers)
    found = chosen_labels(model, inputs(turns), speakers)
    assert len(turns) > 1000 and sum(1 for labels, _ in expected if labels) > 900
    for (labels, scores), (chosen, probabilities) in zip(expected, found, strict=True):
        assert chosen == labels
        assert probabilities == [(code, p) for code, p in scores if code in labels]
    without = chosen_labels(model, inputs(turns), speakers, probabilities=False)
    assert [labels for labels, _ in without] == [labels for labels, _ in expected]
    assert all(p == [] for _, p in without)


def test_the_audits_labeller_suggests_a_repeated_turn_once_and_answers_for_every_turn():
    model = current_model()
    turns = repository_turns()[:40]
    as_dicts = [
        {"speaker": t.speaker, "stage": t.stage, "text": t.text, "nonverbal": t.nonverbal, "seq": n}
        for n, t in enumerate(turns)
    ]
    calls = []
    original = model.vectoriser.transform

    def counted(batch):
        calls.append(len(batch))
        return original(batch)

    model.vectoriser.transform = counted
    try:
        # windows cut with an overlap: the same turns come back (another seq, another window)
        labels = window_labeller()(as_dicts + [{**d, "seq": 99} for d in as_dicts[10:30]])
    finally:
        del model.vectoriser.transform
    expected = [labels for labels, _ in model.predict(inputs(turns), [t.speaker for t in turns])]
    assert labels == expected + expected[10:30]
    assert calls == [len({(t.speaker, t.stage, t.text, tuple(t.nonverbal)) for t in turns})]
