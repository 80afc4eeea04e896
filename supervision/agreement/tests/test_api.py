"""``/api/v1/annotation-runs/``: every role, figures over the viewer's turns only, constant queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from supervision.agreement.tests.conftest import run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.agreement.tests.test_score_agreement import EXPECTED_AG01
from supervision.labelling import turn_labels_update
from supervision.models import Turn


@pytest.fixture
def both_run(golden):
    """The hand-counted rater over both sessions: AG01 (trainee_a) and AG02 (trainee_b)."""
    return saved_run(run_lines("AG01") + run_lines("AG02"), rater="eval-ai-3")


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def test_it_scores_a_supervisor_over_their_own_trainees_turns_only(cast, both_run):
    figures = client_for(cast.supervisor_a).get(f"/api/v1/annotation-runs/{both_run.pk}/agreement/").json()
    # AG02 is trainee_b's: supervisor_a's figures are exactly the AG01 figures.
    assert figures == EXPECTED_AG01


def test_the_figures_are_kept_until_a_session_they_cover_is_written(cast, both_run):
    """Kept in the cache under the state of the sessions in view: a second request reads no golden label,
    another scope has figures of its own, and a golden label written since is in the next answer."""
    url = f"/api/v1/annotation-runs/{both_run.pk}/agreement/"
    supervisor = client_for(cast.supervisor_a)
    first = supervisor.get(url).json()
    with CaptureQueriesContext(connection) as warm:
        assert supervisor.get(url).json() == first == EXPECTED_AG01
    assert not [q for q in warm.captured_queries if '"turn_technique"' in q["sql"]]
    assert client_for(cast.staff).get(url).json()["turns"] == 12
    # the rater said no technique on C-003; the golden set now says empathy: one more miss
    written = Turn.objects.get(utterance_id="AG01-C-003")
    turn_labels_update(turn=written, changed_by=cast.supervisor_a, via="admin", techniques=["empathy"])
    after = supervisor.get(url).json()
    assert after["axes"]["techniques"]["micro_f1"] < first["axes"]["techniques"]["micro_f1"]
    assert client_for(cast.staff).get(url).json()["axes"]["techniques"]["micro_f1"] < 1


def test_it_scores_staff_over_every_turn(cast, both_run):
    figures = client_for(cast.staff).get(f"/api/v1/annotation-runs/{both_run.pk}/agreement/").json()
    # The same six answers twice: twice the counts, the same rates and κ.
    assert figures["turns"] == 12
    assert figures["axes"]["techniques"]["turns"] == 8
    assert figures["axes"]["techniques"]["micro_f1"] == EXPECTED_AG01["axes"]["techniques"]["micro_f1"]
    assert figures["axes"]["stage"]["confusion"]["라포"] == {"라포": 2, "탐색": 2}
    assert figures["safety"]["support"] == 4
    assert [m["utterance_id"] for m in figures["safety"]["missed"]] == ["AG01-K-002", "AG02-K-002"]


def test_it_lists_runs_with_the_turns_the_viewer_may_see(cast, both_run):
    only_b = saved_run(run_lines("AG02"), rater="annotator-b", kind="human")
    staff = client_for(cast.staff).get("/api/v1/annotation-runs/").json()
    assert [(r["id"], r["rater"], r["kind"], r["turns"]) for r in staff["results"]] == [
        (only_b.pk, "annotator-b", "human", 6),
        (both_run.pk, "eval-ai-3", "ai", 12),
    ]
    assert set(staff["results"][0]) == {"id", "rater", "kind", "created_at", "turns"}
    supervisor_a = client_for(cast.supervisor_a).get("/api/v1/annotation-runs/").json()
    assert [(r["rater"], r["turns"]) for r in supervisor_a["results"]] == [("eval-ai-3", 6)]
    assert client_for(cast.supervisor_a).get(f"/api/v1/annotation-runs/{only_b.pk}/agreement/").status_code == 404


def test_it_refuses_trainees_and_anonymous_visitors(cast, both_run):
    for path in ("/api/v1/annotation-runs/", f"/api/v1/annotation-runs/{both_run.pk}/agreement/"):
        assert client_for(cast.trainee_a).get(path).status_code == 403
        assert APIClient().get(path).status_code == 403


def test_it_lists_runs_in_a_constant_number_of_queries(cast, golden):
    client = client_for(cast.supervisor_a)
    saved_run(run_lines("AG01"), rater="r0")
    client.get("/api/v1/annotation-runs/")
    with CaptureQueriesContext(connection) as one:
        client.get("/api/v1/annotation-runs/")
    for n in range(1, 6):
        saved_run(run_lines("AG01"), rater=f"r{n}")
    with CaptureQueriesContext(connection) as six:
        assert len(client.get("/api/v1/annotation-runs/").json()["results"]) == 6
    assert len(six) == len(one)


def test_it_scores_in_a_constant_number_of_queries(cast, golden):
    client = client_for(cast.staff)
    small = saved_run(run_lines("AG01"), rater="small")
    large = saved_run(run_lines("AG01") + run_lines("AG02"), rater="large")
    with CaptureQueriesContext(connection) as one:
        client.get(f"/api/v1/annotation-runs/{small.pk}/agreement/")
    with CaptureQueriesContext(connection) as two:
        client.get(f"/api/v1/annotation-runs/{large.pk}/agreement/")
    assert len(two) == len(one)
