"""rules.no_input_sql (used by the gauge's SQL) agrees with rules.is_no_input on every edge case."""

import pytest
from django.db import connection

from supervision import rules

pytestmark = pytest.mark.django_db

CASES = [
    ("", None),
    ("", "inform"),
    ("   ", None),
    ("(침묵)", None),
    ("(침묵)", "silence"),
    (" (한숨) [고개를 숙임] ", None),
    ("（침묵）", None),
    ("(침묵)\n", None),
    ("\t(웃음)\n(한숨)", "null"),
    ("아 잠깐만요", None),
    ("아 잠깐만요", "silence"),
    ("(웃음) 네", None),
    ("네 (웃음)", "affirm"),
    ("(괄호가 안 닫힘", None),
    ("괄호 없음)", None),
    ("[", None),
    ("()", None),
    ("(a)(b)(c)", "goodbye"),
    ("…", None),
    ("음", "silence"),
    ("\u3000(침묵)\u3000", None),
    ("\u00a0", None),
]


@pytest.mark.parametrize(("text", "act"), CASES)
def test_it_agrees_with_the_python_rule(text, act):
    sql, params = rules.no_input_sql("x.text", "x.act")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql} FROM (SELECT %s::text AS text, %s::varchar AS act) x", [*params, text, act])
        (in_sql,) = cursor.fetchone()
    assert in_sql is rules.is_no_input(text, act)


def test_it_spells_out_every_whitespace_character_python_knows():
    beyond = [c for c in range(0x3001, 0x110000) if chr(c).isspace()]
    assert beyond == []
    assert set(rules._PYTHON_WHITESPACE) == {chr(c) for c in range(0x3001) if chr(c).isspace()}
