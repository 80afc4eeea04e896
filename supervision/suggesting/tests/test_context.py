"""The suggester reads a turn with the turns before it in its session: the safety scorer the counselor's
question and the client's own words before that ("그렇게 한 거예요" points back). Every way into the model —
training, ``suggest_labels --input`` (lines by seq in any order, lines without seq, windows) — puts that
context together the same way (``features.turn_input``); the import's and the refresh's are in
``test_import_suggestions`` and ``test_turn_rewritten``."""

import json
import math
import random

from supervision.suggesting.engine.corpus import inputs, read_golden_lines
from supervision.suggesting.engine.features import FeatureSpec, TurnInput, session_inputs, turn_input
from supervision.suggesting.loading import current_model
from supervision.suggesting.reading import read_input

SPEAKERS = ("counselor", "client")


def session_lines(code: str, count: int) -> list[dict]:
    return [
        {
            "session": code,
            "utterance_id": f"{code}-{'CK'[seq % 2]}-{seq // 2 + 1:03d}",
            "speaker": SPEAKERS[seq % 2],
            "stage": "탐색",
            "seq": seq,
            "text": f"{code}의 {seq}번째 발화",
            "nonverbal": [],
        }
        for seq in range(count)
    ]


def test_a_turn_is_read_with_the_nearest_turns_before_it_first_and_no_more_than_asked():
    turns = [("가", "라포", ()), ("나", "탐색", ()), ("다", "탐색", ()), ("라", "개입", ())]
    assert [(t.previous, t.context) for t in session_inputs(turns, 3)] == [
        ("", ""),
        ("가", ""),
        ("나", "가"),
        ("다", "나 가"),
    ]
    assert [(t.previous, t.context) for t in session_inputs(turns, 1)] == [("", ""), ("가", ""), ("나", ""), ("다", "")]
    # a turn missing before (a gap in seq) leaves no stray space behind
    assert turn_input("라", "개입", (), ["", "나", "가"]) == TurnInput("라", "개입", (), "", "나 가")


def test_training_and_suggest_labels_input_read_a_session_with_the_same_context():
    lines = session_lines("CTXA", 7) + session_lines("CTXB", 5)
    expected = session_inputs(((t["text"], t["stage"], []) for t in lines[:7]), 3) + session_inputs(
        ((t["text"], t["stage"], []) for t in lines[7:]), 3
    )
    assert inputs(read_golden_lines(lines, "test"), 3) == expected

    def read(given: list[dict]) -> list[TurnInput]:
        found = read_input("\n".join(json.dumps(line, ensure_ascii=False) for line in given).encode(), 3)
        assert not found.errors
        by_id = dict(zip(found.utterance_ids, found.inputs, strict=True))
        return [by_id[line["utterance_id"]] for line in lines]

    shuffled = lines[:]
    random.Random(7).shuffle(shuffled)  # sessions interleaved, each in no order: read by seq
    assert read(shuffled) == expected
    assert read([{k: v for k, v in line.items() if k != "seq"} for line in lines]) == expected  # file order
    windows = [{"window_id": "W1", "turns": lines[:7]}, {"window_id": "W2", "turns": lines[7:]}]
    found = read_input("\n".join(json.dumps(w, ensure_ascii=False) for w in windows).encode(), 3)
    assert found.inputs == expected


def test_a_model_file_without_context_reads_as_before_and_one_with_it_keeps_it():
    older = {"bits": 20, "text_ngrams": [1, 4], "previous_ngrams": [0, 0]}
    assert FeatureSpec.from_dict(older) == FeatureSpec()
    assert FeatureSpec().turns_before == 1
    assert FeatureSpec().as_dict() == older
    spec = FeatureSpec(previous_ngrams=(2, 4), context_ngrams=(2, 3), context_turns=2)
    assert FeatureSpec.from_dict(spec.as_dict()) == spec
    assert spec.turns_before == 3


def test_the_shipped_safety_scorer_reads_what_the_client_said_before():
    """The same vague answer to the same question ("그게 요즘 더 자주 나요": what is?) is clearly more likely an
    admission of suicidal thoughts when the client's words before were about wanting to die than when they
    were about the gym or late-night snacks."""
    model = current_model()
    assert model.turns_before == 5
    question, answer = "그 얘기를 좀 더 해 볼까요?", "그게 요즘 더 자주 나요."
    earlier = {
        "thoughts": "죽고 싶다는 생각이 계속 들어요.",
        "gym": "헬스장에 다시 나가기 시작했어요.",
        "snacks": "요즘 야식을 자주 먹어요.",
    }
    column = model.axes["client_states"].labels.index("suicidal_ideation_admit")
    probability = {}
    for topic, said in earlier.items():
        read = session_inputs([(said, "탐색", ()), (question, "탐색", ()), (answer, "탐색", ())], model.turns_before)
        [(_axis, _rows, _turns, probabilities)] = list(model.probabilities(read[-1:], ["client"]))
        probability[topic] = float(probabilities[0, column])
    # A scorer blind to the context would give the three the same probability. What the context adds is a sum in
    # the scorer's log-odds (its columns are added there), so that is where it is measured: the base rate of the
    # vague answer alone moves with every round of writers, the context's share much less. portal-suggester-7 …
    # -10 (two turns of context) scored it more than twice as likely; -11 (four turns) 0.50 against 0.25 and 0.25
    # (1.10 in log-odds); -15 0.51 against 0.24 and 0.36 (0.62), -17 0.62 against 0.37 and 0.48 (0.57), -19 0.72
    # against 0.47 and 0.61 (0.50), -26 0.35 against 0.17 and 0.23 (0.58), -27 0.20 against 0.11 and 0.11 (0.75).
    odds = {topic: math.log(p / (1 - p)) for topic, p in probability.items()}
    assert odds["thoughts"] - max(odds["gym"], odds["snacks"]) > 0.4, probability
