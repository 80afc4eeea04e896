"""CONTRACT §5 tag endpoints: role × URL matrix, §6 shape, writes, errors, constant query counts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from supervision.people.services import portal_user_create_or_update
from supervision.roles import Role
from supervision.tags import catalogue
from supervision.tags.models import Status, TagEvidence, TraineeTag
from supervision.tags.services import tag_contradiction_record, tag_evidence_add
from supervision.tags.tests.factories import make_sessions
from supervision.testing import log_in

SHAPE = {"tag", "status", "source", "evidence", "contradictions", "verified_at", "last_updated"}


def url(trainee, suffix=""):
    return f"/api/v1/trainees/{trainee.pk}/tags/{suffix}"


@pytest.fixture
def tags(cast):
    """trainee_a: one hypothesis (two sessions), one observation; trainee_b: one hypothesis."""
    a = make_sessions(cast.trainee_a, 2)
    b = make_sessions(cast.trainee_b, 2)
    for n, session in enumerate(a):
        tag_evidence_add(
            trainee_id=cast.trainee_a.pk, tag="overuses_relational", event=f"과다 {n}", session_id=session.pk
        )
    tag_evidence_add(trainee_id=cast.trainee_a.pk, tag="rq_below_fair", event="관찰만 된 비밀 근거", session_id=a[0].pk)
    for n, session in enumerate(b):
        tag_evidence_add(
            trainee_id=cast.trainee_b.pk, tag="underuses_exploratory", event=f"B {n}", session_id=session.pk
        )
    return a


@pytest.mark.parametrize(
    ("who", "whose", "expected"),
    [
        ("trainee_a", "trainee_a", 200),
        ("trainee_a", "trainee_b", 404),
        ("supervisor_a", "trainee_a", 200),
        ("supervisor_a", "trainee_b", 404),
        ("supervisor_b", "trainee_a", 404),
        ("staff", "trainee_a", 200),
        ("staff", "trainee_b", 200),
    ],
)
@pytest.mark.parametrize("suffix", ["", "conflicted/"])
def test_it_shows_tags_only_to_those_who_may_see_the_trainee(client, cast, tags, who, whose, expected, suffix):
    response = log_in(client, getattr(cast, who)).get(url(getattr(cast, whose), suffix))
    assert response.status_code == expected


def test_it_refuses_anonymous_callers(client, cast, tags):
    assert client.get(url(cast.trainee_a)).status_code in (401, 403)
    assert client.post(url(cast.trainee_a), {}).status_code in (401, 403)


def test_it_answers_404_for_a_user_who_is_not_a_trainee(client, cast):
    assert log_in(client, cast.staff).get(f"/api/v1/trainees/{cast.supervisor_a.pk}/tags/").status_code == 404
    assert log_in(client, cast.staff).get("/api/v1/trainees/999999/tags/").status_code == 404


def test_it_returns_the_contract_shape_paginated(client, cast, tags):
    body = log_in(client, cast.trainee_a).get(url(cast.trainee_a)).json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert body["count"] == 1
    tag = body["results"][0]
    assert set(tag) == SHAPE
    assert tag["tag"] == "overuses_relational" and tag["status"] == "hypothesis" and tag["source"] == "observed"
    assert [set(e) for e in tag["evidence"]] == [{"session", "event", "at"}] * 2
    assert tag["evidence"][0]["session"] == tags[0].pk
    assert tag["verified_at"] is None and tag["last_updated"]


def test_it_never_lists_observations_to_the_trainee(client, cast, tags):
    trainee = log_in(client, cast.trainee_a)
    for query in ("", "?min_status=observation", "?min_status=hypothesis"):
        response = trainee.get(url(cast.trainee_a) + query)
        assert [t["tag"] for t in response.json()["results"]] == ["overuses_relational"]
        assert "관찰만 된 비밀 근거" not in response.content.decode()


def test_it_lists_observations_to_the_supervisor_and_staff_on_request(client, cast, tags):
    for user in (cast.supervisor_a, cast.staff):
        c = log_in(client, user)
        assert [t["tag"] for t in c.get(url(cast.trainee_a)).json()["results"]] == ["overuses_relational"]
        listed = [t["tag"] for t in c.get(url(cast.trainee_a) + "?min_status=observation").json()["results"]]
        assert listed == ["overuses_relational", "rq_below_fair"]
        assert c.get(url(cast.trainee_a) + "?min_status=verified").json()["results"] == []


def test_it_rejects_an_unknown_min_status(client, cast, tags):
    response = log_in(client, cast.supervisor_a).get(url(cast.trainee_a) + "?min_status=certain")
    assert response.status_code == 400 and "min_status" in response.json()


def test_it_lets_the_supervisor_add_evidence(client, cast, tags):
    c = log_in(client, cast.supervisor_a)
    body = {"tag": "rq_below_fair", "source": "observed", "event": "슈퍼비전에서 질문이 많았음", "session": tags[1].pk}
    response = c.post(url(cast.trainee_a), body, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["status"] == "hypothesis" and set(response.json()) == SHAPE
    again = c.post(url(cast.trainee_a), body, content_type="application/json")
    assert again.status_code == 200
    piece = TagEvidence.objects.get(event=body["event"])
    assert piece.recorded_by == cast.supervisor_a and piece.origin == "supervisor"


def test_it_lets_the_trainee_declare_but_not_add_observed_evidence(client, cast, tags):
    c = log_in(client, cast.trainee_a)
    declared = {"tag": "prioritizes_relational", "source": "declared", "event": "관계 형성에 집중하겠다"}
    assert c.post(url(cast.trainee_a), declared, content_type="application/json").status_code == 201
    observed = {"tag": "overuses_relational", "source": "observed", "event": "스스로 관찰"}
    assert c.post(url(cast.trainee_a), observed, content_type="application/json").status_code == 403
    assert c.post(url(cast.trainee_b), declared, content_type="application/json").status_code == 404
    assert TagEvidence.objects.filter(event="스스로 관찰").count() == 0


@pytest.mark.parametrize("who", ["staff", "supervisor_b", "trainee_b"])
def test_it_refuses_evidence_from_others(client, cast, tags, who):
    body = {"tag": "rq_below_fair", "source": "observed", "event": "남의 근거"}
    response = log_in(client, getattr(cast, who)).post(url(cast.trainee_a), body, content_type="application/json")
    assert response.status_code == (403 if who == "staff" else 404)
    assert not TagEvidence.objects.filter(event="남의 근거").exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tag": "likes_cats", "source": "observed", "event": "x"}, "tag"),
        ({"tag": "rq_below_fair", "source": "declared", "event": "x"}, "source"),
        ({"tag": "rq_below_fair", "source": "guessed", "event": "x"}, "source"),
        ({"tag": "rq_below_fair", "source": "observed"}, "event"),
        ({"tag": "rq_below_fair", "source": "observed", "event": "   "}, "event"),
        ({"tag": "rq_below_fair", "source": "observed", "event": "x" * 1001}, "event"),
        ({"tag": "rq_below_fair", "source": "observed", "event": "x", "session": "abc"}, "session"),
        ({"tag": "rq_below_fair", "source": "observed", "event": "x", "session": 10**30}, "session"),
        ({"tag": "rq_below_fair", "source": "observed", "event": "x", "session": -1}, "session"),
        ({"tag": ["a"], "source": "observed", "event": "x"}, "tag"),
        ({"tag": "rq_below_fair", "source": "observed", "event": "메일 fake@example.invalid 참고"}, "event"),
    ],
)
def test_it_rejects_bad_evidence_naming_the_field(client, cast, tags, body, field):
    before = TagEvidence.objects.count()
    response = log_in(client, cast.supervisor_a).post(url(cast.trainee_a), body, content_type="application/json")
    assert response.status_code == 400
    assert field in response.json()
    assert TagEvidence.objects.count() == before


def test_it_rejects_a_session_of_another_trainee_and_a_broken_body(client, cast, tags):
    other = make_sessions(cast.trainee_b, 1, prefix="OTHER")[0]
    c = log_in(client, cast.supervisor_a)
    body = {"tag": "rq_below_fair", "source": "observed", "event": "x", "session": other.pk}
    response = c.post(url(cast.trainee_a), body, content_type="application/json")
    assert response.status_code == 400 and "session" in response.json()
    assert c.post(url(cast.trainee_a), "{not json", content_type="application/json").status_code == 400
    assert c.post(url(cast.trainee_a), "[1, 2]", content_type="application/json").status_code == 400


def test_it_lists_declared_tags_with_contradictions_as_conflicted(client, cast, tags):
    a = cast.trainee_a
    for n, session in enumerate(tags):
        tag_evidence_add(trainee_id=a.pk, tag="prioritizes_exploratory", event=f"선언 {n}", session_id=session.pk)
        tag_evidence_add(trainee_id=a.pk, tag="prioritizes_relational", event=f"선언 {n}", session_id=session.pk)
    tag_evidence_add(trainee_id=a.pk, tag="prioritizes_intervention", event="한 번만 선언")
    for name in ("prioritizes_exploratory", "prioritizes_intervention", "overuses_relational"):
        tag_contradiction_record(trainee_id=a.pk, tag=name, event="다른 모습", severity="low")
    supervisor = log_in(client, cast.supervisor_a).get(url(a, "conflicted/")).json()["results"]
    assert [t["tag"] for t in supervisor] == ["prioritizes_exploratory", "prioritizes_intervention"]
    assert supervisor[0]["contradictions"][0]["severity"] == "low"
    assert set(supervisor[0]["contradictions"][0]) == {"session", "event", "severity", "at"}
    trainee = log_in(client, a).get(url(a, "conflicted/")).json()["results"]
    # the trainee's own declaration is never hidden from them, even while it is still an observation
    assert [t["tag"] for t in trainee] == ["prioritizes_exploratory", "prioritizes_intervention"]
    assert trainee == supervisor


def test_it_shows_a_trainee_their_declared_focus_still_at_observation_once_contradicted(client, cast, tags):
    a = cast.trainee_a
    tag_evidence_add(trainee_id=a.pk, tag="prioritizes_relational", source="declared", event="관계에 집중")
    assert TraineeTag.objects.get(trainee=a, tag="prioritizes_relational").status == Status.OBSERVATION
    assert log_in(client, a).get(url(a, "conflicted/")).json()["results"] == []
    tag_contradiction_record(trainee_id=a.pk, tag="prioritizes_relational", event="관계 기법 부족", severity="low")
    trainee = log_in(client, a).get(url(a, "conflicted/")).json()["results"]
    assert [(t["tag"], t["status"]) for t in trainee] == [("prioritizes_relational", "observation")]
    # the supervisor sees the same list; another trainee still gets 404
    assert log_in(client, cast.supervisor_a).get(url(a, "conflicted/")).json()["results"] == trainee
    assert log_in(client, cast.trainee_b).get(url(a, "conflicted/")).status_code == 404


def test_it_lets_the_supervisor_record_a_contradiction(client, cast, tags):
    c = log_in(client, cast.supervisor_a)
    body = {"event": "균형 잡힌 회기", "severity": "high", "session": tags[1].pk}
    response = c.post(url(cast.trainee_a, "overuses_relational/contradictions/"), body, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["status"] == "observation"
    assert response.json()["contradictions"] == [
        {"session": tags[1].pk, "event": "균형 잡힌 회기", "severity": "high", "at": response.json()["last_updated"]}
    ]


@pytest.mark.parametrize(
    ("who", "tag", "body", "expected"),
    [
        ("trainee_a", "overuses_relational", {"event": "x", "severity": "low"}, 403),
        ("staff", "overuses_relational", {"event": "x", "severity": "low"}, 403),
        ("supervisor_b", "overuses_relational", {"event": "x", "severity": "low"}, 404),
        ("supervisor_a", "likes_cats", {"event": "x", "severity": "low"}, 400),
        ("supervisor_a", "underuses_structuring", {"event": "x", "severity": "low"}, 404),
        ("supervisor_a", "overuses_relational", {"event": "x", "severity": "fatal"}, 400),
        ("supervisor_a", "overuses_relational", {"severity": "low"}, 400),
        ("supervisor_a", "overuses_relational", {"event": "x", "severity": "low", "session": 10**30}, 400),
    ],
)
def test_it_refuses_contradictions_it_should_not_record(client, cast, tags, who, tag, body, expected):
    path = url(cast.trainee_a, f"{tag}/contradictions/")
    response = log_in(client, getattr(cast, who)).post(path, body, content_type="application/json")
    assert response.status_code == expected
    assert not TraineeTag.objects.filter(contradictions__isnull=False).exists()


def _fill(trainee, names, pieces):
    sessions = make_sessions(trainee, pieces, prefix=f"Q{trainee.pk}_{len(names)}")
    for name in names:
        for n, session in enumerate(sessions):
            tag_evidence_add(trainee_id=trainee.pk, tag=name, event=f"근거 {n}", session_id=session.pk)
        tag_contradiction_record(trainee_id=trainee.pk, tag=name, event="반증", severity="low")


def _count(client, path):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200
    return len(queries), response.json()["count"]


def test_it_lists_tags_in_a_constant_number_of_queries(client, cast):
    small = portal_user_create_or_update(
        username="trainee_small", role=Role.TRAINEE, supervisor_username="supervisor_a"
    )
    large = portal_user_create_or_update(
        username="trainee_large", role=Role.TRAINEE, supervisor_username="supervisor_a"
    )
    _fill(small, catalogue.TAG_NAMES[:3], 2)
    _fill(large, catalogue.TAG_NAMES, 6)  # every tag of the catalogue, six pieces of evidence each
    c = log_in(client, cast.supervisor_a)
    few = _count(c, f"/api/v1/trainees/{small.pk}/tags/?min_status=observation")
    many = _count(c, f"/api/v1/trainees/{large.pk}/tags/?min_status=observation")
    assert few[1] == 3 and many[1] == len(catalogue.TAG_NAMES)
    assert few[0] == many[0]
    # conflicted: the same reads without the status rule (the large trainee's declared tags are all listed)
    queries, listed = _count(c, f"/api/v1/trainees/{large.pk}/tags/conflicted/")
    assert listed > 0 and queries <= few[0]
    assert TraineeTag.objects.filter(trainee=large, status=Status.OBSERVATION).exists() is False
