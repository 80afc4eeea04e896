"""The API speaks one language: every error body in Korean, every operation summarised in the schema."""

from __future__ import annotations

import json
import re

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

HANGUL = re.compile(r"[가-힣]")
ENGLISH_WORDS = re.compile(r"\b[A-Za-z]{4,}\b")
METHODS = ("get", "post", "put", "patch", "delete")


def messages_of(body) -> list[str]:
    """Every message string of a DRF error body (field names and codes are keys, not messages)."""
    if isinstance(body, dict):
        return [m for value in body.values() for m in messages_of(value)]
    if isinstance(body, list):
        return [m for value in body for m in messages_of(value)]
    return [body] if isinstance(body, str) else []


def assert_korean(response) -> None:
    texts = messages_of(response.json())
    assert texts, response.content
    for text in texts:
        # Codes and field names may appear inside a Korean sentence; a sentence in English may not.
        assert HANGUL.search(text), text
        assert len(ENGLISH_WORDS.findall(re.sub(r"[a-z_]+_[a-z_]+|'[^']*'", "", text))) <= 2, text


@pytest.mark.django_db
def test_error_bodies_are_in_korean(world, client_as):
    anonymous = APIClient()
    assert_korean(anonymous.get("/api/v1/sessions/"))  # 401/403: not logged in
    trainee = client_as("trainee_a")
    assert_korean(trainee.get("/api/v1/sessions/999999/"))  # 404
    response = trainee.post("/api/v1/comments/", {"turn": world["turn_a"].pk, "kind": "critique"}, format="json")
    assert response.status_code in (400, 403)
    assert_korean(response)
    supervisor = client_as("supervisor_a")
    invalid = supervisor.post("/api/v1/comments/", {"turn": "x", "kind": "nope", "text": ""}, format="json")
    assert invalid.status_code == 400
    assert_korean(invalid)
    broken = supervisor.post("/api/v1/comments/", "{not json", content_type="application/json")
    assert broken.status_code == 400
    assert_korean(broken)
    assert_korean(supervisor.get("/api/v1/sessions/?page=999"))  # an empty page: 404


def test_every_operation_has_a_summary():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = [
        (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]
    assert len(operations) >= 20
    missing = [f"{method} {path}" for method, path, operation in operations if not operation.get("summary")]
    assert missing == [], json.dumps(missing, ensure_ascii=False)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "title"),
    [
        ("/api/v1/sessions/", "회기 목록"),
        ("/api/v1/gauges/", "검토 지표 목록"),
        ("/api/v1/safety-events/", "안전 사건 목록"),
        ("/api/v1/taxonomy/", "라벨 분류 체계"),
    ],
)
def test_the_browsable_pages_are_titled_in_korean_without_the_developers_docstrings(world, client_as, url, title):
    # They read "Session List" and "Review-gauge snapshots the user may see…" to a trainee.
    page = client_as("trainee_a").get(url, HTTP_ACCEPT="text/html").content.decode()
    heading = page.split('<div class="page-header">', 1)[1].split("</div>", 1)[0]
    assert f"<h1>{title}</h1>" in heading
    assert not ENGLISH_WORDS.search(re.sub(r"<[^>]+>", " ", heading))
    assert "<title>" + f"{title} – 수련 감독 포털 API</title>" in page and "Django REST framework" not in page


def test_the_api_documentation_describes_the_api_in_korean():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert HANGUL.search(schema["info"]["description"]) and schema["info"]["title"] == "수련 감독 포털 API"


@pytest.mark.django_db
def test_the_api_root_lists_every_address_in_korean_and_each_one_answers(world, client_as):
    assert APIClient().get("/api/v1/").status_code in (401, 403)
    supervisor = client_as("supervisor_a")
    links = supervisor.get("/api/v1/").json()
    assert all(HANGUL.search(name) or name.startswith("API") or name.startswith("OpenAPI") for name in links)
    session_id = supervisor.get("/api/v1/sessions/").json()["results"][0]["id"]
    trainee_id = world["session_a"].trainee_id
    for name, url in links.items():
        assert url.startswith("http://testserver/api/"), (name, url)
        url = url.replace("{id}", str(trainee_id if "/trainees/" in url else session_id))
        if url.endswith("/review/"):
            continue  # POST only: reviewing an event is not a read
        assert supervisor.get(url).status_code == 200, (name, url)
    assert "API v1" in supervisor.get("/api/v1/", HTTP_ACCEPT="text/html").content.decode()
