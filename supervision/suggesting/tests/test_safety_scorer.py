"""The safety states' own scorer (issue 32): it reads n-grams across words and the turn before (the
counselor's question), its thresholds come from the inner cross-validation, and it travels in the model file."""

import numpy as np

from supervision.suggesting.engine.corpus import LabelledTurn, inputs
from supervision.suggesting.engine.features import FeatureSpec, TurnInput, turn_buckets
from supervision.suggesting.engine.model import SuggesterModel, load_model, save_model
from supervision.suggesting.engine.training import Settings, arrays_of, axes_meta, fit, safety_meta
from taxonomy import catalogue

CODES = {"techniques": catalogue.TECHNIQUE_CODES, "client_states": catalogue.CLIENT_STATE_CODES}
SAFETY = catalogue.SAFETY_CRITICAL_STATES
RISK_QUESTION = "혹시 죽고 싶다는 생각까지 드세요?"
ROUTINE_QUESTION = "요즘 운동은 꾸준히 하세요?"


def _session(name: str, question: str, answer: str, states: list[str]) -> list[LabelledTurn]:
    rows = [
        ("counselor", "오늘 어떻게 지내셨어요?", ["facilitative_question"], []),
        ("client", "그냥 그랬어요. 일이 많았어요.", [], ["responds_to_exploration"]),
        ("counselor", question, ["risk_assessment" if question == RISK_QUESTION else "exploration"], []),
        ("client", answer, [], states),
    ]
    return [
        LabelledTurn(
            name,
            seq,
            f"{name}-{'C' if who == 'counselor' else 'K'}-{seq // 2 + 1:03d}",
            who,
            "탐색",
            text,
            techniques=techniques,
            client_states=client_states,
        )
        for seq, (who, text, techniques, client_states) in enumerate(rows)
    ]


def _corpus() -> list[LabelledTurn]:
    answers = ["네, 자주요.", "네… 요즘 거의 매일이요.", "가끔요. 밤에 특히요.", "네, 꽤 자주 그래요."]
    turns = []
    for n in range(24):
        answer = answers[n % len(answers)]
        if n % 2:
            turns += _session(f"R{n:02d}", RISK_QUESTION, answer, ["suicidal_ideation_admit"])
        else:
            turns += _session(f"R{n:02d}", ROUTINE_QUESTION, answer, ["responds_to_exploration"])
    return turns


def _settings() -> Settings:
    return Settings(max_features=5000, safety_max_features=5000)


def test_ngrams_across_words_tell_a_denial_from_the_same_words_reordered():
    spec, across = FeatureSpec(), FeatureSpec(cross_ngrams=(3, 6))
    said, reordered = TurnInput("죽고 싶은 건 아니에요"), TurnInput("아니에요 건 싶은 죽고")

    def buckets(spec, turn):
        return sorted(turn_buckets([turn], spec)[1].tolist())

    assert buckets(spec, said) == buckets(spec, reordered)  # within words, the same n-grams
    assert buckets(across, said) != buckets(across, reordered)


def test_the_same_answer_is_a_disclosure_after_a_risk_question_and_not_after_a_routine_one():
    fitted = fit(_corpus(), label_codes=CODES, safety=SAFETY, settings=_settings())
    assert fitted.safety is not None and set(fitted.safety.labels) == SAFETY
    model = SuggesterModel(
        meta={"model_version": "portal-suggester-0"},
        vectoriser=fitted.vectoriser,
        axes=fitted.axes,
        safety=fitted.safety,
    )
    answer = "네, 자주요."
    after_risk, after_routine = model.suggest(
        [TurnInput(answer, "탐색", previous=RISK_QUESTION), TurnInput(answer, "탐색", previous=ROUTINE_QUESTION)],
        ["client", "client"],
    )
    assert "suicidal_ideation_admit" in after_risk.labels
    assert "suicidal_ideation_admit" not in after_routine.labels
    assert after_risk.scores["suicidal_ideation_admit"] > 0.5
    # the axis's own columns (the turn's words alone) cannot tell the two apart
    axis = fitted.axes["client_states"]
    own = axis.probabilities(
        fitted.vectoriser.transform([TurnInput(answer, "탐색", previous=p) for p in (RISK_QUESTION, ROUTINE_QUESTION)])
    )
    column = axis.labels.index("suicidal_ideation_admit")
    assert own[0, column] == own[1, column]


def test_the_scorer_travels_in_the_model_file_and_a_file_without_one_still_loads(tmp_path):
    turns = _corpus()
    fitted = fit(turns, label_codes=CODES, safety=SAFETY, settings=_settings())
    meta = {
        "model_version": "portal-suggester-9",
        "training_data_sha256": "0" * 64,
        "features": fitted.vectoriser.spec.as_dict(),
        "axes": axes_meta(fitted),
    }
    path = tmp_path / "with" / "suggester.json"
    save_model(path, meta={**meta, **safety_meta(fitted)}, arrays=arrays_of(fitted))
    loaded = load_model(path)
    assert loaded.safety is not None
    assert loaded.meta["safety"]["features"]["previous_ngrams"] == [2, 4]
    given = inputs(turns)
    speakers = [t.speaker for t in turns]
    fresh = SuggesterModel(meta=meta, vectoriser=fitted.vectoriser, axes=fitted.axes, safety=fitted.safety)
    assert [s.labels for s in loaded.suggest(given, speakers)] == [s.labels for s in fresh.suggest(given, speakers)]

    fitted.safety = None  # a model of before the scorer (portal-suggester-2 and earlier)
    older = tmp_path / "without" / "suggester.json"
    save_model(older, meta=meta, arrays=arrays_of(fitted))
    assert load_model(older).safety is None
    column = fitted.axes["client_states"].labels.index("suicidal_ideation_admit")
    expected = fitted.axes["client_states"].probabilities(fitted.vectoriser.transform(given[3:4]))[0, column]
    assert np.isclose(
        load_model(older).suggest(given[3:4], ["client"])[0].scores.get("suicidal_ideation_admit", expected),
        expected,
        atol=1e-4,
    )
