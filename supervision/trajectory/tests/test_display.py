"""The trainee's words for an audited window (their session page)."""

from supervision.trajectory.display import trainee_summary


def _window(label: str, valence: tuple[float, float], risk: tuple[float, float] = (0.0, 0.0)) -> dict:
    return {
        "label": label,
        "first_seq": 0,
        "last_seq": 9,
        "trace": [{"valence": valence[0], "risk": risk[0]}, {"valence": valence[1], "risk": risk[1]}],
    }


def test_a_neutral_window_whose_mood_rose_does_not_say_nothing_changed():
    # Found on an unlabelled session audited on AI labels: "큰 변화 없는 흐름. 내담자의 정서가 밝아졌어요 (-0.94 → +0.85)".
    summary = trainee_summary(_window("neutral", (-0.94, 0.85)))
    assert summary.startswith("1–10번째 발화: 좋아졌는지 나빠졌는지 뚜렷하지 않은 흐름.")
    assert "밝아졌어요 (-0.94 → +0.85)" in summary
    assert "변화 없" not in summary


def test_it_names_the_flow_the_mood_and_a_rising_risk_in_korean_only():
    summary = trainee_summary(_window("harmful", (0.2, -0.5), risk=(0.1, 0.8)))
    assert "함께 살펴볼 흐름" in summary
    assert "가라앉았어요 (+0.20 → -0.50)" in summary
    assert "위험 신호가 높아졌어요 (0.10 → 0.80)" in summary
    assert not any("a" <= ch.lower() <= "z" for ch in summary)


def test_the_supervisors_words_for_the_verdict_and_the_terms_it_drops():
    from supervision.trajectory.display import supervisor_explanation
    from supervision.trajectory.engine.audit import audit_window
    from supervision.trajectory.tests.test_engine import STEALTH

    text = supervisor_explanation(audit_window(STEALTH).explanation, verdict=False)
    assert text.startswith("판정 확률: 생산적 0.01 · 중립적 0.00 · 해로운 0.99; 규칙 엔진 합계 -2.53.")
    for term in ("verdict layer", "engine_score", "momentum", "penalty_wall", "GED", " ."):
        assert term not in text
    assert supervisor_explanation("표현이 감지되었습니다 (overt_harm).") == "표현이 감지되었습니다."


def test_a_mood_that_moved_against_the_verdict_is_said_to_as_a_but():
    # Found in the walk-through: "나아지는 흐름. 내담자의 정서가 가라앉았어요 (+0.42 → +0.20)" read as a contradiction.
    summary = trainee_summary(_window("productive", (0.42, 0.20), risk=(0.6, 0.2)))
    assert "나아지는 흐름. 다만 구간 끝에서 내담자의 정서는 처음보다 가라앉았어요 (+0.42 → +0.20)." in summary
    assert "위험 신호는 낮아졌어요 (0.60 → 0.20)." in summary
    summary = trainee_summary(_window("harmful", (-0.5, 0.1)))
    assert "다만 구간 끝에서 내담자의 정서는 처음보다 밝아졌어요" in summary
    assert "다만" not in trainee_summary(_window("productive", (0.1, 0.6)))


def test_the_supervisors_momentum_sentence_claims_one_of_the_two_not_both():
    # "정서가 개선과 위험 감소가 이어졌습니다" beside "위험 0.00 → 0.00": momentum weighs valence and risk together.
    from supervision.trajectory.display import supervisor_explanation
    from supervision.trajectory.engine.audit import audit_window
    from supervision.trajectory.tests.test_engine import STEALTH

    text = supervisor_explanation(audit_window(STEALTH).explanation)
    assert "구간 앞부분보다 뒷부분에서 정서가 나빠지거나 위험이 커졌습니다 (흐름 세기 -0.49)." in text
