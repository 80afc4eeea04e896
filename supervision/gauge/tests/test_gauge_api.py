"""GET /api/v1/gauges/: the §6 shape, role filtering, newest first, bad input, constant queries."""

import datetime

import pytest
from rest_framework.test import APIClient

from supervision.gauge.services import gauge_compute
from supervision.gauge.tests.conftest import DAY
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db
URL = "/api/v1/gauges/"
SHAPE = {
    "trainee",
    "trainee_username",
    "date",
    "session",
    "turns",
    "counselor_turns",
    "categories",
    "techniques",
    "rq_ratio",
    "rq_band",
    "critiques",
    "intent_deviation_rate",
    "dialog_acts",
    "client_state_transitions",
    "safety",
}


def api(username=None):
    client = APIClient()
    if username:
        assert client.login(username=username, password=PASSWORD)
    return client


@pytest.fixture
def computed(fixture_sessions):
    gauge_compute(day=DAY - datetime.timedelta(days=1))
    gauge_compute(day=DAY)
    return fixture_sessions


def test_it_returns_exactly_the_contract_shape(computed):
    body = api("trainee_a").get(URL, {"trainee": computed.trainee_a.id}).json()
    wide = body["results"][0]
    assert set(wide) == SHAPE
    assert (wide["trainee"], wide["date"], wide["session"]) == (computed.trainee_a.id, "2026-11-30", None)
    assert list(wide["categories"]) == ["RELATIONAL", "EXPLORATORY", "INTERVENTION", "STABILIZING", "STRUCTURING"]
    assert wide["categories"]["RELATIONAL"] == {
        "count": 7,
        "share": round(7 / 13, 4),
        "band": [0.25, 0.45],
        "status": "over",
    }
    assert set(wide["categories"]["EXPLORATORY"]) == {"count", "share", "band", "status"}
    assert len(wide["techniques"]) == 30
    assert (wide["rq_ratio"], wide["rq_band"]) == (1.5, "fair")
    assert list(wide["critiques"]) == ["minor", "moderate", "major"]
    assert wide["dialog_acts"] == {"silent_close_events": 2, "closing_acknowledged": 1, "closed_on_resuming_client": 1}
    assert wide["client_state_transitions"]["involuntary>involuntary"] == 1
    assert wide["intent_deviation_rate"] == 0.2
    assert set(wide["safety"]) == {"events", "answered", "median_latency"}


def test_it_lists_newest_first_trainee_wide_before_sessions(computed):
    results = api("supervisor_a").get(URL, {"trainee": computed.trainee_a.id}).json()["results"]
    assert [(r["date"], r["session"] is None) for r in results] == [
        ("2026-11-30", True),
        ("2026-11-30", False),
        ("2026-11-30", False),
        ("2026-11-29", True),  # S1 (held on the 30th) is not in the window ending the 29th
        ("2026-11-29", False),
    ]


def test_a_trainee_sees_only_their_own(computed):
    # Another trainee is not among the choices: a 400, as for a made-up id (the sessions list does the same).
    assert api("trainee_a").get(URL, {"trainee": computed.trainee_b.id}).status_code == 400
    assert {r["trainee"] for r in api("trainee_a").get(URL).json()["results"]} == {computed.trainee_a.id}


def test_a_supervisor_sees_only_assigned_trainees(computed):
    assert {r["trainee"] for r in api("supervisor_b").get(URL).json()["results"]} == {computed.trainee_b.id}


def test_staff_see_everyone(computed):
    # the 30th: 2 trainee-wide + S1, S2, S4; the 29th: trainee_a wide + S2
    assert api("staff").get(URL).json()["count"] == 7


def test_it_refuses_anonymous_users():
    assert api().get(URL).status_code in (401, 403)


@pytest.mark.parametrize("value", ["abc", "1.5", "-3", "99999999999999999999"])
def test_it_rejects_a_bad_trainee_id_in_korean(computed, value):
    response = api("staff").get(URL, {"trainee": value})
    assert response.status_code == 400
    assert "수련생" in response.json()["trainee"][0]


def test_it_runs_the_same_queries_however_many_snapshots(computed, django_assert_num_queries):
    client = api("supervisor_a")
    # session, user, roles (groups), count, page
    with django_assert_num_queries(5):
        assert len(client.get(URL).json()["results"]) == 5
    for back in range(2, 6):
        gauge_compute(day=DAY - datetime.timedelta(days=back))
    with django_assert_num_queries(5):
        assert len(client.get(URL).json()["results"]) == 9  # S2 (held the 27th) adds 2 on the 28th and the 27th


def test_it_filters_by_username_as_well_as_by_id(computed):
    by_name = api("supervisor_a").get(URL, {"trainee": "trainee_a"}).json()
    by_id = api("supervisor_a").get(URL, {"trainee": computed.trainee_a.id}).json()
    assert by_name["count"] == by_id["count"] > 0
    assert {r["trainee_username"] for r in by_name["results"]} == {"trainee_a"}
