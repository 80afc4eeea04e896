"""The model's fast path (each speaker's turns hashed once, the safety scorer reusing the main vectoriser's
buckets of the turn's own text, products taken without CSR matrices, the idf folded into the coefficients)
gives what the straightforward computation gives: the whole batch's TF-IDF matrix, each axis on its speaker's
rows, and the safety scorer featurising the client turns again on its own. The same sums added in another
order, so equal within float32 rounding (``tolerance``); the same labels wherever a probability is not that
close to its threshold, and the same probabilities to the fourth decimal shown."""

import numpy as np

from supervision.suggesting.engine.features import (
    FeatureSpec,
    TurnInput,
    cross_word_blocks,
    own_text_blocks,
    session_inputs,
    text_blocks,
)
from supervision.suggesting.engine.model import AXIS_OF_SPEAKER, CLIENT_STATES, labels_for_audit
from supervision.suggesting.loading import current_model
from supervision.suggesting.tests.test_predict_labels_only import repository_turns

# A probability of the fast path and of the reference differ by float32 rounding, which grows with the number
# of n-gram occurrences a row sums, repeats included: a few 1e-7 on ordinary turns (at most 2.4e-6 seen), 7.2e-5
# on the 600-character turn of one word repeated below, whose row sums 2,214 occurrences in the main vectoriser
# (the median row 191) since it reads across words too (portal-suggester-26; the tolerance was by characters
# until then). A mistake in the path (a column, a weight, a row off) moves them by orders of magnitude more.
TOLERANCE = 1e-5
ORDINARY_OCCURRENCES = 200


def tolerance(occurrences: int) -> float:
    """``TOLERANCE`` for a row that sums up to ``ORDINARY_OCCURRENCES`` n-gram occurrences, more in proportion
    beyond."""
    return TOLERANCE * max(1.0, occurrences / ORDINARY_OCCURRENCES)


RISK_QUESTION = "혹시 스스로를 해칠 생각도 해 봤어요?"
# What the model meets besides tidy Korean sentences: English, mixed case and scripts, cues with and without
# words, whitespace of every kind, runs of spaces, very short and very long turns, a stage it does not know.
ODD = [
    ("", "탐색", ["(침묵)"], RISK_QUESTION),
    ("", "", [], ""),
    ("   ", "개입", [], "음…"),
    ("\t줄\n바꿈\u3000전각\xa0공백 ", "정리", ["(한숨)", "(웃음)"], "네"),
    ("I'm NOT going to hurt myself, OK?", "탐색", [], "Are you safe right now?"),
    ("Honestly I think about dying a lot lately.", "탐색", ["(looks down)"], "How have the nights been?"),
    ("ΣΊΣΥΦΟΣ, İstanbul, STRASSE", "라포", [], "여행은 어땠어요?"),
    ("가끔요. 팔에 상처를 낸 적도 있어요.", "탐색", ["(침묵)"], RISK_QUESTION),
    ("네… 요즘 거의 매일이요.", "탐색", [], "혹시 죽고 싶다는 생각까지 드세요?"),
    ("죽고  싶은   건 아니에요", "개입", [], RISK_QUESTION),
    ("a", "기타", [], "b"),
    ("그냥 " * 200, "탐색", ["(끄덕임)"], "계속 말해 볼래요?" * 20),
    ("😀 좋아요 😀", "정리", [""], "  "),
]


CUES = [
    "(침묵)",
    "(한숨)",
    "(웃음)",
    "(울먹임)",
    "(끄덕임)",
    "(고개를 숙임)",
    "(긴 침묵)",
    "(눈물)",
    "(sigh)",
    "(pause)",
]


