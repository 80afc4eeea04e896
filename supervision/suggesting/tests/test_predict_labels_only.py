"""``predict(runners_up=0)``, the path the import and the audit use, is the model's own answer: the same
labels, in the same order, with the same probabilities as the ranked ``predict``, turn for turn; the audit's
labeller reads each turn with the one before it in its window, suggests a repeated one once and hands the
audit the labels the model gives even odds or more."""

from pathlib import Path

from supervision.suggesting.engine.corpus import inputs, read_jsonl_file
from supervision.suggesting.engine.features import session_inputs
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


def test_labels_only_gives_the_ranked_predictions_labels_and_their_probabilities_turn_for_turn():
    model = current_model()
    turns = repository_turns()
    speakers = [t.speaker for t in turns]
    read = inputs(turns, model.turns_before)
    ranked = model.predict(read, speakers)
    found = model.predict(read, speakers, runners_up=0)
    assert len(turns) > 1000 and sum(1 for labels, _ in ranked if labels) > 900
    assert any(len(scores) > len(labels) for labels, scores in ranked)  # the ranked path has runners-up
    for (labels, scores), (chosen, probabilities) in zip(ranked, found, strict=True):
        assert chosen == labels
        assert probabilities == [(code, p) for code, p in scores if code in labels]


def window(turns):
    return [{"speaker": t.speaker, "stage": t.stage, "text": t.text, "nonverbal": t.nonverbal} for t in turns]


def test_the_audits_labeller_reads_the_turns_before_in_the_window_and_suggests_a_repeat_once():
    model = current_model()
    turns = repository_turns()[:40]
    calls = []
    original = model.audit_label_sets

    def counted(batch, speakers):
        calls.append(len(batch))
        return original(batch, speakers)

    model.audit_label_sets = counted
    try:
        # the same window twice (windows cut with an overlap meet the same turns again)
        labels = window_labeller()([window(turns), window(turns[:20]), window(turns)])
    finally:
        del model.audit_label_sets
    read = session_inputs(((t.text, t.stage, t.nonverbal) for t in turns), model.turns_before)
    predicted = model.predict(read, [t.speaker for t in turns])
    expected = [[code for code, p in scores if code in labels and p >= 0.5] for labels, scores in predicted]
    assert labels == [expected, expected[:20], expected]
    assert calls[0] == len(
        {
            (t.speaker, t.stage, t.text, tuple(t.nonverbal), p.previous, p.context)
            for t, p in zip(turns, read, strict=True)
        }
    )


def test_the_audits_labeller_leaves_the_doubtful_labels_to_the_supervisor():
    """Labels over their threshold but under even odds (the safety states' thresholds are far lower) are
    suggested to supervisors, not read by the audit."""
    turns = repository_turns()
    model = current_model()
    read = session_inputs(((t.text, t.stage, t.nonverbal) for t in turns), model.turns_before)
    predicted = model.predict(read, [t.speaker for t in turns])
    [read] = window_labeller()([window(turns)])
    doubtful = [[code for code, p in scores if code in labels and p < 0.5] for labels, scores in predicted]
    assert sum(map(len, doubtful)) >= 5
    for labels, doubts, audited in zip((labels for labels, _ in predicted), doubtful, read, strict=True):
        assert audited == [code for code in labels if code not in doubts]
