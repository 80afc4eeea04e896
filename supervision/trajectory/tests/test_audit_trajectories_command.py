"""``audit_trajectories`` (CONTRACT §4): --input JSONL windows, or the stored sessions."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from supervision.testing import golden_session, write_jsonl
from supervision.trajectory.models import TrajectoryAudit


def window(window_id: str, turns: int = 6) -> dict:
    return {"window_id": window_id, "turns": golden_session("W", turns)}


def run(capsys, *args) -> tuple[int, list[str], str]:
    code = 0
    try:
        call_command("audit_trajectories", *args)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, [line for line in out.splitlines() if line], err


def test_it_prints_one_json_line_per_window(tmp_path, capsys):
    path = write_jsonl(tmp_path / "w.jsonl", [window("A"), "", window("B", 10)])
    code, lines, err = run(capsys, "--input", str(path))
    assert code == 0 and err == ""
    results = [json.loads(line) for line in lines]
    assert [r["window_id"] for r in results] == ["A", "B"]
    for r in results:
        assert set(r) == {"window_id", "label", "score", "explanation", "labels"}
        assert r["labels"] == "given"  # labelled windows (CONTRACT §9: "suggested" when none of its turns is)
        assert r["label"] in {"productive", "neutral", "harmful"}
        assert isinstance(r["score"], float)
        assert r["explanation"].endswith("이 결과는 검토 보조 자료이며 임상적 판단이 아닙니다.")


def test_it_rejects_malformed_lines_naming_each_and_prints_no_window(tmp_path, capsys):
    bad_speaker = {"window_id": "C", "turns": [{"speaker": "robot", "text": "hi", "seq": 0}]}
    path = write_jsonl(tmp_path / "w.jsonl", [window("A"), "{not json", bad_speaker, window("D")])
    code, lines, err = run(capsys, "--input", str(path))
    assert code == 1
    assert lines == []  # all or nothing, like import_transcripts
    errors = err.splitlines()
    assert errors[0].startswith("line 2: JSON:")
    assert errors[1].startswith("line 3: turns[0].speaker:")
    assert "Traceback" not in err


def test_it_rejects_bytes_that_are_not_utf8(tmp_path, capsys):
    path = tmp_path / "w.jsonl"
    path.write_bytes(json.dumps(window("A")).encode() + b"\n\xff\xfe{}\n")
    code, lines, err = run(capsys, "--input", str(path))
    assert (code, lines) == (1, [])
    assert err.startswith("line 2: UTF-8")


def test_it_reports_a_missing_input_file(tmp_path, capsys):
    code, lines, err = run(capsys, "--input", str(tmp_path / "absent.jsonl"))
    assert (code, lines) == (1, [])
    assert err.startswith("line 0: file:")


@pytest.mark.django_db
def test_without_input_it_audits_the_stored_sessions(cast, tmp_path, capsys):
    call_command("import_transcripts", str(write_jsonl(tmp_path / "s.jsonl", golden_session("CMD1", 12))))
    capsys.readouterr()
    code, lines, _ = run(capsys)
    assert code == 0
    assert json.loads(lines[-1]) == {"sessions": 1, "windows": 2, "turns": 12, "removed": 0}
    assert TrajectoryAudit.objects.count() == 2
    code, lines, _ = run(capsys)
    assert json.loads(lines[-1])["windows"] == 2 and TrajectoryAudit.objects.count() == 2
