"""Sessions: list (paginated, filtered by role and ?trainee=), detail with turns, golden NDJSON, taxonomy."""

from __future__ import annotations

import json

from supervision.api.tests.conftest import import_session
from supervision.testing import golden_line
from taxonomy import catalogue


def test_it_lists_only_the_sessions_a_trainee_may_see(world, client_as):
    body = client_as("trainee_b").get("/api/v1/sessions/").json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert [s["code"] for s in body["results"]] == ["WB01"]


def test_it_lists_the_supervisors_trainees_and_everything_for_staff(world, client_as):
    assert [s["code"] for s in client_as("supervisor_a").get("/api/v1/sessions/").json()["results"]] == ["WA01"]
    assert sorted(s["code"] for s in client_as("staff").get("/api/v1/sessions/").json()["results"]) == [
        "WA01",
        "WB01",
    ]


def test_it_shapes_a_session_with_its_counts(world, client_as):
    (session,) = client_as("trainee_a").get("/api/v1/sessions/").json()["results"]
    assert session == {
        "id": world["session_a"].pk,
        "code": "WA01",
        "title": "",  # the importer leaves the title to the supervisor
        "trainee": world["trainee_a"].pk,
        "trainee_username": "trainee_a",
        "held_on": "2026-03-02",
        "source": "test_synthetic",
        "taxonomy_version": catalogue.TAXONOMY_VERSION,
        "turn_count": 6,
        "critique_count": 1,  # the unaccepted suggestion is not counted
    }


def test_it_filters_by_trainee(world, client_as):
    staff = client_as("staff")
    body = staff.get(f"/api/v1/sessions/?trainee={world['trainee_b'].pk}").json()
    assert [s["code"] for s in body["results"]] == ["WB01"]


def test_it_refuses_to_filter_by_a_trainee_the_user_may_not_see(world, client_as):
    response = client_as("trainee_a").get(f"/api/v1/sessions/?trainee={world['trainee_b'].pk}")
    assert response.status_code == 400
    assert "trainee" in response.json()


def test_it_paginates(world, client_as, settings):
    for n in range(3):
        import_session(f"WA1{n}", 2, "trainee_a")
    body = client_as("trainee_a").get("/api/v1/sessions/?page=1").json()
    assert body["count"] == 4
    page_size = settings.REST_FRAMEWORK["PAGE_SIZE"]
    assert len(body["results"]) == min(4, page_size)


def test_it_returns_the_detail_with_turns_labels_and_visible_comments(world, client_as):
    detail = client_as("trainee_a").get(f"/api/v1/sessions/{world['session_a'].pk}/").json()
    assert [t["seq"] for t in detail["turns"]] == list(range(6))
    first = detail["turns"][0]
    expected = golden_line("WA01", 0)
    for key in ("utterance_id", "speaker", "stage", "seq", "text", "techniques", "client_states", "nonverbal"):
        assert first[key] == expected[key], key
    assert detail["turns"][1]["client_states"] == ["affect_contact"]
    assert [c["id"] for c in first["comments"]] == [world["comment_a"].pk]  # no suggestion for the trainee
    assert first["comments"][0]["intent_deviation"]["severity"] == "minor"


def test_it_gives_every_turn_every_golden_line_field_source_included(world, client_as):
    """CONTRACT §5: the detail's turns carry the §2 fields (plus ``id`` and ``comments``)."""
    detail = client_as("trainee_a").get(f"/api/v1/sessions/{world['session_a'].pk}/").json()
    golden = [
        json.loads(line)
        for line in client_as("trainee_a")
        .get(f"/api/v1/sessions/{world['session_a'].pk}/golden/")
        .content.decode()
        .splitlines()
    ]
    assert len(golden) == len(detail["turns"]) == 6
    for turn, line in zip(detail["turns"], golden, strict=True):
        missing = set(line) - {"trainee", "held_on"} - set(turn)  # those two are the session's, listed on it
        assert not missing, missing
        assert turn["source"] == "test_synthetic" == line["source"]
        assert turn["session"] == "WA01"
        for key in set(line) - {"comments", "trainee", "held_on"}:
            assert turn[key] == line[key], key


def test_it_shows_the_suggestion_to_the_supervisor(world, client_as):
    detail = client_as("supervisor_a").get(f"/api/v1/sessions/{world['session_a'].pk}/").json()
    assert [c["is_suggestion"] for c in detail["turns"][0]["comments"]] == [False, True]


def test_it_exports_the_golden_lines_as_ndjson(world, client_as):
    response = client_as("trainee_a").get(f"/api/v1/sessions/{world['session_a'].pk}/golden/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.content.decode().splitlines()]
    assert [line["utterance_id"] for line in lines] == [golden_line("WA01", n)["utterance_id"] for n in range(6)]
    assert lines[0]["trainee"] == "trainee_a"
    assert [c["text"] for c in lines[0]["comments"]] == [world["comment_a"].text]


def test_it_answers_404_for_another_trainees_golden_lines_even_as_ndjson(world, client_as):
    response = client_as("trainee_b").get(
        f"/api/v1/sessions/{world['session_a'].pk}/golden/", HTTP_ACCEPT="application/x-ndjson"
    )
    assert response.status_code == 404
    assert b"WA01" not in response.content


def test_it_serves_the_taxonomy_in_document_order(world, client_as):
    body = client_as("trainee_a").get("/api/v1/taxonomy/").json()
    assert body["version"] == catalogue.TAXONOMY_VERSION
    assert [t["code"] for t in body["techniques"]] == list(catalogue.TECHNIQUE_CODES)
    assert [s["code"] for s in body["client_states"]] == list(catalogue.CLIENT_STATE_CODES)
    assert [s["code"] for s in body["stages"]] == list(catalogue.STAGE_CODES)
    assert [a["code"] for a in body["dialog_acts"]] == list(catalogue.DIALOG_ACT_CODES)
    assert set(body["techniques"][0]) == {"code", "ko", "category", "definition", "since"}
    assert set(body["client_states"][0]) == {"code", "ko", "definition", "safety_critical", "since"}
    assert {s["code"] for s in body["client_states"] if s["safety_critical"]} == set(catalogue.SAFETY_CRITICAL_STATES)


def test_it_filters_sessions_by_trainee_username_and_names_the_trainee(world, client_as):
    body = client_as("supervisor_a").get("/api/v1/sessions/", {"trainee": "trainee_a"}).json()
    assert [(r["code"], r["trainee_username"]) for r in body["results"]] == [("WA01", "trainee_a")]
    refused = client_as("supervisor_a").get("/api/v1/sessions/", {"trainee": "trainee_b"})
    assert refused.status_code == 400 and "trainee_b" in refused.json()["trainee"][0]
