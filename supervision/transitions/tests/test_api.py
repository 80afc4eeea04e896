"""/api/v1/transitions/ and /api/v1/persona-runs/ (CONTRACT §10) by role; the role matrix covers every role
× route, these check what comes back."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from supervision.transitions.tests.conftest import TA01_BY_CATEGORY, persona_lines
from supervision.transitions.tests.factories import saved_persona_run


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def test_a_supervisor_counts_only_their_trainees_sessions(hand_made, cast):
    table = client_for(cast.supervisor_a).get("/api/v1/transitions/").json()
    assert table["sessions"] == 1 and table["transitions"] == sum(TA01_BY_CATEGORY.values())
    got = {(c["state"], c["move"], n): k for c in table["contexts"] for n, k in c["next"].items()}
    assert got == TA01_BY_CATEGORY
    other = client_for(cast.supervisor_b).get("/api/v1/transitions/?by=technique").json()
    assert other["by"] == "technique" and other["sessions"] == 1 and other["transitions"] == 1
    everything = client_for(cast.staff).get("/api/v1/transitions/").json()
    assert everything["sessions"] == 2 and everything["transitions"] == 6


def test_it_gives_intervals_beside_the_plain_counts(hand_made, cast):
    table = client_for(cast.staff).get("/api/v1/transitions/").json()
    context = next(c for c in table["contexts"] if (c["state"], c["move"]) == ("defensive", "RELATIONAL"))
    assert context["next"] == {"affect_contact": 1, "defense_loosening": 1}
    assert context["intervals"] == {"affect_contact": [0.0945, 0.9055], "defense_loosening": [0.0945, 0.9055]}


def test_it_refuses_an_unknown_unit_with_400(hand_made, cast):
    response = client_for(cast.staff).get("/api/v1/transitions/?by=stage")
    assert response.status_code == 400 and "by" in response.json()


@pytest.mark.parametrize("path", ["/api/v1/transitions/", "/api/v1/persona-runs/", "/api/v1/persona-runs/{id}/"])
def test_a_trainee_gets_403_everywhere(hand_made, cast, path):
    run = saved_persona_run(persona_lines("PA01", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"])]))
    assert client_for(cast.trainee_a).get(path.format(id=run.pk)).status_code == 403


def test_it_lists_saved_runs_and_serves_the_saved_json(hand_made, cast):
    first = saved_persona_run(persona_lines("PA01", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"])]))
    second = saved_persona_run(
        persona_lines("PA02", [("K", ["defensive"]), ("C", ["reflection"]), ("K", ["defense_loosening"])]),
        rater="persona-8",
    )
    listing = client_for(cast.supervisor_b).get("/api/v1/persona-runs/").json()
    assert listing["count"] == 2
    assert [r["id"] for r in listing["results"]] == [second.pk, first.pk]
    assert set(listing["results"][0]) == {"id", "rater", "created_at", "jsd", "coverage", "contexts"}
    assert listing["results"][0]["jsd"] == second.figures["jsd"] == 0.3113  # half its golden mass matches
    detail = client_for(cast.staff).get(f"/api/v1/persona-runs/{first.pk}/").json()
    assert detail == first.figures and detail["rater"] == "persona-7" and detail["jsd"] == 1.0
    assert client_for(cast.staff).get("/api/v1/persona-runs/999999/").status_code == 404


@pytest.mark.parametrize("n", [1, 6])
def test_it_lists_runs_in_constant_queries(hand_made, cast, django_assert_num_queries, n):
    for i in range(n):
        saved_persona_run(persona_lines(f"PQ{i:02d}", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"])]))
    client = client_for(cast.supervisor_a)
    with django_assert_num_queries(5):  # session, user, roles, count, page: the same for any n
        response = client.get("/api/v1/persona-runs/")
    assert response.json()["count"] == n