def varied_turns() -> tuple[list[TurnInput], list[str]]:
    turns, speakers = [], []
    # turns of cues only, in every stage: a stage and the no-words flag both in the row, after its n-grams
    for n, cue in enumerate(CUES * 4):
        turns.append(TurnInput("", ("라포", "탐색", "개입", "정리")[n // len(CUES)], [cue], RISK_QUESTION))
        speakers.append(("client", "counselor")[n % 2])
    # read with up to five turns before them: the safety scorer's context n-grams in the row too
    repository = repository_turns()[:1500]
    turns += session_inputs(((t.text, t.stage, t.nonverbal) for t in repository), 5)
    speakers += [t.speaker for t in repository]
    for n, (text, stage, nonverbal, before) in enumerate(ODD * 3):
        turns.append(TurnInput(text, stage, nonverbal, before))
        # each odd turn on both axes and once on none (a speaker without an axis is not suggested)
        speakers.append(("client", "counselor", "supervisor")[n // len(ODD)])
    return turns, speakers


def reference(model, turns, speakers) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The model read as before it shared anything: one CSR matrix for the batch, the safety scorer's own; with
    each row's n-gram occurrences (the most of the matrices its probabilities come from, for ``tolerance``)."""
    matrix = model.vectoriser.transform(turns)
    occurrences = np.diff(matrix.indptr)
    found = {}
    for speaker, axis_name in AXIS_OF_SPEAKER.items():
        rows = np.flatnonzero(np.asarray(speakers) == speaker)
        axis = model.axes[axis_name]
        probabilities = axis.probabilities(matrix[rows])
        summed = occurrences[rows]
        if axis_name == CLIENT_STATES:
            columns = [axis.labels.index(label) for label in model.safety.labels]
            group = [turns[r] for r in rows]
            probabilities[:, columns] = model.safety.probabilities(group)
            summed = np.maximum(summed, np.diff(model.safety.vectoriser.transform(group).indptr))
        found[axis_name] = (rows, probabilities, summed)
    return found


def test_the_shipped_safety_scorer_reads_the_turns_words_as_the_main_vectoriser_does():
    # so the tests below go through the shared path
    model = current_model()
    main, safety = model.vectoriser.spec, model.safety.vectoriser.spec
    assert (safety.bits, safety.text_ngrams) == (main.bits, main.text_ngrams)
    assert safety.previous_ngrams[1] > 0 and safety.cross_ngrams[1] > 0


def test_the_shipped_main_vectoriser_reads_across_words_and_the_safety_scorer_reuses_those_blocks():
    model = current_model()
    main, safety = model.vectoriser.spec, model.safety.vectoriser.spec
    assert main.cross_ngrams[1] > 0 and main.bits == safety.bits
    assert safety.cross_ngrams[0] <= main.cross_ngrams[0] and main.cross_ngrams[1] <= safety.cross_ngrams[1]


def test_blocks_across_words_reused_by_n_are_those_hashed_afresh():
    turns = varied_turns()[0][:400]
    fresh = cross_word_blocks(turns, FeatureSpec(cross_ngrams=(3, 6)))
    main = cross_word_blocks(turns, FeatureSpec(cross_ngrams=(4, 6)))
    reused = cross_word_blocks(turns, FeatureSpec(cross_ngrams=(3, 6)), known=main)
    assert list(fresh) == list(reused) == [3, 4, 5, 6]
    assert all(reused[n] is main[n] for n in (4, 5, 6))  # taken, not hashed again
    for n in fresh:
        assert all(np.array_equal(a, b) for a, b in zip(fresh[n], reused[n], strict=True))
    assert cross_word_blocks(turns, FeatureSpec()) == {}


def test_one_hash_chain_gives_the_blocks_of_the_turns_words_and_across_them_as_hashed_apart():
    # cues after the text (the n-grams across words stop before them), a NUL, a cue without words, "İ" that
    # lower-cases to two code points, a batch of one short turn (no block past the longest text)
    odd = [
        TurnInput("ΣΊΣΥΦΟΣ İİ abc", "", ["(İsigh)", "ΣΑΣ"]),
        TurnInput("a\x00b c", "", ["x\x00y"]),
        TurnInput("", "", ["", ""]),
        TurnInput("x", "", []),
    ]
    turns = varied_turns()[0]
    for batch in (turns, odd, odd + turns[:60], odd[2:3], odd[3:], []):
        for across in ((4, 6), (3, 6), (1, 7), (0, 0)):
            spec = FeatureSpec(cross_ngrams=across)
            own, cross = text_blocks(batch, spec)
            apart_own, apart_cross = own_text_blocks(batch, spec), cross_word_blocks(batch, spec)
            assert len(own) == len(apart_own) and list(cross) == list(apart_cross)
            pairs = list(zip(own, apart_own, strict=True)) + [(cross[n], apart_cross[n]) for n in cross]
            for (rows, buckets), (apart_rows, apart_buckets) in pairs:
                assert np.array_equal(rows, apart_rows) and np.array_equal(buckets, apart_buckets)
    # a wider range than the spec's, for a second spec that takes them as known
    own, cross = text_blocks(turns, FeatureSpec(cross_ngrams=(4, 6)), (3, 6))
    assert list(cross) == [3, 4, 5, 6]
    assert all(len(cross[n][1]) for n in cross)


def test_the_fast_path_gives_the_reference_probabilities():
    model = current_model()
    turns, speakers = varied_turns()
    expected = reference(model, turns, speakers)
    found = {axis: (rows, probabilities) for axis, rows, _, probabilities in model.probabilities(turns, speakers)}
    assert set(found) == set(expected) == {"techniques", "client_states"}
    for axis in found:
        rows, probabilities = found[axis]
        assert np.array_equal(rows, expected[axis][0])
        assert probabilities.dtype == expected[axis][1].dtype == np.float32
        allowed = np.array([tolerance(n) for n in expected[axis][2].tolist()], dtype=np.float32)[:, None]
        assert (np.abs(probabilities - expected[axis][1]) <= allowed).all(), axis
    # the safety columns are not trivially equal: some client turns are disclosures, most are not
    client = expected[CLIENT_STATES][1]
    axis = model.axes[CLIENT_STATES]
    safety = client[:, [axis.labels.index(label) for label in model.safety.labels]]
    assert (safety >= 0.5).any() and (safety < 0.05).mean() > 0.5


def _reference_labels(axis, probabilities, has_words, safety_columns) -> list[str]:
    """The labels at or above their thresholds, less those (safety states aside) under ``relative_floor`` ×
    the likeliest other label; with ``min_labels``, a turn with words that reaches none gets its most likely
    label that is not a safety state (their scorer is not calibrated with the rest)."""
    chosen = np.flatnonzero(probabilities >= axis.thresholds).tolist()
    likeliest = max(float(p) for j, p in enumerate(probabilities) if j not in safety_columns)
    chosen = [j for j in chosen if j in safety_columns or probabilities[j] >= axis.relative_floor * likeliest]
    if axis.min_labels and has_words and not chosen:
        ranked = [j for j in np.argsort(-probabilities, kind="stable").tolist() if j not in safety_columns]
        chosen = ranked[:1]
    return [axis.labels[j] for j in sorted(chosen)]


def _near_a_threshold(axis, probabilities, allowed: float, safety_columns) -> bool:
    """A probability this close to its threshold or to the relative floor may fall either side of it."""
    floor = axis.relative_floor * max(float(p) for j, p in enumerate(probabilities) if j not in safety_columns)
    near_floor = axis.relative_floor and (np.abs(probabilities - floor) <= 2 * allowed).any()
    return bool((np.abs(probabilities - axis.thresholds) <= allowed).any() or near_floor)


def test_every_suggestion_has_the_reference_labels_and_rounded_probabilities():
    model = current_model()
    turns, speakers = varied_turns()
    predicted = model.predict(turns, speakers, runners_up=0)
    ranked = model.predict(turns, speakers)
    seen, filled, undecided = set(), 0, 0
    for axis_name, (rows, probabilities, occurrences) in reference(model, turns, speakers).items():
        axis = model.axes[axis_name]
        safety = {axis.labels.index(code) for code in model.safety.labels} if axis_name == CLIENT_STATES else set()
        for row, row_probabilities, summed in zip(rows.tolist(), probabilities, occurrences.tolist(), strict=True):
            seen.add(row)
            allowed = tolerance(summed)
            if _near_a_threshold(axis, row_probabilities, allowed, safety):
                undecided += 1  # either side of it is right
                continue
            labels = _reference_labels(axis, row_probabilities, bool(turns[row].text.strip()), safety)
            filled += len(labels) > int((row_probabilities >= axis.thresholds).sum())
            assert predicted[row][0] == ranked[row][0] == labels
            for code, shown in predicted[row][1] + ranked[row][1]:
                assert abs(shown - row_probabilities[axis.labels.index(code)]) <= 0.00005 + allowed
            assert [code for code, _ in predicted[row][1]] == labels
    assert all(predicted[row] == ([], []) for row in range(len(turns)) if row not in seen)
    assert undecided <= len(seen) // 100
    assert sum(1 for labels, _ in predicted if labels) > 900
    if any(model.axes[axis].min_labels for axis in model.axes):
        assert filled  # the rule was exercised


def test_the_audit_reads_the_suggested_labels_it_trusts():
    # audit_label_sets is labels_for_audit over predict(runners_up=0), to the last bit (the same probabilities)
    model = current_model()
    turns, speakers = varied_turns()
    expected = [
        labels_for_audit(labels, dict(scores)) for labels, scores in model.predict(turns, speakers, runners_up=0)
    ]
    found = model.audit_label_sets(turns, speakers)
    assert found == expected
    # some suggested labels fall under the audit's floor and are left out
    suggested = sum(len(labels) for labels, _ in model.predict(turns, speakers, runners_up=0))
    assert 0 < sum(map(len, found)) < suggested
