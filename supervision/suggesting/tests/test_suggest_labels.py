"""``suggest_labels --input`` (CONTRACT §9): §2 lines and §4 windows, Korean and English text, errors as
``row N, column C: message`` with exit 1 and nothing on stdout."""

import io
import json

import pytest
from django.core.management import call_command

from taxonomy import catalogue


def _run(path):
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("suggest_labels", "--input", str(path), stdout=out, stderr=err)
    except SystemExit as exit_:
        return exit_.code, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def _line(uid, speaker, text, seq, **extra):
    return {"utterance_id": uid, "speaker": speaker, "stage": "탐색", "seq": seq, "text": text, **extra}


LINES = [
    _line("SL1-C-001", "counselor", "요즘 가장 힘든 게 뭔지 조금 더 이야기해 줄래요?", 0, techniques=["empathy"]),
    _line("SL1-K-001", "client", "그냥… 다 그만두고 싶어요. 가끔은 사라지면 편하겠다는 생각도 해요.", 1),
    _line("SL1-C-002", "counselor", "사라지고 싶다는 생각이 들 때, 스스로를 해칠 생각까지 해 본 적이 있나요?", 2),
    _line("SL1-K-002", "client", "I just feel like nobody would notice if I was gone.", 3),
    _line(
        "SL1-C-003", "counselor", "That sounds really heavy. Are you having thoughts of killing yourself right now?", 4
    ),
]


def test_it_prints_one_line_per_turn_in_input_order_on_the_speakers_axis(tmp_path, capsys):
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in LINES) + "\n")
    code, out, err = _run(path)
    assert code == 0, err
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines() or out.splitlines()]
    assert [r["utterance_id"] for r in results] == [line["utterance_id"] for line in LINES]
    for line, result in zip(LINES, results, strict=True):
        assert set(result) == {"utterance_id", "techniques", "client_states", "scores", "model_version"}
        assert result["model_version"].startswith("portal-suggester-")
        mine, other = (
            ("techniques", "client_states") if line["speaker"] == "counselor" else ("client_states", "techniques")
        )
        assert result[other] == []
        known = catalogue.TECHNIQUE_CODES if mine == "techniques" else catalogue.CLIENT_STATE_CODES
        assert set(result[mine]) <= set(known)
        assert set(result[mine]) <= set(result["scores"])
        assert len(result["scores"]) <= len(result[mine]) + 5
        assert set(result["scores"]) <= set(known)
    # Both languages are read: a direct question about suicide is a risk assessment, in Korean and English,
    # and the veiled English disclosure is suggested as suicidal ideation (recall first, CONTRACT §9). Until
    # portal-suggester-12 the English question sat at the edge of the label's cut (0.70 under 0.725 with -10
    # and -11): the training set had almost no English counselor turns. Sixty English sessions (SGN_*) since.
    assert "risk_assessment" in results[2]["techniques"]
    assert "risk_assessment" in results[4]["techniques"]
    assert "risk_assessment" not in results[0]["scores"] or results[0]["scores"]["risk_assessment"] < 0.5
    assert "suicidal_ideation_admit" in results[3]["client_states"]


def test_it_reads_windows_and_ignores_their_labels(tmp_path, capsys):
    window = {"window_id": "W1", "turns": [dict(line, techniques=[], client_states=[]) for line in LINES[:3]]}
    labelled = {
        "window_id": "W2",
        "turns": [dict(line, techniques=["humor"]) if line["speaker"] == "counselor" else line for line in LINES[:3]],
    }
    path = tmp_path / "windows.jsonl"
    path.write_text(json.dumps(window, ensure_ascii=False) + "\n" + json.dumps(labelled, ensure_ascii=False) + "\n")
    code, out, err = _run(path)
    assert code == 0, err
    results = [json.loads(line) for line in (capsys.readouterr().out or out).splitlines()]
    assert len(results) == 6
    assert results[:3] == results[3:]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "row 2, column utterance_id: JSON"),
        (json.dumps({"utterance_id": "SL1-K-009", "speaker": "therapist", "text": "네"}), "row 2, column speaker:"),
        (json.dumps({"utterance_id": "SL1-K-009", "speaker": "client", "text": 42}), "row 2, column text:"),
        (json.dumps({"speaker": "client", "text": "네"}), "row 2, column utterance_id:"),
        (
            json.dumps({"window_id": "W", "turns": [{"utterance_id": "X-C-001", "speaker": "c?", "text": ""}]}),
            "row 2, column turns[0].speaker:",
        ),
        (
            json.dumps({"utterance_id": "SL1-K-009", "speaker": "client", "text": "네", "stage": "끝"}),
            "row 2, column stage:",
        ),
    ],
)
def test_a_malformed_line_exits_1_naming_row_and_column_and_prints_nothing(tmp_path, capsys, line, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(LINES[0], ensure_ascii=False) + "\n" + line + "\n")
    code, out, err = _run(path)
    assert code == 1
    assert expected in err
    assert out == "" and capsys.readouterr().out == ""


def test_a_missing_file_is_row_0_column_file(tmp_path):
    code, _out, err = _run(tmp_path / "none.jsonl")
    assert code == 1
    assert err.startswith("row 0, column file:")


def _audit(path, capsys):
    call_command("audit_trajectories", "--input", str(path))
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]


def test_the_audit_reads_suggestions_for_a_window_nobody_labelled_and_says_so(tmp_path, capsys):
    unlabelled = {"window_id": "U", "turns": [dict(line, techniques=[], client_states=[]) for line in LINES]}
    partly = {"window_id": "P", "turns": [dict(line, techniques=[], client_states=[]) for line in LINES]}
    partly["turns"][1]["client_states"] = ["affect_contact"]
    path = tmp_path / "windows.jsonl"
    path.write_text("\n".join(json.dumps(w, ensure_ascii=False) for w in (unlabelled, partly)) + "\n")
    results = _audit(path, capsys)
    assert [(r["window_id"], r["labels"]) for r in results] == [("U", "suggested"), ("P", "given")]


def test_without_a_usable_model_the_audit_reads_the_text_and_says_given(tmp_path, capsys, settings):
    settings.SUGGESTER_MODEL_PATH = str(tmp_path / "missing.json")
    unlabelled = {"window_id": "U", "turns": [dict(line, techniques=[], client_states=[]) for line in LINES]}
    path = tmp_path / "windows.jsonl"
    path.write_text(json.dumps(unlabelled, ensure_ascii=False) + "\n")
    assert [r["labels"] for r in _audit(path, capsys)] == ["given"]
