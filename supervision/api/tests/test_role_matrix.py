"""Who may do what: every endpoint under /api/, every /feedback/ page and every admin change list × the
cast, as tables.

A new endpoint adds one row per method. ``kwargs`` and ``body`` name objects of the ``world`` fixture
(``"@session_a"`` → its pk). The last test walks the URL resolver and fails for any /api/ route (and
method) the table does not cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from django.contrib import admin
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from supervision.api.tests.conftest import ROLES
from supervision.testing import PASSWORD

# Every row reads the same world; what a request writes is undone after its test (see ``module_world``).
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def world(module_world):
    return module_world


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
    Row("api:root", "get", EVERYONE),
    Row("api:taxonomy", "get", EVERYONE),
    Row("api:session-list", "get", EVERYONE),
    Row("api:session-detail", "get", A_ONLY, {"pk": "@session_a"}),
    Row("api:session-golden", "get", A_ONLY, {"pk": "@session_a"}),
    Row("api:session-trajectory", "get", A_ONLY, {"pk": "@session_a"}),
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
    Row("api:gauge-list", "get", EVERYONE),
    Row("api:tags-list", "get", A_ONLY, {"trainee_id": "@trainee_a"}),
    # Observed evidence comes from supervisors; trainees may only declare their own focus.
    Row(
        "api:tags-list",
        "post",
        (403, 403, 404, 201, 404, 403),
        {"trainee_id": "@trainee_a"},
        {"tag": "overuses_relational", "source": "observed", "event": "두 번째 회기에서도 공감 위주"},
    ),
    Row(
        "api:tags-list",
        "post",
        (403, 201, 404, 201, 404, 403),
        {"trainee_id": "@trainee_a"},
        {"tag": "prioritizes_exploratory", "source": "declared", "event": "탐색 질문을 늘리고 싶다"},
    ),
    Row("api:tags-conflicted", "get", A_ONLY, {"trainee_id": "@trainee_a"}),
    Row(
        "api:tags-contradictions",
        "post",
        (403, 403, 403, 201, 404, 403),
        {"trainee_id": "@trainee_a", "tag": "overuses_relational"},
        {"event": "균형 잡힌 회기", "severity": "low"},
    ),
    Row("api:safety-event-list", "get", EVERYONE),
    # Only the trainee's supervisor reviews; the trainee themself and staff may read but not review.
    Row(
        "api:safety-event-review",
        "post",
        (403, 403, 404, 200, 404, 403),
        {"event_id": "@safety_event_a"},
        {"note": "다음 회기 전에 안전 계획을 함께 점검하기로 함"},
    ),
    # Agreement figures are for supervisors and staff; a trainee gets 403, and a run over none of
    # supervisor_b's trainees' turns does not exist for them.
    Row("api:annotation-run-list", "get", (403, 403, 403, 200, 200, 200)),
    Row("api:annotation-run-agreement", "get", (403, 403, 403, 200, 404, 200), {"pk": "@run_a"}),
    # The persona answer key (CONTRACT §10): supervisors (over their trainees' sessions) and staff; trainees 403.
    Row("api:transitions", "get", (403, 403, 403, 200, 200, 200)),
    Row("api:persona-run-list", "get", (403, 403, 403, 200, 200, 200)),
    Row("api:persona-run-detail", "get", (403, 403, 403, 200, 200, 200), {"pk": "@persona_run"}),
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


# The pages: /feedback/ and every admin change list, with the same cast. A page answers an anonymous
# visitor, and the admin a non-staff member, with the log-in page (302).
ADMIN_STAFF_ONLY = (302, 302, 302, 403, 403, 200)
ADMIN_SUPERVISORS = (302, 302, 302, 200, 200, 403)
ADMIN_BOTH = (302, 302, 302, 200, 200, 200)
ADMIN_NOBODY = (302, 302, 302, 403, 403, 403)  # superusers only

PAGES = (
    Row("feedback:dashboard", "get", (302, 200, 200, 200, 200, 200)),
    Row("feedback:session", "get", (302, 200, 404, 200, 404, 200), {"session_id": "@session_a"}),
    # Reading and replying are the trainee's own acts on a comment about their session.
    Row("feedback:comment-read", "post", (302, 302, 404, 403, 404, 403), {"comment_id": "@comment_a"}),
    Row(
        "feedback:comment-reply",
        "post",
        (302, 302, 404, 403, 404, 403),
        {"comment_id": "@comment_a"},
        {"text": "다음 회기에 반영하겠습니다."},
    ),
    Row("tags-page", "get", (302, 200, 200, 403, 403, 403)),
    Row(
        "tags-declare",
        "post",
        (302, 302, 302, 403, 403, 403),
        body={"tag": "prioritizes_exploratory", "event": "탐색 질문을 늘리고 싶다"},
    ),
    Row("admin:auth_group_changelist", "get", ADMIN_NOBODY),
    Row("admin:auth_user_changelist", "get", ADMIN_NOBODY),
    Row("admin:authtoken_tokenproxy_changelist", "get", ADMIN_NOBODY),
    Row("admin:axes_accesslog_changelist", "get", ADMIN_NOBODY),
    Row("admin:axes_accessfailurelog_changelist", "get", ADMIN_STAFF_ONLY),
    Row("admin:axes_accessattempt_changelist", "get", ADMIN_STAFF_ONLY),
    Row("admin:taxonomy_stagedef_changelist", "get", ADMIN_BOTH),
    Row("admin:taxonomy_techniquelabeldef_changelist", "get", ADMIN_BOTH),
    Row("admin:taxonomy_clientstatedef_changelist", "get", ADMIN_BOTH),
    Row("admin:taxonomy_labelalias_changelist", "get", ADMIN_BOTH),
    Row("admin:importing_importjob_changelist", "get", ADMIN_STAFF_ONLY),
    Row("admin:supervision_session_changelist", "get", ADMIN_BOTH),
    Row("admin:supervision_turn_changelist", "get", ADMIN_BOTH),
    Row("admin:supervision_supervisorcomment_changelist", "get", ADMIN_BOTH),
    Row("admin:supervision_traineeassignment_changelist", "get", ADMIN_BOTH),
    Row("admin:supervision_labelchange_changelist", "get", ADMIN_BOTH),
    Row("admin:tags_traineetag_changelist", "get", ADMIN_BOTH),
    Row("admin:gauge_targetband_changelist", "get", ADMIN_BOTH),
    Row("admin:gauge_gaugesnapshot_changelist", "get", ADMIN_BOTH),
    # Suggestions are accepted or dismissed by the trainee's supervisor; staff do not review them.
    Row("admin:gauge_suggestedcomment_changelist", "get", ADMIN_SUPERVISORS),
    Row("admin:trajectory_trajectoryaudit_changelist", "get", ADMIN_BOTH),
    Row("admin:safety_safetyreview_changelist", "get", ADMIN_BOTH),
    Row("admin:agreement_annotationrun_changelist", "get", ADMIN_BOTH),
    Row("admin:agreement_adjudicationdecision_changelist", "get", ADMIN_BOTH),
    Row("admin:transitions_personarun_changelist", "get", ADMIN_BOTH),
    # Dismissed AI suggestions: shown on each transcript; the list itself is for superusers.
    Row("admin:suggesting_suggestiondismissal_changelist", "get", ADMIN_NOBODY),
)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("row", PAGES, ids=lambda r: f"{r.method}-{r.name}")
def test_each_page_answers_each_role_as_the_matrix_says(row, role, world, client_as):
    url = reverse(row.name, kwargs={k: _resolve(v, world) for k, v in row.kwargs.items()})
    response = getattr(client_as(role), row.method)(url, row.body or {})
    assert response.status_code == row.expect[ROLES.index(role)], (role, url, response.content[:300])
    if response.status_code == 302 and role in ("anonymous",):
        assert "/login/" in response["Location"]


def test_it_covers_every_admin_change_list():
    covered = {row.name for row in PAGES}
    missing = sorted(
        name
        for model in admin.site._registry
        if (name := f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist") not in covered
    )
    assert not missing, "admin change lists missing from PAGES: " + ", ".join(missing)
