"""The OpenAPI document: valid, complete (error responses too), served to logged-in users, and fuzzed with
schemathesis' default checks."""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token

# One default check does not fit this API: "schema-valid data is accepted" cannot hold where a value must
# name an object the caller may see — a comment's turn, ?trainee= on the lists (an unknown one is a 400 that
# says so) — or pass a rule a JSON schema cannot state (the privacy guard; the token log-in answers random
# credentials with 400, DRF's ObtainAuthToken, CONTRACT §5). Those answers are documented 400s. Every other
# default check runs on every operation: no 5xx, declared status codes, content types, headers and bodies,
# negative data rejected, auth enforced.
EXCLUDED_CHECKS = [schemathesis.checks.positive_data_acceptance]

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


def test_it_passes_schemathesis_default_checks_on_generated_requests(world, wsgi_app):
    token = Token.objects.create(user=world["supervisor_a"])
    auth = {"Authorization": f"Token {token.key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app, headers=auth)

    @schema.auth()
    class PortalToken:
        # The token as schemathesis' own auth, so its auth checks know the credentials are real and probe
        # the operation without them (and with a wrong token) expecting 401/403.
        def get(self, case, context):
            return token.key

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), "Authorization": f"Token {data}"}

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
            derandomize=True,  # the same requests every run: a suite check, not a flaky one
            suppress_health_check=list(HealthCheck),
        )
        def call(case):
            # schemathesis' default checks: no 5xx, and every status, content type, header and body the
            # schema declares (the error responses included).
            response = case.call()
            statuses[response.status_code // 100] += 1
            try:
                case.validate_response(response, excluded_checks=EXCLUDED_CHECKS)
            except Exception as failed:  # schemathesis' FailureGroup / CheckFailed: collected, shown below
                failures.append((case.method, case.formatted_path, response.status_code, str(failed)[:300]))

        call()
    assert not failures, failures[:5]
    # The run did reach the views: some requests succeeded and some were rejected as invalid.
    assert statuses[2] >= len(operations) and statuses[4] > 0, statuses
    print(dict(statuses))


@pytest.mark.parametrize("path", ["/api/schema/", "/api/schema/?format=json"])
def test_it_hides_the_schema_from_anonymous_visitors(db, path):
    from django.test import Client

    assert Client().get(path).status_code in (401, 403)


def test_it_declares_the_error_responses_of_every_operation(world, client_as):
    document = client_as("trainee_a").get("/api/schema/?format=json").json()
    missing = [
        (method, path, status)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        for status in ("400", "401", "403", "404", "429")
        if status not in operation["responses"]
    ]
    assert not missing, missing[:10]
    assert document["components"]["schemas"]["Error"]["required"] == ["detail"]
