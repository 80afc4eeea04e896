"""import_transcripts / export_golden with golden JSONL (CONTRACT §2, §4)."""

import json

import pytest
from django.core.management import call_command

from supervision.models import Session, SupervisorComment, Turn, TurnClientState, TurnTechnique
from supervision.testing import golden_line, golden_session, write_jsonl


def run_import(capsys, path, *args):
    """Runs the command; returns (exit code, last stdout line as JSON, stderr)."""
    code = 0
    try:
        call_command("import_transcripts", str(path), *args)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, json.loads(out.strip().splitlines()[-1]), err


def export(capsys, *args):
    call_command("export_golden", *args)
    return capsys.readouterr().out


def db_fingerprint():
    return (
        list(Session.objects.values_list("code", "source", "held_on", "trainee_id")),
        list(Turn.objects.order_by("utterance_id").values_list("utterance_id", "seq", "text", "dialog_act")),
        TurnTechnique.objects.count(),
        TurnClientState.objects.count(),
        SupervisorComment.objects.count(),
    )


def test_it_imports_a_golden_file_and_reports_the_summary(cast, tmp_path, capsys):
    lines = golden_session("S01", 4, trainee="trainee_a", held_on="2026-11-02")
    lines[0]["comments"] = [
        {"kind": "critique", "text": "자기개방이 과함", "author": "supervisor", "dimension": "자기개방 수위",
         "expected": "reflection", "actual": "self_disclosure", "severity": "moderate"},
    ]  # fmt: skip
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "s.jsonl", lines))
    assert code == 0
    assert summary == {"sessions": 1, "turns": 4, "created": 4, "updated": 0, "warnings": []}
    session = Session.objects.get(code="S01")
    assert session.trainee == cast.trainee_a
    assert str(session.held_on) == "2026-11-02"
    assert list(session.turns.order_by("seq").values_list("utterance_id", flat=True)) == [
        "S01-C-001", "S01-K-001", "S01-C-002", "S01-K-002",
    ]  # fmt: skip
    comment = SupervisorComment.objects.get()
    assert comment.intent_deviation == {
        "dimension": "자기개방 수위", "expected": "reflection", "actual": "self_disclosure", "severity": "moderate",
    }  # fmt: skip


def test_it_normalises_korean_names_and_surface_labels_to_codes(cast, tmp_path, capsys):
    lines = golden_session("S02", 2)
    lines[0]["techniques"] = ["정서 반영", "탐색질문", " 위험요인 탐색 ", "EMPATHY"]
    lines[1]["client_states"] = ["방어가 서서히 풀어지고 있음"]
    code, _, _ = run_import(capsys, write_jsonl(tmp_path / "s.jsonl", lines))
    assert code == 0
    turn = Turn.objects.get(utterance_id="S02-C-001")
    assert [link.label.code for link in turn.technique_links.select_related("label")] == [
        "reflection", "exploration", "risk_assessment", "empathy",
    ]  # fmt: skip
    assert list(Turn.objects.get(utterance_id="S02-K-001").client_states.values_list("code", flat=True)) == [
        "defense_loosening"
    ]


@pytest.mark.parametrize(
    ("line_no", "field", "change", "fragment"),
    [
        (2, "techniques", {"techniques": ["empathy"]}, "상담자 발화에만"),
        (1, "client_states", {"client_states": ["defensive"]}, "내담자 발화에만"),
        (1, "techniques", {"techniques": ["empathyy"]}, "empathy"),
        (1, "utterance_id", {"utterance_id": "S03-K-001"}, "화자 글자"),
        (1, "utterance_id", {"utterance_id": "S03_C_1"}, "형식"),
        (1, "stage", {"stage": "마무리"}, "단계"),
        (1, "speaker", {"speaker": "therapist"}, "화자"),
        (1, "seq", {"seq": "first"}, "정수"),
        (1, "seq", {"seq": -1}, "정수"),
        (1, "dialog_act", {"dialog_act": "shout"}, "대화행위"),
        (1, "source", {"source": "clinic_2026"}, "_synthetic"),
        (1, "text", {"text": "연락처는 010-0000-0000 입니다"}, "전화번호"),
        (1, "text", {"text": "제 번호는 900101-1000000"}, "주민등록번호"),
        (1, "text", {"text": "메일 fake.person@example.invalid 로"}, "이메일"),
        (1, "comments", {"comments": [{"kind": "praise", "text": "좋음"}]}, "rationale 또는 critique"),
        (1, "comments", {"comments": [{"kind": "critique", "text": "x", "severity": "fatal"}]}, "minor"),
        (1, "comments", {"comments": [{"kind": "critique", "text": "x", "author": "robot"}]}, "ai 또는 supervisor"),
        (1, "comments", {"comments": "좋음"}, "배열"),
        (1, "nonverbal", {"nonverbal": [1, 2]}, "문자열"),
        (1, "held_on", {"held_on": "2026-13-45"}, "YYYY-MM-DD"),
        (1, "text", {"text": "가" * 10_001}, "10,000"),
        (1, "utterance_id", {"utterance_id": None}, "필수"),
    ],
)
def test_it_rejects_each_broken_rule_naming_line_and_field(cast, tmp_path, capsys, line_no, field, change, fragment):
    lines = golden_session("S03", 2)
    lines[line_no - 1].update(change)
    code, summary, err = run_import(capsys, write_jsonl(tmp_path / "bad.jsonl", lines))
    assert code == 1
    matching = [e for e in summary["errors"] if e["row"] == line_no and e["column"] == field]
    assert matching, summary
    assert fragment in matching[0]["message"]
    assert f"row {line_no}, column {field}: " in err
    assert not Session.objects.exists()


