"""The parser's fast path (plain text cells that turn out valid) gives exactly what ``parse`` gives, and any
row it does not accept as it stands falls back to ``parse``: errors and warnings are always ``parse``'s."""

import pytest

from supervision.importing.parse import RowParser
from taxonomy.lookup import LabelIndex

pytestmark = pytest.mark.django_db

BASE = {
    "session": "FAST1",
    "utterance_id": "FAST1-C-001",
    "seq": "0",
    "speaker": "상담자",
    "stage": "탐색",
    "text": "요즘 마음이 어떤지 조금 더 이야기해 볼까요?",
    "techniques": "정서 반영; 탐색질문",
    "client_states": "",
    "nonverbal": "(끄덕임)",
    "dialog_act": "question",
    "source": "test_synthetic",
    "rationale": "정서를 되돌려 줌\n\n  질문으로 이어감 ",
    "critique": "",
    "trainee": "",
    "held_on": "2026-11-02",
}
CLIENT = {
    **BASE,
    "utterance_id": "FAST1-K-001",
    "seq": " 1 ",
    "speaker": "client",
    "techniques": "",
    "client_states": "affect_contact\n방어",
    "dialog_act": " ",
    "session": "  ",
    "rationale": "",
    "held_on": "",
    "trainee": " trainee_a ",
}
VARIANTS = [
    {},
    {"session": ""},
    {"nonverbal": "", "text": "  "},
    {"text": "", "nonverbal": "", "dialog_act": "silence"},
    {"text": "(침묵)", "dialog_act": "silence"},
    {"dialog_act": "silence"},
    {"dialog_act": "unknown_act"},
    {"dialog_act": "INFORM"},
    {"techniques": "반엉"},
    {"techniques": "reflection; reflection"},
    {"client_states": "affect_contact"},
    {"speaker": "내담자"},
    {"speaker": "someone"},
    {"stage": "끝"},
    {"seq": "１"},
    {"seq": "-1"},
    {"seq": "99999999"},
    {"seq": ""},
    {"source": "real_hospital"},
    {"source": " "},
    {"session": "OTHER"},
    {"session": "bad code!"},
    {"utterance_id": "FAST1-X-001"},
    {"utterance_id": "FAST1-K-001"},
    {"text": "전화 010-1234-5678로 주세요"},
    {"text": "메일 someone@example.com"},
    {"text": "숫자 123456만"},
    {"nonverbal": "(010-1234-5678)"},
    {"rationale": "연락처 010 1234 5678"},
    {"critique": "한 줄\n두 줄"},
    {"text": "가" * 10_001},
    {"text": "NUL\x00"},
    {"utterance_id": "FAST1-C-001\x00"},
    {"trainee": "x\x00"},
    {"held_on": "2026-13-01"},
    {"held_on": " 2026-11-03 "},
    {"seq": 3},
    {"seq": 3.0},
    {"held_on": None},
    {"comments": []},
]


@pytest.mark.parametrize("base", [BASE, CLIENT], ids=["counselor", "client"])
@pytest.mark.parametrize("change", VARIANTS, ids=[str(n) for n in range(len(VARIANTS))])
def test_it_gives_what_parse_gives(base, change):
    raw = {**base, **change}
    slow = RowParser(LabelIndex.load()).parse(7, dict(raw))
    fast_parser = RowParser(LabelIndex.load())
    for _ in range(2):  # the second time through the memos
        fast = fast_parser.parse_quickly(7, dict(raw))
        assert fast.record == slow.record
        assert fast.errors == slow.errors
        assert fast.warnings == slow.warnings
        assert fast.position == slow.position
        assert fast.trainee == slow.trainee


def test_the_fast_path_takes_plain_valid_rows():
    parser = RowParser(LabelIndex.load())
    assert parser._plain_valid_record(2, BASE) is not None
    assert parser._plain_valid_record(3, CLIENT) is not None
    assert parser._plain_valid_record(4, {**BASE, "dialog_act": "silence"}) is None  # a warning: parse says it
