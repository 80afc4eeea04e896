"""Every §7 definition on fixtures small enough to count by hand; the expected figures are worked out in
the comments next to them, not taken from the code under test."""

from __future__ import annotations

import pytest

from supervision.agreement.scoring import NO_ACT, Ratings, agreement, krippendorff_alpha

NAMES = {t: f"S-{'C' if t < 10 else 'K'}-{t:03d}" for t in range(1, 30)}
ORDER = {t: ("S", t) for t in range(1, 30)}

# Four counselor turns 1..4.
#   turn  reference              rater
#   1     empathy, reflection    empathy
#   2     reflection             reflection, exploration
#   3     —                      —
#   4     empathy                reflection
REF_TECHNIQUES = {1: {"empathy", "reflection"}, 2: {"reflection"}, 3: set(), 4: {"empathy"}}
RAT_TECHNIQUES = {1: {"empathy"}, 2: {"reflection", "exploration"}, 3: set(), 4: {"reflection"}}


def _ratings(**axes) -> Ratings:
    return Ratings(
        **{
            axis: {t: frozenset(v) if axis in ("techniques", "client_states") else v for t, v in values.items()}
            for axis, values in axes.items()
        }
    )


def _score(reference: Ratings, rater: Ratings) -> dict:
    return agreement(reference, rater, names=NAMES, order=ORDER)


def test_it_scores_a_multi_label_axis_label_by_label():
    result = _score(_ratings(techniques=REF_TECHNIQUES), _ratings(techniques=RAT_TECHNIQUES))["axes"]["techniques"]
    assert result["turns"] == 4
    # Labels: the union either side used, in the taxonomy's order.
    assert list(result["labels"]) == ["empathy", "reflection", "exploration"]
    # empathy: reference on 1, 4; rater on 1 → TP 1, FP 0, FN 1: P 1, R 0.5, F1 2·0.5/1.5 = 0.6667.
    # κ: agree on 1, 2, 3 → po 0.75; p(ref) 0.5, p(rater) 0.25 → pe 0.5·0.25 + 0.5·0.75 = 0.5;
    # κ = (0.75 − 0.5) / 0.5 = 0.5.
    assert result["labels"]["empathy"] == {"precision": 1.0, "recall": 0.5, "f1": 0.6667, "support": 2, "kappa": 0.5}
    # reflection: reference on 1, 2; rater on 2, 4 → TP 1, FP 1, FN 1: P R F1 0.5; po 0.5, pe 0.5 → κ 0.
    assert result["labels"]["reflection"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2, "kappa": 0.0}
    # exploration, a label only the rater used: support 0, TP 0, FP 1 → P 0, R 0/0 = 0, F1 0;
    # po 0.75, pe 1·0.75 → κ 0.
    assert result["labels"]["exploration"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "support": 0,
        "kappa": 0.0,
    }
    # macro: (0.6667 + 0.5 + 0) / 3 = 0.3889; micro: TP 2, FP 2, FN 2 → 0.5; κ: mean(0.5, 0, 0) = 0.1667.
    assert (result["macro_f1"], result["micro_f1"], result["kappa"]) == (0.3889, 0.5, 0.1667)


# Two client turns 11, 12.
#   turn  reference                                   rater
#   11    affect_contact, suicidal_ideation_admit     affect_contact, suicidal_ideation_admit
#   12    affect_contact, self_harm_disclosure        affect_contact
REF_STATES = {11: {"affect_contact", "suicidal_ideation_admit"}, 12: {"affect_contact", "self_harm_disclosure"}}
RAT_STATES = {11: {"affect_contact", "suicidal_ideation_admit"}, 12: {"affect_contact"}}


def test_it_leaves_kappa_undefined_when_both_sides_are_constant_and_equal():
    result = _score(_ratings(client_states=REF_STATES), _ratings(client_states=RAT_STATES))["axes"]["client_states"]
    # affect_contact on every turn, both sides: pe = 1·1 + 0·0 = 1 → κ undefined (null); F1 1.
    assert result["labels"]["affect_contact"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "support": 2,
        "kappa": None,
    }
    # suicidal_ideation_admit: agree on both → po 1, pe 0.5·0.5 + 0.5·0.5 = 0.5 → κ 1.
    assert result["labels"]["suicidal_ideation_admit"]["kappa"] == 1.0
    # self_harm_disclosure: FN 1 → F1 0; po 0.5, p(ref) 0.5, p(rater) 0 → pe 0.5 → κ 0.
    assert result["labels"]["self_harm_disclosure"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "support": 1,
        "kappa": 0.0,
    }
    # The axis κ is the mean of the defined ones: (1 + 0) / 2. macro (1 + 1 + 0) / 3; micro TP 3, FN 1
    # → P 1, R 0.75, F1 1.5/1.75 = 0.8571.
    assert (result["kappa"], result["macro_f1"], result["micro_f1"]) == (0.5, 0.6667, 0.8571)


