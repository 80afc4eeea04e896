"""Query counts do not grow with the number of rows: 10 and 100 items cost the same.

The numbers are pinned: three for the request itself (session, user, roles), then the endpoint's own.
"""

from __future__ import annotations

import pytest

from supervision.api.tests.factories import add_comments
from supervision.testing import import_session

REQUEST = 3  # session row, user row, role groups


def _sessions(world, n):
    for i in range(n):
        session = import_session(f"QC{i:03d}", 4, "trainee_a")
        add_comments(session, world["supervisor_a"], suggestion=False)


@pytest.mark.parametrize("n", [10, 100])
def test_it_lists_sessions_in_constant_queries(world, client_as, django_assert_num_queries, n):
    _sessions(world, n)
    client = client_as("supervisor_a")
    with django_assert_num_queries(REQUEST + 2):  # count, page
        response = client.get("/api/v1/sessions/?page_size=200")
    assert len(response.json()["results"]) == n + 1


@pytest.mark.parametrize("n", [10, 100])
def test_it_lists_comments_in_constant_queries(world, client_as, django_assert_num_queries, n):
    _sessions(world, n)
    client = client_as("supervisor_a")
    with django_assert_num_queries(REQUEST + 2):  # count, page
        response = client.get("/api/v1/comments/?page_size=200")
    assert len(response.json()["results"]) == n + 2  # plus world's critique and suggestion


@pytest.mark.parametrize("n", [10, 100])
def test_it_serves_a_session_detail_in_constant_queries(world, client_as, django_assert_num_queries, n):
    session = import_session("QCDETAIL", n, "trainee_a")
    for turn in session.turns.all()[: n // 2]:
        add_comments(session, world["supervisor_a"], turn=turn)
    client = client_as("supervisor_a")
    with django_assert_num_queries(REQUEST + 5):  # session, turns, technique links, client-state links, comments
        response = client.get(f"/api/v1/sessions/{session.pk}/")
    assert len(response.json()["turns"]) == n


@pytest.mark.parametrize("n", [10, 100])
def test_it_exports_golden_lines_in_constant_queries(world, client_as, django_assert_num_queries, n):
    session = import_session("QCGOLD", n, "trainee_a")
    client = client_as("trainee_a")
    with django_assert_num_queries(
        REQUEST + 5
    ):  # session+trainee, turns, technique links, client-state links, comments
        response = client.get(f"/api/v1/sessions/{session.pk}/golden/")
    assert len(response.content.splitlines()) == n


@pytest.mark.parametrize("n", [10, 100])
def test_it_serves_a_comment_detail_with_history_in_constant_queries(world, client_as, django_assert_num_queries, n):
    comment = world["comment_a"]
    for i in range(n):
        client_as("supervisor_a").patch(f"/api/v1/comments/{comment.pk}/", {"text": f"수정 {i}"}, format="json")
    client = client_as("trainee_a")
    with django_assert_num_queries(REQUEST + 2):  # comment with turn/session/writer, history with users
        response = client.get(f"/api/v1/comments/{comment.pk}/")
    assert len(response.json()["history"]) == n + 1
