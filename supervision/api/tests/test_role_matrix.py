"""Who may do what: every endpoint under /api/ × the cast, as a table.

A new endpoint adds one row per method. ``kwargs`` and ``body`` name objects of the ``world`` fixture
(``"@session_a"`` → its pk). The last test walks the URL resolver and fails for any /api/ route (and
method) the table does not cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from conftest import PASSWORD
from supervision.api.tests.conftest import ROLES


@dataclass(frozen=True)
class Row:
    name: str
    method: str
    # One status per role, in the order of ROLES:
    # anonymous, trainee_a, trainee_b, supervisor_a, supervisor_b, staff
    expect: tuple[int, ...]
    kwargs: dict = field(default_factory=dict)
    body: dict | None = None


EVERYONE = (403, 200, 200, 200, 200, 200)
A_ONLY = (403, 200, 404, 200, 404, 200)  # the target objects belong to trainee_a

MATRIX = (
    Row("api:auth-token", "post", (200, 200, 200, 200, 200, 200), body={"username": "trainee_a", "password": PASSWORD}),
    Row("api:auth-logout", "post", (403, 204, 204, 204, 204, 204)),
    Row("api:taxonomy", "get", EVERYONE),
    Row("api:session-list", "get", EVERYONE),
    Row("api:session-detail", "get", A_ONLY, {"pk": "@session_a"}),
    Row("api:session-golden", "get", A_ONLY, {"pk": "@session_a"}),
    Row("api:comment-list", "get", EVERYONE),
    # supervisor_b cannot see turn_a, so for them it does not exist: 400 naming the field, like a made-up id.
    Row(
        "api:comment-list",
        "post",
        (403, 403, 403, 201, 400, 403),
        body={"turn": "@turn_a", "kind": "rationale", "text": "근거"},
    ),
    Row("api:comment-detail", "get", A_ONLY, {"pk": "@comment_a"}),
    Row("api:comment-detail", "patch", (403, 403, 404, 200, 404, 403), {"pk": "@comment_a"}, {"text": "고친 논평"}),
    Row("api:comment-detail", "delete", (403, 403, 404, 204, 404, 403), {"pk": "@comment_a"}),
    Row("gauge-list", "get", EVERYONE),
    Row("tags-list", "get", A_ONLY, {"trainee_id": "@trainee_a"}),
    # Observed evidence comes from supervisors; trainees may only declare their own focus.
    Row(
        "tags-list",
        "post",
        (403, 403, 404, 201, 404, 403),
        {"trainee_id": "@trainee_a"},
        {"tag": "overuses_relational", "source": "observed", "event": "두 번째 회기에서도 공감 위주"},
    ),
    Row(
        "tags-list",
        "post",
        (403, 201, 404, 201, 404, 403),
        {"trainee_id": "@trainee_a"},
        {"tag": "prioritizes_exploratory", "source": "declared", "event": "탐색 질문을 늘리고 싶다"},
    ),
    Row("tags-conflicted", "get", A_ONLY, {"trainee_id": "@trainee_a"}),
    Row(
        "tags-contradictions",
        "post",
        (403, 403, 404, 201, 404, 403),
        {"trainee_id": "@trainee_a", "tag": "overuses_relational"},
        {"event": "균형 잡힌 회기", "severity": "low"},
    ),
    Row("api-schema", "get", EVERYONE),
    Row("api-docs", "get", (302, 200, 200, 200, 200, 200)),
)


def _resolve(value, world):
    return world[value[1:]].pk if isinstance(value, str) and value.startswith("@") else value


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("row", MATRIX, ids=lambda r: f"{r.method}-{r.name}")
def test_it_answers_each_role_as_the_matrix_says(row, role, world, client_as):
    url = reverse(row.name, kwargs={k: _resolve(v, world) for k, v in row.kwargs.items()})
    body = {k: _resolve(v, world) for k, v in (row.body or {}).items()} if row.body is not None else None
    response = getattr(client_as(role), row.method)(url, body, format="json")
    assert response.status_code == row.expect[ROLES.index(role)], (role, url, response.content[:300])


def _api_routes(patterns=None, prefix="", namespace=""):
    """(route, qualified name, callback) of every URL pattern under /api/."""
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            ns = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _api_routes(pattern.url_patterns, route, ns)
        elif isinstance(pattern, URLPattern) and route.lstrip("^").startswith("api/"):
            yield route, f"{namespace}{pattern.name}", pattern.callback


def _methods(callback) -> set[str]:
    """The methods a route answers other than with 405 (HEAD and OPTIONS follow GET and need no row)."""
    view_class = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view_class is None:  # a decorated page (the docs): GET only
        return {"get"}
    allowed = set(view_class.http_method_names) - {"head", "options"}
    actions = getattr(callback, "actions", None)
    if actions:  # a viewset route: its method → action map
        return set(actions) & allowed
    return {m for m in allowed if hasattr(view_class, m)}


def test_it_covers_every_api_route_and_method():
    covered = {(row.name, row.method) for row in MATRIX}
    routes = list(_api_routes())
    assert len(routes) >= 8, routes  # the walk itself works
    missing = sorted(
        f"{method.upper()} /{route} ({name})"
        for route, name, callback in routes
        for method in _methods(callback)
        if (name, method) not in covered
    )
    assert not missing, "routes under /api/ missing from MATRIX: " + ", ".join(missing)