def test_it_lists_every_missed_safety_critical_state_with_its_turn():
    safety = _score(_ratings(client_states=REF_STATES), _ratings(client_states=RAT_STATES))["safety"]
    # Reference pairs: (11, suicidal_ideation_admit) found, (12, self_harm_disclosure) missed.
    assert safety == {
        "support": 2,
        "found": 1,
        "recall": 0.5,
        "missed": [{"utterance_id": "S-K-012", "state": "self_harm_disclosure"}],
    }


def test_it_gives_no_safety_recall_without_a_safety_critical_state():
    safety = _score(_ratings(client_states={11: {"affect_contact"}}), _ratings(client_states={11: set()}))["safety"]
    assert safety == {"support": 0, "found": 0, "recall": None, "missed": []}


def test_it_scores_the_stage_with_a_confusion_matrix():
    reference = _ratings(stage={1: "라포", 2: "라포", 3: "탐색", 4: "탐색", 5: "개입"})
    rater = _ratings(stage={1: "라포", 2: "탐색", 3: "탐색", 4: "탐색", 5: "정리"})
    result = _score(reference, rater)["axes"]["stage"]
    # Right on 1, 3, 4 → accuracy 0.6.
    # F1: 라포 TP 1 FN 1 → 0.6667; 탐색 TP 2 FP 1 → P 0.6667 R 1 → 0.8; 개입 0; 정리 0
    # → macro (0.6667 + 0.8) / 4 = 0.3667.
    # κ: pe = (2/5)(1/5) + (2/5)(3/5) + (1/5)·0 + 0·(1/5) = 8/25 = 0.32 → (0.6 − 0.32) / 0.68 = 0.4118.
    assert result == {
        "turns": 5,
        "accuracy": 0.6,
        "macro_f1": 0.3667,
        "kappa": 0.4118,
        "confusion": {"라포": {"라포": 1, "탐색": 1}, "탐색": {"탐색": 2}, "개입": {"정리": 1}},
    }


def test_it_counts_a_missing_dialog_act_as_the_class_none():
    reference = _ratings(dialog_act={1: "inform", 2: NO_ACT, 3: "question", 4: NO_ACT})
    rater = _ratings(dialog_act={1: "inform", 2: NO_ACT, 3: NO_ACT, 4: "question"})
    result = _score(reference, rater)["axes"]["dialog_act"]
    # Right on 1, 2 → 0.5. F1: inform 1; question TP 0 → 0; none TP 1 FP 1 FN 1 → 0.5 → macro 0.5.
    # κ: pe = (1/4)² + (1/4)² + (2/4)² = 0.375 → (0.5 − 0.375) / 0.625 = 0.2.
    assert result == {
        "turns": 4,
        "accuracy": 0.5,
        "macro_f1": 0.5,
        "kappa": 0.2,
        "confusion": {"inform": {"inform": 1}, "question": {"none": 1}, "none": {"none": 1, "question": 1}},
    }


def test_it_counts_only_turns_both_sides_rated_on_each_axis():
    reference = _ratings(
        techniques={1: {"empathy"}, 2: {"reflection"}},
        stage={1: "탐색", 2: "탐색", 11: "탐색"},
        dialog_act={1: "inform", 2: "inform", 11: NO_ACT},
    )
    # The rater rated techniques on turn 1 only, the stage on 2 and 11, and no dialog act at all.
    rater = _ratings(techniques={1: {"empathy"}}, stage={2: "탐색", 11: "개입"})
    result = _score(reference, rater)
    assert result["turns"] == 3  # 1 (techniques), 2 and 11 (stage)
    assert result["axes"]["techniques"]["turns"] == 1
    assert result["axes"]["stage"]["turns"] == 2
    assert result["axes"]["dialog_act"] == {
        "turns": 0,
        "accuracy": None,
        "macro_f1": None,
        "kappa": None,
        "confusion": {},
    }
    assert result["axes"]["client_states"]["turns"] == 0