def test_it_reports_every_error_of_the_file_in_one_run(cast, tmp_path, capsys):
    lines = golden_session("S04", 6)
    lines[1]["stage"] = "???"
    lines[3]["techniques"] = ["reflection"]
    lines[5]["source"] = "real"
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "bad.jsonl", lines))
    assert code == 1
    assert [(e["row"], e["column"]) for e in summary["errors"]] == [(2, "stage"), (4, "techniques"), (6, "source")]


def test_an_unknown_trainee_is_reported_in_the_same_run_as_the_other_errors(cast, tmp_path, capsys):
    # Every row names a trainee nobody has, and every row has another problem too.
    lines = [{**line, "trainee": "ghost_trainee", "stage": "???"} for line in golden_session("S04T", 4)]
    lines[1]["techniques"] = ["reflection"]  # a technique on a client turn
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "bad.jsonl", lines))
    assert code == 1
    found = {(e["row"], e["column"]) for e in summary["errors"]}
    assert (1, "trainee") in found and {(n, "stage") for n in range(1, 5)} <= found and (2, "techniques") in found
    technique_error = next(e for e in summary["errors"] if e["column"] == "techniques")
    assert "reflection" in technique_error["message"]  # the offending value is named


def test_it_rejects_gaps_and_repeats_in_seq(cast, tmp_path, capsys):
    lines = golden_session("S05", 4)
    lines[3]["seq"] = 1
    lines[3]["utterance_id"] = "S05-K-009"
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "bad.jsonl", lines))
    assert code == 1
    (error,) = summary["errors"]
    assert (error["row"], error["column"]) == (4, "seq")
    assert "중복된 순서 1" in error["message"] and "빠진 순서 3" in error["message"]


def test_it_rejects_a_repeated_utterance_id(cast, tmp_path, capsys):
    lines = golden_session("S06", 4)
    lines[2]["utterance_id"] = "S06-C-001"
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "bad.jsonl", lines))
    assert code == 1
    assert {(e["row"], e["column"]) for e in summary["errors"]} == {(3, "utterance_id")}


def test_a_bad_last_line_leaves_the_database_untouched(cast, tmp_path, capsys):
    run_import(capsys, write_jsonl(tmp_path / "first.jsonl", golden_session("S07", 4)))
    before = db_fingerprint()
    lines = golden_session("S07", 4, text="바뀐 발화") + golden_session("S08", 6)
    lines.append("{not json")
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "bad.jsonl", lines))
    assert code == 1
    assert summary["errors"][-1]["row"] == 11
    assert db_fingerprint() == before


def test_it_corrects_words_tagged_silence_and_warns(cast, tmp_path, capsys):
    lines = golden_session("S09", 4)
    lines[1]["dialog_act"] = "silence"  # a client line with words
    lines[3].update({"dialog_act": "silence", "text": "", "nonverbal": ["(침묵)"]})
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "s.jsonl", lines))
    assert code == 0
    assert Turn.objects.get(utterance_id="S09-K-001").dialog_act == "null"
    assert Turn.objects.get(utterance_id="S09-K-002").dialog_act == "silence"
    assert len(summary["warnings"]) == 1 and summary["warnings"][0].startswith("row 2, column dialog_act:")


def test_re_importing_the_same_file_changes_nothing(cast, tmp_path, capsys):
    lines = golden_session("S10", 6, trainee="trainee_b")
    lines[0]["comments"] = [{"kind": "rationale", "text": "적절한 반영", "author": "supervisor"}]
    path = write_jsonl(tmp_path / "s.jsonl", lines)
    run_import(capsys, path)
    before = db_fingerprint()
    ids_before = list(Turn.objects.order_by("id").values_list("id", flat=True))
    code, summary, _ = run_import(capsys, path)
    assert code == 0
    assert (summary["created"], summary["updated"]) == (0, 0)
    assert db_fingerprint() == before
    assert list(Turn.objects.order_by("id").values_list("id", flat=True)) == ids_before


