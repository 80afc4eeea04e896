"""Half a UTF-16 surrogate pair on its own ("\\ud800" in a JSON file or request body) is no character: nothing
can store, print or show it. Every entry point that reads JSON refuses it with the row (or line) and field
and a Korean message, and writes nothing: before, each of these ended in a traceback or a 500. The rule
lives once: ``rules.unencodable_problem`` / ``first_unencodable``."""

import io
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from supervision.models import Session, SupervisorComment
from supervision.rules import character_problem
from supervision.testing import golden_session, import_session, write_jsonl

pytestmark = pytest.mark.django_db

LONE = "\ud800"


def run(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return exit_.code, err.getvalue()
    return 0, err.getvalue()


def write_lines(path, lines: list[dict]):
    # json.dumps escapes the lone surrogate as \ud800, which is how such a file arrives
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_the_rule_names_the_code_point():
    assert "U+D800" in character_problem(f"a{LONE}b")
    assert character_problem("😀 이모지는 짝이 맞습니다") is None


def test_import_transcripts_refuses_the_row_and_writes_nothing(cast, tmp_path):
    lines = golden_session("SUR1", 3)
    lines[1]["text"] = f"말{LONE}끝"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    code, err = run("import_transcripts", str(path))
    assert code == 1
    assert "row 2, column text: 짝이 없는 유니코드 서로게이트(U+D800)" in err
    assert not Session.objects.filter(code="SUR1").exists()
    # the same file without it imports
    lines[1]["text"] = "말끝"
    assert run("import_transcripts", str(write_jsonl(tmp_path / "ok.jsonl", lines)))[0] == 0


def test_score_agreement_names_the_field(cast, tmp_path):
    import_session("SUR2", 2, "trainee_a")
    path = write_lines(tmp_path / "run.jsonl", [{"utterance_id": "SUR2-C-001", "techniques": [LONE]}])
    code, err = run("score_agreement", str(path), "--rater", "probe-ai")
    assert code == 1
    assert "row 1, column techniques: 짝이 없는 유니코드 서로게이트" in err


def test_suggest_labels_and_audit_trajectories_input_name_the_field(tmp_path):
    turn = {"utterance_id": "W-K-001", "speaker": "client", "stage": "탐색", "seq": 0, "text": f"a{LONE}"}
    code, err = run("suggest_labels", "--input", str(write_lines(tmp_path / "t.jsonl", [turn])))
    assert (code, "row 1, column text: 짝이 없는 유니코드 서로게이트" in err) == (1, True)
    window = {"window_id": "W1", "turns": [turn]}
    code, err = run("audit_trajectories", "--input", str(write_lines(tmp_path / "w.jsonl", [window])))
    assert (code, "line 1: turns[0].text: 짝이 없는 유니코드 서로게이트" in err) == (1, True)


def test_the_api_answers_400_even_where_an_error_would_quote_it(cast):
    turn = import_session("SUR3", 2, "trainee_a").turns.get(seq=0)
    client = APIClient()
    client.force_login(cast.supervisor_a)
    for body in (
        {"turn": turn.pk, "kind": "critique", "text": f"a{LONE}"},
        {"turn": turn.pk, "kind": LONE, "text": "ok"},  # a choice field's error quotes the value
        {"turn": turn.pk, "kind": "critique", "text": "ok", "\udc00": 1},
    ):
        # json.dumps escapes it (\ud800), as a client's JSON would
        response = client.post("/api/v1/comments/", json.dumps(body), content_type="application/json")
        assert response.status_code == 400, body
        assert "서로게이트" in response.json()["detail"]
    assert not SupervisorComment.objects.exists()


def test_the_audit_reader_skips_the_walk_only_where_no_surrogate_can_come_out():
    from supervision.rules import may_hold_unencodable
    from supervision.trajectory.engine.io import audit_jsonl

    turn = {"utterance_id": "W-K-001", "speaker": "client", "seq": 0, "text": "요즘 잠을 못 자요."}
    plain = json.dumps({"window_id": "W", "turns": [turn]}, ensure_ascii=False)
    assert not may_hold_unencodable(plain)
    assert may_hold_unencodable(plain.replace("잠을", "\\ud800"))  # an escape: read, then checked
    assert may_hold_unencodable(plain.replace("잠을", "\ud800"))  # a surrogate in a text line itself
    for line in (plain.replace("잠을", "\\ud800"), plain.replace("잠을", "\ud800")):
        with pytest.raises(ValueError, match=r"line 1: turns\[0\]\.text: 짝이 없는"):
            list(audit_jsonl([line]))
    assert [r["window_id"] for r in audit_jsonl([plain])] == ["W"]
