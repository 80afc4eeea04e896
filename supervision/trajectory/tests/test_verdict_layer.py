"""The verdict layer (engine/layer.py, data/layer.json): what it decides, what it was fitted on, and that a bad
layer file leaves the audit running on the engine's thresholds (no Django)."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from supervision.suggesting.engine.features import TurnInput
from supervision.suggesting.loading import DEFAULT_MODEL_PATH
from supervision.trajectory.engine.audit import audit_sessions, audit_window, audit_windows, layer_feature_rows
from supervision.trajectory.engine.config import AuditConfig
from supervision.trajectory.engine.layer import LAYER_FILE, load_layer
from supervision.trajectory.engine.resources import DATA_DIR, engine_version, load_resources
from supervision.trajectory.engine.window_text import window_text_matrix
from supervision.trajectory.tests.test_engine import STEALTH, client, counselor

WINDOWS = Path(__file__).resolve().parents[3] / "benchmarks" / "trajectory"
ENGINE_ALONE = AuditConfig(learned_layer=False)

PRODUCTIVE = [
    client("시험 망쳤어요. 저는 원래 뭘 해도 안 돼요.", 0, ["negative_self_perception"]),
    counselor("'뭘 해도 안 된다'는 생각이 드는 근거와 아닌 근거를 같이 볼까요?", 1, ["cognitive_restructuring"]),
    client("음… 지난 학기 과제는 잘 냈어요. 늘 그런 건 아닌가 봐요.", 2, ["thought_organizing"]),
    counselor("이번 주에 해 볼 수 있는 작은 한 걸음이 있을까요?", 3, ["homework"]),
    client("월요일에 교수님께 피드백을 여쭤볼게요. 조금 차분해졌어요.", 4, ["expresses_plan"]),
]


def test_the_layer_decides_the_verdict_and_the_score_is_its_balance():
    layer = load_layer()
    assert layer is not None
    for window, expected in ((STEALTH, "harmful"), (PRODUCTIVE, "productive")):
        audit = audit_window(window)
        probabilities = [float(x) for x in audit.explanation.split("확률: ")[1].split(";")[0].split() if x[0].isdigit()]
        assert audit.label == expected
        assert sum(probabilities) == pytest.approx(1.0, abs=0.02)  # printed to two decimals
        assert -1.0 <= audit.score <= 1.0
        assert audit.score == pytest.approx(probabilities[0] - probabilities[2], abs=0.01)
        assert audit.components["engine_score"] == pytest.approx(audit_window(window, config=ENGINE_ALONE).score)


def test_without_the_layer_the_engines_thresholds_decide():
    thresholds = load_resources().model["labels"]
    for window in (STEALTH, PRODUCTIVE):
        audit = audit_window(window, config=ENGINE_ALONE)
        expected = (
            "productive"
            if audit.score >= thresholds["productive_min"]
            else "harmful"
            if audit.score <= thresholds["harmful_max"]
            else "neutral"
        )
        assert audit.label == expected
        assert "판정층" not in audit.explanation and "engine_score" not in audit.components


def test_the_layer_reads_the_labels_it_is_given():
    """The same words read differently when the labels say the client only complied on the surface."""
    text_only = [{**t, "client_states": [], "techniques": []} for t in PRODUCTIVE]
    surface = [{**t, "client_states": ["compliant_surface"] if t["speaker"] == "client" else []} for t in text_only]
    inputs = load_layer().inputs
    rows = layer_feature_rows([PRODUCTIVE, text_only, surface], inputs)
    assert len(rows[0]) == len(inputs.feature_names)
    assert len({tuple(r) for r in rows}) == 3
    assert audit_window(surface).score < audit_window(PRODUCTIVE).score


def test_sessions_and_windows_give_the_same_verdicts():
    turns = [*PRODUCTIVE, *[{**t, "seq": t["seq"] + 5} for t in STEALTH]]
    fields = [
        (t["seq"], t["utterance_id"], t["speaker"], t["text"], [], t["techniques"], t["client_states"]) for t in turns
    ]
    bounds = [(0, 5), (3, 9), (5, len(turns))]
    by_session = audit_sessions([(fields, bounds)])[0]
    by_window = audit_windows([turns[a:b] for a, b in bounds])
    assert [(a.label, a.score, a.explanation) for a in by_session] == [
        (a.label, a.score, a.explanation) for a in by_window
    ]


def test_the_shipped_layer_was_fitted_on_the_window_files_as_they_are():
    """Refit (make fit-audit-layer) after a window file changes or comes: the layer learns every window file."""
    training = json.loads((DATA_DIR / LAYER_FILE).read_text(encoding="utf-8"))["training"]
    assert set(training["files"]) == {p.name for p in WINDOWS.glob("*.jsonl")}
    for name, digest in training["files"].items():
        assert hashlib.sha256((WINDOWS / name).read_bytes()).hexdigest() == digest, name


def test_the_shipped_layer_read_the_shipped_suggesters_labels():
    """The evidence model learnt windows with no labels on the suggester's labels: a retrained suggester reads
    them otherwise, so the layer is refitted with it (make fit-audit-layer FIT_ARGS=--write)."""
    training = json.loads((DATA_DIR / LAYER_FILE).read_text(encoding="utf-8"))["training"]
    shipped = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))["model_version"]
    assert training["suggester"] == shipped


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda text: text[: len(text) // 2], "올바른 JSON이 아닙니다"),
        (lambda text: text.replace('"late:expresses_plan"', '"late:something_else"'), "특성 목록"),
        (lambda text: json.dumps({**json.loads(text), "intercept": [0.0, 0.0]}), "계수의 모양"),
        (lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "coef"}), "읽을 수 없습니다"),
    ],
)
def test_a_damaged_layer_file_is_refused_and_the_engine_decides(tmp_path, caplog, damage, reason):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    layer_file = data / LAYER_FILE
    layer_file.write_text(damage(layer_file.read_text(encoding="utf-8")), encoding="utf-8")
    with caplog.at_level(logging.ERROR):
        got = audit_window(STEALTH, config=AuditConfig(data_dir=str(data)))
    assert reason in caplog.text and "규칙 엔진의 임계값으로 판정합니다" in caplog.text
    alone = audit_window(STEALTH, config=ENGINE_ALONE)
    assert (got.label, got.score, got.explanation) == (alone.label, alone.score, alone.explanation)
    assert engine_version(str(data)) != engine_version()  # stored audits show the difference


def test_a_folder_without_a_layer_file_audits_on_the_thresholds(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    (data / LAYER_FILE).unlink()
    got = audit_window(PRODUCTIVE, config=AuditConfig(data_dir=str(data)))
    alone = audit_window(PRODUCTIVE, config=ENGINE_ALONE)
    assert (got.label, got.score) == (alone.label, alone.score)


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda path: path.write_bytes(path.read_bytes()[:-100]), "SHA-256"),
        (lambda path: path.unlink(), "글 모델 파일이 없습니다"),
    ],
)
def test_a_damaged_text_model_file_is_refused_and_the_engine_decides(tmp_path, caplog, damage, reason):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    damage(data / json.loads((data / LAYER_FILE).read_text(encoding="utf-8"))["text_model"]["file"])
    with caplog.at_level(logging.ERROR):
        got = audit_window(PRODUCTIVE, config=AuditConfig(data_dir=str(data)))
    assert reason in caplog.text
    alone = audit_window(PRODUCTIVE, config=ENGINE_ALONE)
    assert (got.label, got.score) == (alone.label, alone.score)


def test_the_text_model_reads_each_half_of_each_speaker():
    text = load_layer().text
    assert text is not None
    one_turn = (["요즘 잠을 못 자요."], [])
    two_windows = [one_turn, (["괜찮아요.", "요즘 잠을 못 자요."], ["어떠세요?"])]
    rows = window_text_matrix(text.client, text.counselor, two_windows).toarray()
    width = text.client.width
    own = text.client.transform([TurnInput("요즘 잠을 못 자요.")]).toarray()[0]
    # one client turn: the late half holds it, the early half and the counselor's halves are empty
    assert not rows[0, :width].any() and not rows[0, 2 * width :].any()
    assert rows[0, width : 2 * width] == pytest.approx(own)
    # a text met again in another window is read the same there; the batch gives the one-by-one rows
    assert rows[1, width : 2 * width] == pytest.approx(own)
    for k, window in enumerate(two_windows):
        assert window_text_matrix(text.client, text.counselor, [window]).toarray()[0] == pytest.approx(rows[k])


def test_the_words_move_the_verdict():
    """The same labels, the counselor's answers turned into agreement with the client's distortion."""
    colluding = [
        {**t, "text": "맞아요, 뭘 해도 안 되는 건 사실이에요. 애쓰지 말고 그냥 포기하는 게 편하겠어요."}
        if t["speaker"] == "counselor"
        else t
        for t in PRODUCTIVE
    ]
    text = load_layer().text
    words = [
        tuple([t["text"] for t in window if t["speaker"] == speaker] for speaker in ("client", "counselor"))
        for window in (PRODUCTIVE, colluding)
    ]
    p = text.probabilities(words)
    harmful = load_layer().classes.index("harmful")
    assert p[1, harmful] > p[0, harmful] + 0.2
    assert audit_window(colluding).score < audit_window(PRODUCTIVE).score


def test_the_text_models_short_way_gives_the_wide_rows_scores():
    """probabilities() scores turns and averages the scores; the model was fitted on window_text_matrix rows.
    The turns are scored by the suggester's fast path (``Vectoriser.scores``), whose float32 sums differ from
    the matrix product by rounding: at most 7.3e-8 in a probability over every window file. A wrong column,
    weight or half moves them by orders of magnitude more."""
    text = load_layer().text
    windows = [
        json.loads(line)["turns"]
        for line in (WINDOWS / "blind-4.jsonl").read_text(encoding="utf-8").split("\n")
        if line
    ]
    words = [tuple([t["text"] for t in w if t["speaker"] == s] for s in ("client", "counselor")) for w in windows]
    words.append(([], ["안녕하세요."]))  # no client turn at all
    z = window_text_matrix(text.client, text.counselor, words) @ text.coef.T + text.intercept
    wide = np.exp(z - z.max(axis=1, keepdims=True))
    assert text.probabilities(words) == pytest.approx(wide / wide.sum(axis=1, keepdims=True), abs=1e-6)