def test_re_import_updates_turns_in_place(cast, tmp_path, capsys):
    run_import(capsys, write_jsonl(tmp_path / "a.jsonl", golden_session("S11", 4)))
    turn_id = Turn.objects.get(utterance_id="S11-C-002").id
    lines = golden_session("S11", 4)
    lines[2]["text"] = "고친 발화"
    lines[2]["techniques"] = ["empathy"]
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "b.jsonl", lines))
    assert (code, summary["created"], summary["updated"]) == (0, 0, 1)
    turn = Turn.objects.get(utterance_id="S11-C-002")
    assert turn.id == turn_id and turn.text == "고친 발화"
    assert list(turn.techniques.values_list("code", flat=True)) == ["empathy"]


def test_dry_run_validates_and_writes_nothing(cast, tmp_path, capsys):
    code, summary, _ = run_import(capsys, write_jsonl(tmp_path / "s.jsonl", golden_session("S12", 4)), "--dry-run")
    assert code == 0
    assert summary["created"] == 4
    assert not Session.objects.exists()


def test_the_trainee_option_assigns_the_sessions(cast, tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", golden_session("S13", 2))
    code, _, _ = run_import(capsys, path, "--trainee", "trainee_b")
    assert code == 0
    assert Session.objects.get(code="S13").trainee == cast.trainee_b
    code, summary, _ = run_import(capsys, path, "--trainee", "supervisor_a")
    assert code == 1
    assert summary["errors"][0]["column"] == "trainee"


def test_file_level_problems_use_row_zero_and_column_file(cast, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, summary, _ = run_import(capsys, empty)
    assert (code, summary["errors"][0]["row"], summary["errors"][0]["column"]) == (1, 0, "file")
    code, summary, _ = run_import(capsys, tmp_path / "missing.jsonl")
    assert (code, summary["errors"][0]["column"]) == (1, "file")


def test_it_survives_hostile_lines(cast, tmp_path, capsys):
    path = tmp_path / "hostile.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[" * 50_000 + "]" * 50_000 + "\n")
        handle.write(json.dumps(golden_line("S14", 0, text="널\x00문자")) + "\n")
        handle.write('{"utterance_id": "S14-K-001", "text": "\\ud800"}\n')
        handle.write("42\n")
    code, summary, _ = run_import(capsys, path)
    assert code == 1
    assert {e["row"] for e in summary["errors"]} >= {1, 2, 3, 4}
    assert not Session.objects.exists()


def test_export_then_import_then_export_gives_the_same_lines(cast, tmp_path, capsys):
    lines = golden_session("S15", 6, trainee="trainee_a", held_on="2026-11-20")
    lines[2]["comments"] = [
        {"kind": "critique", "text": "질문이 닫혀 있음", "author": "supervisor", "severity": "minor"},
        {"kind": "rationale", "text": "라포 형성에 적절", "author": "ai"},
    ]
    lines[3].update({"dialog_act": "silence", "text": "", "nonverbal": ["(침묵)"]})
    lines[4]["techniques"] = ["self_disclosure", "empathy"]
    run_import(capsys, write_jsonl(tmp_path / "s.jsonl", lines + golden_session("S16", 2)))
    first = export(capsys)
    Session.objects.all().delete()
    (tmp_path / "export.jsonl").write_text(first, encoding="utf-8")
    code, summary, _ = run_import(capsys, tmp_path / "export.jsonl")
    assert (code, summary["created"]) == (0, 8)
    second = export(capsys)
    assert second == first
    parsed = [json.loads(line) for line in first.splitlines()]
    assert [p["utterance_id"] for p in parsed][:2] == ["S15-C-001", "S15-K-001"]
    assert parsed[4]["techniques"] == ["self_disclosure", "empathy"]
    assert export(capsys, "--session", "S16").count("\n") == 2


def test_export_leaves_out_unaccepted_suggestions(cast, tmp_path, capsys):
    run_import(capsys, write_jsonl(tmp_path / "s.jsonl", golden_session("S17", 2)))
    SupervisorComment.objects.create(
        turn=Turn.objects.get(utterance_id="S17-C-001"), kind="critique", text="AI 제안", author="ai",
        is_suggestion=True, suggestion_key="test",
    )  # fmt: skip
    assert "AI 제안" not in export(capsys)


def test_an_import_audits_the_trajectories_of_its_sessions(cast, tmp_path, capsys, django_capture_on_commit_callbacks):
    from supervision.trajectory.models import TrajectoryAudit

    with django_capture_on_commit_callbacks(execute=True):
        code, _, _ = run_import(capsys, write_jsonl(tmp_path / "s.jsonl", golden_session("S18", 12)))
    assert code == 0
    session = Session.objects.get(code="S18")
    assert list(TrajectoryAudit.objects.filter(session=session).values_list("first_seq", "last_seq")) == [
        (0, 9),
        (2, 11),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        run_import(capsys, write_jsonl(tmp_path / "s.jsonl", golden_session("S19", 2)), "--dry-run")
    assert not TrajectoryAudit.objects.filter(session__code="S19").exists()
