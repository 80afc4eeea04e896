"""The model file: loaded once, checked before use, refused with a clear message when damaged, and the
portal keeps working without suggestions."""

import json

import pytest
from django.core.management import call_command

from supervision.agreement.models import RunTurn
from supervision.models import Turn
from supervision.suggesting.engine.features import TurnInput
from supervision.suggesting.engine.model import ModelRefused, load_model, weights_path
from supervision.suggesting.loading import DEFAULT_MODEL_PATH, current_model, refusal


def test_it_loads_the_shipped_model_with_its_version_and_training_digest():
    model = load_model(DEFAULT_MODEL_PATH)
    assert model.version.startswith("portal-suggester-")
    assert model.number >= 1
    assert len(model.meta["training_data_sha256"]) == 64
    # from portal-suggester-3 on, the safety states have their own scorer (issue 32)
    assert model.safety is not None
    assert set(model.safety.labels) == {"suicidal_ideation_admit", "self_harm_disclosure"}
    raw = DEFAULT_MODEL_PATH.read_bytes() + weights_path(DEFAULT_MODEL_PATH).read_bytes()
    assert b"pickle" not in raw[:4096]  # plain JSON and .npz arrays


def test_it_loads_once_per_process(model_copy):
    first = current_model()
    assert first is not None
    assert current_model() is first


def test_it_refuses_weights_that_were_changed(model_copy):
    weights = weights_path(model_copy)
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ModelRefused, match="SHA-256"):
        load_model(model_copy)
    assert current_model() is None
    assert "SHA-256" in refusal()


def test_it_refuses_truncated_weights(model_copy):
    weights = weights_path(model_copy)
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ModelRefused, match="가중치"):
        load_model(model_copy)


def test_it_refuses_an_edited_threshold(model_copy):
    meta = json.loads(model_copy.read_text())
    meta["axes"]["client_states"]["thresholds"][0] = 0.99
    model_copy.write_text(json.dumps(meta))
    with pytest.raises(ModelRefused, match="digest"):
        load_model(model_copy)


def test_it_refuses_a_truncated_model_file(model_copy):
    model_copy.write_text(model_copy.read_text()[:200])
    with pytest.raises(ModelRefused, match="잘렸거나"):
        load_model(model_copy)


@pytest.mark.django_db
def test_an_import_with_a_refused_model_still_writes_the_labels_and_no_suggestion(cast, model_copy, tmp_path, caplog):
    weights_path(model_copy).write_bytes(b"not a zip")
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps(
            {
                "utterance_id": "RFS1-C-001",
                "speaker": "counselor",
                "stage": "라포",
                "seq": 0,
                "text": "오늘 어떤 이야기를 하고 싶으세요?",
                "techniques": ["facilitative_question"],
                "client_states": [],
                "source": "test_synthetic",
            },
            ensure_ascii=False,
        )
        + "\n"
    )
    call_command("import_transcripts", str(path))
    turn = Turn.objects.get(utterance_id="RFS1-C-001")
    assert list(turn.techniques.values_list("code", flat=True)) == ["facilitative_question"]
    assert not RunTurn.objects.filter(turn=turn).exists()
    assert "AI 라벨 제안을 끕니다" in caplog.text


def test_the_same_text_gets_the_same_suggestion_in_any_batch():
    model = load_model(DEFAULT_MODEL_PATH)
    turn = TurnInput(
        "요즘 잠을 잘 못 자요. 그냥 다 사라졌으면 좋겠다는 생각도 들어요.", "탐색", (), "요즘 어떻게 지내요?"
    )
    other = TurnInput("오늘은 여기까지 할까요?", "정리", (), "")
    alone = model.suggest([turn], ["client"])[0]
    among = model.suggest([other, turn, other], ["counselor", "client", "counselor"])[1]
    assert alone == among
    assert set(alone.labels) <= set(alone.scores)
    assert len(alone.scores) <= len(alone.labels) + 5
    assert all(0.0 <= p <= 1.0 for p in alone.scores.values())
