"""Korean as Macs type it (NFD) is Korean, and control or bidi-override characters are refused, on every
entry point: the importer (spreadsheet and JSONL), the admin's turn and comment writes, and the API (issue 33,
items 2 and 3). The rules live once: ``taxonomy.normalize.normalize_text`` and ``rules.character_problem``."""

import unicodedata

import pytest
from rest_framework.test import APIClient

from supervision.commenting import CommentRejected, supervisor_comment_create
from supervision.feedback.services import comment_reply_create
from supervision.importing.services import import_file
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import SupervisorComment, Turn
from supervision.services import ServiceError, TurnRejected, turn_update
from supervision.testing import golden_session, import_session, write_jsonl

pytestmark = pytest.mark.django_db


def nfd(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    assert decomposed != text  # the test's input really is decomposed
    return decomposed


TEXT = ENGLISH_HEADER.index("text")
TECHNIQUES = ENGLISH_HEADER.index("techniques")


def test_it_reads_a_decomposed_label_and_stores_decomposed_text_composed(cast, tmp_path):
    rows = session_rows("NFD1", 4, {0: {TECHNIQUES: nfd("공감"), TEXT: nfd("안녕하세요, 오늘 어떠세요")}})
    report = import_file(write_csv(tmp_path / "nfd.csv", ENGLISH_HEADER, rows))

    assert report.errors == []
    turn = Turn.objects.get(utterance_id="NFD1-C-001")
    assert list(turn.techniques.values_list("code", flat=True)) == ["empathy"]
    assert Turn.objects.filter(text__contains="안녕").get() == turn


def test_it_composes_jsonl_text_labels_and_comments(cast, tmp_path):
    lines = golden_session("NFD2", 2)
    lines[0].update(
        text=nfd("안녕"),
        techniques=[nfd("공감")],
        comments=[{"kind": "critique", "text": nfd("공감이 빠짐"), "dimension": nfd("속도")}],
    )
    assert import_file(write_jsonl(tmp_path / "nfd.jsonl", lines)).errors == []
    comment = SupervisorComment.objects.get()
    assert (comment.text, comment.intent_deviation["dimension"]) == ("공감이 빠짐", "속도")
    assert Turn.objects.filter(text="안녕").exists()


@pytest.mark.parametrize("character", ["\u202e", "\x07", "\u2066", "\x1b"])
def test_it_refuses_control_and_bidi_override_characters_in_any_spreadsheet_cell(cast, tmp_path, character):
    rows = session_rows("CTL1", 4, {1: {TEXT: f"뒤집힘{character}끝"}})
    rows[2].append(f"논평{character}")  # the critique column
    header = [*ENGLISH_HEADER, "critique"]
    for row in rows[:2] + rows[3:]:
        row.append("")
    report = import_file(write_csv(tmp_path / "ctl.csv", header, rows))

    shown = [str(e) for e in report.errors]
    assert [(e.row, e.column) for e in report.errors] == [(3, "text"), (4, "critique")], shown
    assert shown[0].startswith("row 3, column text: ")
    assert f"U+{ord(character):04X}" in shown[0]
    assert not Turn.objects.filter(session__code="CTL1").exists()


def test_it_refuses_them_in_jsonl_comments_too(cast, tmp_path):
    lines = golden_session("CTL2", 2)
    lines[1]["comments"] = [{"kind": "rationale", "text": "근거\u202e"}]
    report = import_file(write_jsonl(tmp_path / "ctl.jsonl", lines))
    assert [(e.row, e.column) for e in report.errors] == [(2, "comments")]


def test_the_admin_services_compose_and_refuse_the_same_way(cast):
    session = import_session("CTL3", 2, "trainee_a")
    turn = session.turns.get(seq=0)

    comment = supervisor_comment_create(
        turn=turn, kind="critique", text=nfd("공감이 빠짐"), intent_deviation={}, written_by=cast.supervisor_a
    )
    assert comment.text == "공감이 빠짐"
    with pytest.raises(CommentRejected) as rejected:
        supervisor_comment_create(turn=turn, kind="critique", text="뒤\u202e집힘", written_by=cast.supervisor_a)
    assert "U+202E" in rejected.value.problems["text"][0]

    turn_update(turn=turn, stage=turn.stage, text=nfd("안녕"), nonverbal=[], dialog_act=None)
    turn.refresh_from_db()
    assert turn.text == "안녕"
    with pytest.raises(TurnRejected) as rejected:
        turn_update(turn=turn, stage=turn.stage, text="벨\x07", nonverbal=[], dialog_act=None)
    assert "U+0007" in rejected.value.problems["text"][0]

    with pytest.raises(ServiceError):
        comment_reply_create(comment=comment, author=cast.trainee_a, text="답글\u202e")


def test_the_api_composes_and_refuses_the_same_way(cast):
    session = import_session("CTL4", 2, "trainee_a")
    turn = session.turns.get(seq=0)
    client = APIClient()
    client.force_login(cast.supervisor_a)

    body = {"turn": turn.pk, "kind": "critique", "text": nfd("공감이 빠짐"), "intent_deviation": {}}
    response = client.post("/api/v1/comments/", body, format="json")
    assert response.status_code == 201, response.content
    assert SupervisorComment.objects.get(pk=response.json()["id"]).text == "공감이 빠짐"

    body["text"] = "뒤\u202e집힘"
    response = client.post("/api/v1/comments/", body, format="json")
    assert response.status_code == 400
    assert "U+202E" in response.json()["text"][0]
