"""Plain pytest tests for the trajectory audit (no Django)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from supervision.trajectory.engine.audit import audit_window
from supervision.trajectory.engine.config import AuditConfig
from supervision.trajectory.engine.distance import DistanceWeights, clinical_distance, symmetric_kl
from supervision.trajectory.engine.extractor import classify_counselor, extract_state
from supervision.trajectory.engine.graph import (
    GedCosts,
    build_graph,
    chain_graph,
    distances_to_bank,
    graph_edit_distance,
    template_bank,
)
from supervision.trajectory.engine.io import audit_jsonl
from supervision.trajectory.engine.resources import load_resources

W = DistanceWeights.from_mapping(load_resources().model["distance"])
COSTS = GedCosts(np.array([1.0, 1.0, 1.0, 0.0]), 0.5, np.array([1.0, 0.0]), 0.25)


def client(text: str, seq: int = 0, states: list[str] | None = None) -> dict:
    return {
        "utterance_id": f"X-K-{seq + 1:03d}",
        "speaker": "client",
        "seq": seq,
        "text": text,
        "client_states": states or [],
        "techniques": [],
    }


def counselor(text: str, seq: int, techniques: list[str] | None = None) -> dict:
    return {
        "utterance_id": f"X-C-{seq + 1:03d}",
        "speaker": "counselor",
        "seq": seq,
        "text": text,
        "techniques": techniques or [],
        "client_states": [],
    }


# --- distance -------------------------------------------------------------------------------------


def test_it_penalises_deterioration_more_than_recovery():
    calm, worse = (0.2, 0.1, 0.1), (-0.4, 0.5, 0.5)
    assert clinical_distance(calm, worse, W) > clinical_distance(worse, calm, W)


def test_symmetric_variant_charges_both_directions_equally():
    sym = W.symmetrised()
    a, b = (0.2, 0.1, 0.1), (-0.4, 0.5, 0.5)
    assert clinical_distance(a, b, sym) == pytest.approx(clinical_distance(b, a, sym))


def test_distance_to_itself_is_zero_and_kl_is_symmetric():
    assert clinical_distance((0.1, 0.2, 0.3), (0.1, 0.2, 0.3), W) == 0.0
    p, q = [0.7, 0.3, 0.0], [0.2, 0.3, 0.5]
    assert symmetric_kl(p, q, 0.02) == pytest.approx(symmetric_kl(q, p, 0.02))
    assert symmetric_kl(p, p, 0.02) == pytest.approx(0.0)


# --- graph edit distance --------------------------------------------------------------------------


def _chain(points):
    return chain_graph(points, [0.0] * (len(points) - 1), W)


def test_identical_graphs_have_zero_edit_distance():
    g = _chain([(-0.5, 0.3, 0.4), (-0.2, 0.2, 0.3), (0.3, 0.0, 0.1)])
    assert graph_edit_distance(g, g, COSTS) == pytest.approx(0.0)


def test_one_extra_node_costs_one_node_and_one_edge_insertion():
    # Hand-built graphs without edge attributes: A->B versus A->B->C.
    z = np.zeros(2)
    nodes3 = np.array([[0.0, 0, 0, 0], [1.0, 0, 0, 0], [2.0, 0, 0, 0]])
    g2 = build_graph(nodes3[:2], {(0, 1): z})
    g3 = build_graph(nodes3, {(0, 1): z, (1, 2): z})
    assert graph_edit_distance(g2, g3, COSTS) == pytest.approx(0.5 + 0.25)
    assert graph_edit_distance(g3, g2, COSTS) == pytest.approx(0.5 + 0.25)


def test_node_substitution_costs_the_weighted_feature_difference():
    z = np.zeros(2)
    a = build_graph(np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0]]), {(0, 1): z})
    b = build_graph(np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.2, 0.0, 0.0]]), {(0, 1): z})
    assert graph_edit_distance(a, b, COSTS) == pytest.approx(0.2)


def test_batched_template_distances_match_pairwise_ged():
    g = _chain([(-0.6, 0.4, 0.5), (-0.3, 0.2, 0.4), (0.1, 0.1, 0.2), (0.4, 0.0, 0.0)])
    templates = [_chain([(v, 0.1, 0.2)] * 5) for v in (-0.5, 0.0, 0.5)]
    batched = distances_to_bank(g, template_bank(templates, COSTS), COSTS)
    assert batched == pytest.approx([graph_edit_distance(g, t, COSTS) for t in templates])


# --- extractor ------------------------------------------------------------------------------------


def test_english_negation_cancels_a_label():
    neg, pos = extract_state(client("I'm not worthless")), extract_state(client("I'm worthless"))
    assert pos.top_distortion == "labeling" and pos.valence < 0
    assert neg.top_distortion == "none" and neg.valence > 0


def test_korean_negation_removes_risk():
    yes, no = extract_state(client("죽고 싶어요")), extract_state(client("죽고 싶지 않아요"))
    assert yes.risk > 0.8
    assert no.risk == 0.0
    assert extract_state(client("쓸모없는 사람은 아니에요")).top_distortion == "none"


def test_a_negation_inside_a_condition_does_not_deny():
    # "If I don't punish myself ..." is a condition: the self-punishment stays a cue.
    cond = extract_state(client("If I don't punish myself I'll get worse."))
    assert cond.risk > 0.5 and cond.valence < 0
    assert extract_state(client("I don't want to hurt myself.")).risk == 0.0
    assert extract_state(client("자해하지 않으면 못 견뎌요")).risk > 0.5


def test_a_negated_positive_cue_is_nearly_its_opposite():
    # Negation is asymmetric: "not okay" is clearly negative, "not worthless" only mildly positive.
    not_ok, ok = extract_state(client("I'm not okay.")), extract_state(client("I'm okay."))
    assert not_ok.valence < 0 and abs(not_ok.valence) > 0.6 * ok.valence
    not_worthless = extract_state(client("I'm not worthless"))
    assert 0 < not_worthless.valence < abs(not_ok.valence)
    for text in ("안 괜찮아요", "괜찮지 않아요", "I can't calm down.", "Nothing feels good."):
        assert extract_state(client(text)).valence < 0, text


def test_english_contractions_and_without_negate():
    for text in ("I can't calm down.", "I couldn't feel better.", "I haven't been hopeful.", "without hope"):
        assert extract_state(client(text)).valence < 0, text
    assert extract_state(client("Nothing bad happened, I stayed calm.")).valence > 0


def test_korean_absence_denies_a_positive_cue_only():
    # 없 after a positive cue denies it ("희망 없어요", "나아진 게 없어요") ...
    assert extract_state(client("나아진 게 없어요")).valence < 0
    assert extract_state(client("요즘은 여유가 없어요")).valence < 0
    # ... but a negative stem written to stop before 없 is completed by it, not denied.
    assert extract_state(client("말해도 소용없네요")).valence < 0
    assert extract_state(client("저 같은 건 없어요")).valence < 0
    # "X이/가 안 돼요/나요" after a cue is a negation of that cue.
    assert extract_state(client("걱정이 안 돼요")).valence > 0
    assert extract_state(client("화가 안 나요")).valence > 0


def test_a_negated_approach_word_is_a_negative_cue():
    for text in ("I'm not looking forward to it.", "It wasn't helpful.", "There's nothing I'm looking forward to."):
        assert extract_state(client(text)).valence < 0, text
    for text in ("안 기대돼요", "기대가 안 돼요", "재미있지 않아요", "의미 없어요", "재미없어요"):
        assert extract_state(client(text)).valence < 0, text
    assert extract_state(client("I'm looking forward to it.")).valence > 0
    assert extract_state(client("기대돼요")).valence > 0


def test_anhedonia_and_giving_up_with_an_inner_negation_stay_negative():
    # The negation is part of the complaint, not a denial of it.
    for text in (
        "I don't see the point anymore.",
        "I don't feel like doing anything.",
        "I just can't be bothered.",
        "아무것도 하기 싫어요",
        "더는 못 하겠어요",
        "의욕이 안 생겨요",
    ):
        assert extract_state(client(text)).valence < 0, text


def test_a_negation_reaches_through_hedge_adverbs():
    # "don't really see the point" is the complaint "don't see the point", not a negated "really".
    assert extract_state(client("I don't really see the point anymore.")).valence < 0
    assert extract_state(client("I don't really feel like doing much.")).valence < 0
    assert extract_state(client("I'm not really looking forward to it.")).valence < 0
    # A hedge without a negator before it is untouched.
    assert extract_state(client("I'm really looking forward to it.")).valence > 0


def test_english_inflections_fold_onto_the_lexicon_entry():
    from supervision.trajectory.engine.lexicon import fold_inflection

    # Inflections and common irregular past forms meet the entry; derivations stay apart.
    assert {fold_inflection(t) for t in ("give", "gives", "giving", "gave", "given")} == {fold_inflection("give")}
    assert fold_inflection("hopelessly") == fold_inflection("hopeless")
    assert fold_inflection("worsening") == fold_inflection("worsen")
    assert fold_inflection("hopeful") != fold_inflection("hope")
    assert fold_inflection("nothing") == "nothing"
    for text in ("I gave up on it.", "I'm giving up.", "I feel hopelessly stuck.", "He gives up on me, I give up."):
        assert extract_state(client(text)).valence < 0, text


def test_negation_still_applies_to_a_folded_match():
    # "looking forward" matched through "looked forward" keeps its negation, and a negated folded risk cue
    # ("haven't been cutting" -> "cutting") loses its risk.
    assert extract_state(client("I looked forward to it.")).valence > 0
    assert extract_state(client("I never looked forward to it.")).valence < 0
    assert extract_state(client("I cut myself again.")).risk > 0.3
    assert extract_state(client("I haven't cut myself since.")).risk == 0.0
    assert extract_state(client("I'm not giving up.")).valence > 0


def test_entries_marked_exact_do_not_fold():
    # "it happens" (normalising) is not the narrative "it happened"; "helped me" is not the plea "help me".
    res = load_resources()
    assert any(h.payload.valence > 0 for h in res.client_lexicon.scan("it happens to everyone"))
    assert all(h.payload.valence <= 0 for h in res.client_lexicon.scan("it happened on friday"))
    assert all(h.payload.valence <= 0 for h in res.client_lexicon.scan("please help me"))
    assert any(h.payload.valence > 0 for h in res.client_lexicon.scan("that helped me"))


def test_living_on_is_not_relief():
    # "살 것 같아요" alone is relief ("I can breathe again"); "-고/-게 살 것 같아요" predicts how one will live.
    assert extract_state(client("이제 좀 살 것 같아요")).valence > 0
    assert extract_state(client("평생 이렇게 살 것 같아요")).valence < 0
    assert extract_state(client("아무랑도 안 만나고 살 것 같아요")).valence <= 0


def test_clause_patterns_respect_negation():
    assert extract_state(client("I think I can handle it.")).valence > 0
    assert extract_state(client("I don't think I can handle it.")).valence < 0
    assert extract_state(client("할 수 있을 것 같아요")).valence > 0
    assert extract_state(client("할 수 있을 것 같지 않아요")).valence < 0
    # A long negation before the commitment ending is not a commitment.
    assert extract_state(client("하지 않을게요")).valence <= 0


def test_approach_words_in_a_risk_turn_are_damped():
    # The plan describes the risk behaviour; a safety cue keeps its weight.
    assert extract_state(client("Maybe I'll make myself throw up.")).valence < 0
    assert (
        extract_state(client("I want to die but I'll call the crisis line.")).risk
        < extract_state(client("I want to die.")).risk
    )


def test_korean_commitment_ending_is_a_plan():
    assert extract_state(client("내일 먼저 판단할게요.")).valence > 0
    assert extract_state(client("내일 안 할게요.")).valence <= 0


def test_disclosed_risk_persists_until_released():
    cutting = client("I've started cutting again.", 0)
    low = client("I feel so empty.", 2)
    better = client("Talking helped, I feel calmer now.", 2)
    quiet = audit_window([cutting, counselor("Thank you for telling me.", 1), low]).states
    assert quiet[1]["risk"] >= 0.9 * quiet[0]["risk"]
    released = audit_window([cutting, counselor("Thank you for telling me.", 1), better]).states
    assert released[1]["risk"] == 0.0


def test_intensifiers_strengthen_the_effect():
    assert extract_state(client("I feel so sad")).valence < extract_state(client("I feel sad")).valence
    assert extract_state(client("너무 힘들어요")).valence < extract_state(client("힘들어요")).valence


def test_label_mapping_raises_risk_and_labeling():
    si = extract_state(client("...", states=["suicidal_ideation_admit"]))
    assert si.risk > 0.9
    nsp = extract_state(client("...", states=["negative_self_perception"]))
    assert nsp.top_distortion == "labeling" and nsp.valence < -0.4
    plan = extract_state(client("...", states=["expresses_plan"]))
    assert plan.valence > 0.3 and plan.risk == 0.0


def test_labels_are_ignored_when_use_labels_is_off():
    s = extract_state(client("...", states=["suicidal_ideation_admit"]), config=AuditConfig(use_labels=False))
    assert s.risk == 0.0 and s.cue_count == 0


def test_distribution_is_a_probability_distribution():
    s = extract_state(client("Everyone thinks I'm useless and it's all my fault. It's a disaster."))
    assert sum(s.distribution) == pytest.approx(1.0)
    assert len(s.distribution) == 11 and all(p >= 0 for p in s.distribution)
    assert -1 <= s.valence <= 1 and 0 <= s.arousal <= 1 and 0 <= s.risk <= 1


def test_counselor_stance_from_labels_and_from_phrasing():
    assert classify_counselor(counselor("...", 1, ["validation"])).stance == "supportive"
    assert classify_counselor(counselor("What evidence do you have for that?", 1)).stance == "challenging"
    assert classify_counselor(counselor("그럴 만해요. 충분히 이해돼요.", 1)).stance == "supportive"
    # Text that endorses the distortion overrides a neutral-looking label.
    colluding = counselor("She knows exactly what she's doing.", 1, ["interpretation"])
    assert classify_counselor(colluding).stance == "colluding"


# --- audit ----------------------------------------------------------------------------------------

STEALTH = [
    client("I failed again. I'm such a failure.", 0),
    counselor("Of course you feel that way. Anyone would.", 1, ["validation"]),
    client("Everyone thinks I'm useless. It's hopeless.", 2),
    counselor("I hear you. That must be so hard.", 3, ["empathy"]),
    client("Nothing will change. I want to die.", 4),
    counselor("Your feelings are totally valid.", 5, ["validation"]),
]

GOLDEN = (
    "궤적 판정: 해로운(harmful), 점수 -0.99. 판정층(verdict layer) 확률: 생산적 0.01 · 중립적 0.00 · 해로운 0.99; "
    "규칙 엔진 합계(engine_score) -2.53. 내담자 상태 3개: 정서가(valence) -0.72 → -0.89, 위험(risk) 0.00 → 0.92, "
    "고위험 왜곡 질량(high_risk_mass) 0.55 → 0.53. 가장 가까운 템플릿: risk_escalation (GED 0.56). "
    "주된 인지 왜곡: 점쟁이 오류(fortune_telling). 구간 앞부분보다 뒷부분에서 정서(valence)가 나빠지거나 위험이 "
    "커졌습니다 (momentum -0.49). "
    "위험 임계치 부근에서 페널티 벽이 작동했습니다 (penalty_wall 1.00, 최대 risk 0.92). "
    "은밀한 아첨(stealth sycophancy) 의심: 상담자 발화 X-C-002, X-C-004, X-C-006이(가) 지지 반응만 제공했고, "
    "지속된 점쟁이 오류(fortune_telling), 위험 상승(risk 0.00 → 0.92)에 도전하지 않았습니다. "
    "이 결과는 검토 보조 자료이며 임상적 판단이 아닙니다."
)


def test_momentum_compares_the_end_with_the_start():
    from supervision.trajectory.engine.extractor import ClinicalState
    from supervision.trajectory.engine.scoring import momentum

    def st(v: float) -> ClinicalState:
        return ClinicalState(0, "", v, 0.3, 0.0, (0.0,) * 10 + (1.0,), 0.0, "none", 1)

    p = load_resources().model["score"]
    assert p["momentum_form"] == "end_start"
    late_dip = momentum([st(-0.6), st(-0.2), st(0.2), st(0.5), st(0.3)], p)
    one_good_last_step = momentum([st(-0.2), st(-0.5), st(-0.7), st(-0.8), st(0.0)], p)
    assert late_dip > 0.3  # gains kept despite the dip at the end
    assert one_good_last_step > 0.0 and one_good_last_step < late_dip / 2  # ends about where it started
    assert momentum([st(0.2), st(-0.1), st(-0.4), st(-0.6)], p) < -0.3


def test_surface_positive_labels_do_not_read_as_progress():
    text = "네, 맞아요. 괜찮아요."
    plain = extract_state(client(text)).valence
    for code in ("compliant_surface", "apparent_competence", "affect_masking"):
        assert extract_state(client(text, states=[code])).valence < plain
    for code in ("affect_contact", "responds_to_exploration", "defense_loosening", "expresses_plan"):
        assert extract_state(client("", states=[code])).valence > 0.15


def test_golden_explanation_for_a_stealth_sycophancy_window():
    result = audit_window(STEALTH)
    assert result.label == "harmful"
    assert result.sycophancy_turns == ["X-C-002", "X-C-004", "X-C-006"]
    assert result.explanation == GOLDEN


def test_productive_window_scores_above_harmful_one():
    productive = [
        client("I'm stupid, I always fail.", 0, ["negative_self_perception"]),
        counselor("What evidence do you have for and against that?", 1, ["cognitive_restructuring"]),
        client("I guess I passed the other exams, so maybe it's not always.", 2, ["thought_organizing"]),
        counselor("What's one small step you could take?", 3, ["homework"]),
        client("I'll try asking for feedback on Monday. I feel calmer.", 4, ["expresses_plan"]),
    ]
    good = audit_window(productive)
    assert good.label == "productive" and good.sycophancy_turns == []
    assert good.score > audit_window(STEALTH).score
    assert good.explanation.endswith("이 결과는 검토 보조 자료이며 임상적 판단이 아닙니다.")


def test_audit_is_deterministic():
    runs = {json.dumps(audit_window(STEALTH).__repr__()) for _ in range(3)}
    assert len(runs) == 1
    lines = [json.dumps({"window_id": "W1", "turns": STEALTH})]
    assert list(audit_jsonl(lines)) == list(audit_jsonl(lines))


def test_window_without_client_turns_is_neutral():
    result = audit_window([counselor("Hello.", 0)])
    assert result.label == "neutral" and result.states == []


# --- io -------------------------------------------------------------------------------------------


def test_audit_jsonl_yields_contract_shape():
    out = list(audit_jsonl([json.dumps({"window_id": "W1", "turns": STEALTH}), ""]))
    assert len(out) == 1
    assert set(out[0]) == {"window_id", "label", "score", "explanation", "labels"}
    assert out[0]["window_id"] == "W1" and out[0]["label"] == "harmful"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: JSON:"),
        ("[1, 2]", "line 2: window:"),
        ('{"turns": []}', "line 2: window_id"),
        ('{"window_id": "W", "turns": {}}', "line 2: turns:"),
        ('{"window_id": "W", "turns": [{"speaker": "robot"}]}', "line 2: turns[0].speaker"),
        ('{"window_id": "W", "turns": [{"speaker": "client", "seq": "1"}]}', "line 2: turns[0].seq"),
    ],
)
def test_audit_jsonl_names_the_malformed_line(line, message):
    good = json.dumps({"window_id": "W1", "turns": STEALTH})
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        list(audit_jsonl([good, line]))


def test_batched_audit_gives_the_one_by_one_results():
    from pathlib import Path

    from supervision.trajectory.engine.audit import audit_windows

    data = Path(__file__).resolve().parents[3] / "benchmarks" / "trajectory" / "generated-tune.jsonl"
    windows = [json.loads(line)["turns"] for line in data.read_text(encoding="utf-8").splitlines()[:40]]
    windows.append([])  # no client turn at all
    batched = audit_windows(windows)
    for turns, got in zip(windows, batched, strict=True):
        one = audit_window(turns)
        assert (got.label, got.explanation, got.states) == (one.label, one.explanation, one.states)
        assert got.score == pytest.approx(one.score, abs=1e-9)


def test_chain_distances_match_the_generic_ged():
    from supervision.trajectory.engine.graph import chain_distances, window_arrays
    from supervision.trajectory.engine.scoring import _setup

    weights, costs, banks = _setup(None, False)
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 8):
        pts = rng.uniform([-1, 0, 0], [1, 1, 1], size=(3, n, 3))
        dists = rng.dirichlet(np.ones(11), size=(3, n))
        nodes, edges = window_arrays(pts.tolist(), dists.tolist(), weights)
        got = chain_distances(nodes, edges, banks[0], costs)
        for b in range(3):
            kls = edges[b, :, 1].tolist()
            g = chain_graph([tuple(p) for p in pts[b]], kls, weights)
            want = [graph_edit_distance(g, t, costs) for t in banks[0].graphs]
            assert got[b].tolist() == pytest.approx(want, abs=1e-9)
