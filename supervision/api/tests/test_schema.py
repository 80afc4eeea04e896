"""The OpenAPI document: valid, complete, served to logged-in users, and fuzzed with schemathesis."""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token

# Bounded so that the whole fuzz run stays well under two minutes on a shared two-core machine.
EXAMPLES_PER_OPERATION = 50


def test_it_serves_the_schema_with_every_endpoint_and_its_shapes(world, client_as):
    document = client_as("trainee_a").get("/api/schema/?format=json").json()
    paths = document["paths"]
    assert {
        "/api/v1/auth/token/",
        "/api/v1/taxonomy/",
        "/api/v1/sessions/",
        "/api/v1/sessions/{id}/",
        "/api/v1/sessions/{id}/golden/",
        "/api/v1/comments/",
        "/api/v1/comments/{id}/",
    } <= set(paths)
    for path, operations in paths.items():
        for method, operation in operations.items():
            assert operation["responses"], (method, path)
            assert any("content" in r or code == "204" for code, r in operation["responses"].items()), (method, path)
    schemas = document["components"]["schemas"]
    assert set(schemas["IntentDeviationSchema"]["properties"]) == {"dimension", "expected", "actual", "severity"}
    assert "history" in schemas["CommentDetail"]["properties"]
    assert "application/x-ndjson" in paths["/api/v1/sessions/{id}/golden/"]["get"]["responses"]["200"]["content"]


def test_it_serves_the_docs_from_local_static_files(world, client_as):
    page = client_as("trainee_a").get("/api/docs/").content.decode()
    assert "swagger-ui" in page
    assert "/static/drf_spectacular_sidecar/" in page
    assert "cdn" not in page.lower()


@pytest.fixture
def wsgi_app():
    """The real WSGI application, keeping the test's database connection open as Django's test client does."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield get_wsgi_application()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_it_never_answers_5xx_to_generated_requests(world, wsgi_app):
    token = Token.objects.create(user=world["supervisor_a"])
    auth = {"Authorization": f"Token {token.key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app, headers=auth)
    # Log-out would revoke the fuzzer's own token and turn every later request into a 403.
    operations = [
        operation
        for operation in (result.ok() for result in schema.get_all_operations())
        if operation.path != "/api/v1/auth/logout/"
    ]
    assert len(operations) >= 8
    failures, statuses = [], Counter()
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def call(case):
            response = case.call(headers=auth)
            statuses[response.status_code // 100] += 1
            if response.status_code >= 500:
                failures.append((case.method, case.formatted_path, case.body, response.status_code))

        call()
    assert not failures, failures[:5]
    # The run did reach the views: some requests succeeded and some were rejected as invalid.
    assert statuses[2] >= len(operations) and statuses[4] > 0, statuses
    print(dict(statuses))


@pytest.mark.parametrize("path", ["/api/schema/", "/api/schema/?format=json"])
def test_it_hides_the_schema_from_anonymous_visitors(db, path):
    from django.test import Client

    assert Client().get(path).status_code in (401, 403)