def test_it_scores_agreement_on_none_of_the_labels_as_no_label_at_all():
    result = _score(_ratings(techniques={1: set(), 2: set()}), _ratings(techniques={1: set(), 2: set()}))
    # No label either side: nothing to average (macro, κ null); micro F1 0 by "0 when the denominator is 0".
    assert result["axes"]["techniques"] == {"turns": 2, "micro_f1": 0.0, "macro_f1": None, "kappa": None, "labels": {}}


def test_it_computes_krippendorffs_alpha_with_three_raters():
    # Stage of two turns by three sources: turn 1 = (라포, 라포, 탐색), turn 2 = (탐색, 탐색, 탐색).
    # Coincidences (pairs within a unit, weight 1/(m−1) = 1/2): turn 1 gives o(라포,라포) 1,
    # o(라포,탐색) 1, o(탐색,라포) 1; turn 2 gives o(탐색,탐색) 3. n(라포) 2, n(탐색) 4, n 6.
    # Do = 2/6; De = 2·2·4 / (6·5) = 16/30; α = 1 − (1/3)/(16/30) = 1 − 0.625 = 0.375.
    sources = [
        _ratings(stage={1: "라포", 2: "탐색"}),
        _ratings(stage={1: "라포", 2: "탐색"}),
        _ratings(stage={1: "탐색", 2: "탐색"}),
    ]
    assert krippendorff_alpha(sources, "stage") == {"sources": 3, "turns": 2, "alpha": 0.375}


def test_it_computes_alpha_on_a_multi_label_axis_per_turn_and_label():
    # Units (turn, label) valued present/absent, labels used: empathy, reflection.
    # (1, empathy) = (1, 1, 1); (1, reflection) = (0, 0, 1); (2, empathy) = (0, 0, 0); (2, reflection) = (1, 1, 1).
    # Coincidences: o(1,1) = 3 + 3 + 1·(2/2)… counted: (1,empathy) 3 ones → o11 += 3; (2,reflection) o11 += 3;
    # (2,empathy) o00 += 3; (1,reflection) two 0s and one 1 → o00 += 1, o01 += 1, o10 += 1.
    # o11 6, o00 4, o01 1, o10 1; n1 7, n0 5, n 12. Do = 2/12; De = 2·7·5 / (12·11) = 70/132.
    # α = 1 − (2/12)/(70/132) = 1 − 0.31429 = 0.6857.
    sources = [
        _ratings(techniques={1: {"empathy"}, 2: {"reflection"}}),
        _ratings(techniques={1: {"empathy"}, 2: {"reflection"}}),
        _ratings(techniques={1: {"empathy", "reflection"}, 2: {"reflection"}}),
    ]
    assert krippendorff_alpha(sources, "techniques") == {"sources": 3, "turns": 2, "alpha": 0.6857}


def test_it_gives_no_alpha_below_three_sources_or_without_variation():
    two = [_ratings(stage={1: "라포"}), _ratings(stage={1: "탐색"})]
    assert krippendorff_alpha(two, "stage") == {"sources": 0, "turns": 0, "alpha": None}
    same = [_ratings(stage={1: "라포"}) for _ in range(3)]
    assert krippendorff_alpha(same, "stage")["alpha"] is None


@pytest.mark.parametrize("axis", ["techniques", "stage"])
def test_it_rounds_every_figure_to_four_decimals(axis):
    values = {"techniques": {1: {"empathy"}, 2: set(), 3: set()}, "stage": {1: "라포", 2: "탐색", 3: "탐색"}}
    other = {"techniques": {1: {"empathy"}, 2: {"empathy"}, 3: set()}, "stage": {1: "라포", 2: "라포", 3: "탐색"}}
    result = _score(_ratings(**{axis: values[axis]}), _ratings(**{axis: other[axis]}))["axes"][axis]
    numbers = [v for v in result.values() if isinstance(v, float)]
    assert numbers and all(round(v, 4) == v for v in numbers)


def test_it_scores_an_axis_where_only_one_label_was_used():
    result = _score(
        _ratings(techniques={1: {"empathy"}, 2: set()}), _ratings(techniques={1: {"empathy"}, 2: {"empathy"}})
    )
    # empathy: TP 1, FP 1 → P 0.5, R 1, F1 0.6667; po 0.5, pe 0.5·1 + 0.5·0 = 0.5 → κ 0.
    assert result["axes"]["techniques"] == {
        "turns": 2,
        "micro_f1": 0.6667,
        "macro_f1": 0.6667,
        "kappa": 0.0,
        "labels": {"empathy": {"precision": 0.5, "recall": 1.0, "f1": 0.6667, "support": 1, "kappa": 0.0}},
    }
