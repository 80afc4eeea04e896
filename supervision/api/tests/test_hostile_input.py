"""Bad input never answers 500 and never writes half a thing."""

from __future__ import annotations

import pytest
from django.test import Client

from supervision.models import SupervisorComment

HUGE = 10**30
DEEP = "[" * 50_000 + "]" * 50_000


@pytest.fixture
def supervisor(world):
    # A plain Django client with the supervisor's session: raw bodies go through unchanged.
    client = Client()
    client.force_login(world["supervisor_a"])
    return client


def _comment_count():
    return SupervisorComment.objects.count()


RAW_BODIES = [
    pytest.param("{", id="truncated"),
    pytest.param("not json", id="not-json"),
    pytest.param(DEEP, id="nested-50000-arrays"),
    pytest.param('{"a":' * 50_000 + "1" + "}" * 50_000, id="nested-50000-objects"),
    pytest.param('{"turn": 1, "kind": "critique", "text": "a\\u0000b"}', id="nul-in-text"),
    pytest.param('{"turn": 1, "kind": "critique", "text": "\\ud800"}', id="lone-surrogate"),
    pytest.param(
        '{"turn": 1, "kind": "critique", "text": "x", "intent_deviation": {"dimension": "\\udfff"}}',
        id="surrogate-in-deviation",
    ),
    pytest.param(b"\xff\xfe\x00garbage", id="not-utf8"),
    pytest.param("NaN", id="nan"),
    pytest.param("[]", id="array"),
    pytest.param("null", id="null"),
    pytest.param('"text"', id="string"),
]


@pytest.mark.parametrize("body", RAW_BODIES)
def test_it_answers_400_to_a_malformed_comment_body(supervisor, body):
    before = _comment_count()
    response = supervisor.post("/api/v1/comments/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:200]
    assert _comment_count() == before


@pytest.mark.parametrize("body", RAW_BODIES)
def test_it_answers_400_to_a_malformed_patch(supervisor, world, body):
    url = f"/api/v1/comments/{world['comment_a'].pk}/"
    response = supervisor.patch(url, body, content_type="application/json")
    assert response.status_code == 400, response.content[:200]
    assert SupervisorComment.objects.get(pk=world["comment_a"].pk).text == world["comment_a"].text


@pytest.mark.parametrize("body", RAW_BODIES[:4])
def test_it_answers_400_to_a_malformed_token_request(world, body):
    response = Client().post("/api/v1/auth/token/", body, content_type="application/json")
    assert response.status_code == 400


WRONG_FIELDS = [
    {"turn": "abc"},
    {"turn": -1},
    {"turn": HUGE},
    {"turn": 1.5},
    {"turn": None},
    {"turn": [1]},
    {"turn": {"id": 1}},
    {"kind": 3},
    {"kind": ["critique"]},
    {"kind": "verdict"},
    {"text": None},
    {"text": ""},
    {"text": {"a": 1}},
    {"text": "가" * 100_000},
    {"intent_deviation": [1, 2]},
    {"intent_deviation": {"severity": HUGE}},
    {"intent_deviation": {"expected": "x" * 100_000}},
    {"intent_deviation": {"x" * 100_000: 1}},
]


@pytest.mark.parametrize("fields", WRONG_FIELDS, ids=lambda f: repr(f)[:40])
def test_it_answers_400_to_wrong_types_and_sizes(supervisor, world, fields):
    body = {"turn": world["turn_a"].pk, "kind": "critique", "text": "해석이 이릅니다.", **fields}
    before = _comment_count()
    response = supervisor.post("/api/v1/comments/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:200]
    assert _comment_count() == before
    patch = supervisor.patch(f"/api/v1/comments/{world['comment_a'].pk}/", fields, content_type="application/json")
    assert patch.status_code in (200, 400), patch.content[:200]  # "turn" is read-only on PATCH: ignored


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/sessions/?page=999999",
        "/api/v1/sessions/?page=-1",
        "/api/v1/sessions/?page=abc",
        "/api/v1/sessions/?page_size=-5",
        f"/api/v1/sessions/?page_size={HUGE}",
        f"/api/v1/sessions/?trainee={HUGE}",
        "/api/v1/sessions/?trainee=-1",
        "/api/v1/sessions/?trainee=abc",
        "/api/v1/sessions/?trainee=1.5",
        "/api/v1/sessions/?trainee=%00",
        "/api/v1/sessions/?trainee=" + "9" * 100_000,
        f"/api/v1/sessions/{HUGE}/",
        f"/api/v1/sessions/{HUGE}/golden/",
        "/api/v1/sessions/-1/",
        "/api/v1/sessions/abc/",
        "/api/v1/sessions/%00/",
        f"/api/v1/comments/{HUGE}/",
        "/api/v1/comments/?page=999999",
        "/api/v1/comments/-1/",
    ],
)
def test_it_never_answers_500_to_a_hostile_url(supervisor, url):
    response = supervisor.get(url)
    assert response.status_code in (200, 400, 404), (url[:80], response.status_code)


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_it_answers_404_to_a_huge_id_on_writes(supervisor, method):
    response = getattr(supervisor, method)(f"/api/v1/comments/{HUGE}/", "{}", content_type="application/json")
    assert response.status_code == 404


def test_it_answers_415_to_an_unknown_content_type(supervisor, world):
    response = supervisor.post("/api/v1/comments/", "<xml/>", content_type="application/xml")
    assert response.status_code == 415
