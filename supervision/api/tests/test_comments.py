"""Comments: the §5 shape, shared validation rules, author-only changes, suggestions hidden from trainees,
and the audit trail in the API detail and the admin."""

from __future__ import annotations

import pytest

from supervision.models import SupervisorComment

DEVIATION = {"dimension": "시기", "expected": "reflection", "actual": "interpretation", "severity": "major"}


def post_comment(client, turn, **fields):
    body = {"turn": turn.pk, "kind": "critique", "text": "해석이 이릅니다.", **fields}
    return client.post("/api/v1/comments/", body, format="json")


def test_it_creates_a_critique_written_by_the_supervisor(world, client_as):
    response = post_comment(client_as("supervisor_a"), world["turn_a"], intent_deviation=DEVIATION)
    assert response.status_code == 201, response.content
    body = response.json()
    assert {k: body[k] for k in ("turn", "kind", "text", "intent_deviation")} == {
        "turn": world["turn_a"].pk,
        "kind": "critique",
        "text": "해석이 이릅니다.",
        "intent_deviation": DEVIATION,
    }
    comment = SupervisorComment.objects.get(pk=body["id"])
    assert comment.written_by == world["supervisor_a"]
    assert comment.author == "supervisor"
    assert comment.history.get().history_user == world["supervisor_a"]


@pytest.mark.parametrize(
    ("deviation", "field"),
    [
        ({"severity": "fatal"}, "severity"),
        ({"mood": "x"}, "mood"),
        ({"expected": 3}, "expected"),
        ({"dimension": "가" * 201}, "dimension"),
        ("major", "intent_deviation"),
        ({"actual": "a\x00b"}, "intent_deviation"),
    ],
)
def test_it_rejects_a_bad_intent_deviation_naming_the_field(world, client_as, deviation, field):
    response = post_comment(client_as("supervisor_a"), world["turn_a"], intent_deviation=deviation)
    assert response.status_code == 400, response.content
    errors = response.json()["intent_deviation"]
    assert field in errors if isinstance(errors, dict) else field == "intent_deviation"
    assert not SupervisorComment.objects.filter(text="해석이 이릅니다.").exists()


def test_it_rejects_a_deviation_on_a_rationale_as_the_admin_form_does(world, client_as):
    response = post_comment(client_as("supervisor_a"), world["turn_a"], kind="rationale", intent_deviation=DEVIATION)
    assert response.status_code == 400
    assert "critique" in response.json()["intent_deviation"][0]


def test_the_text_length_limit_is_the_setting_the_importer_and_the_admin_use(world, client_as, settings):
    settings.IMPORT_MAX_CELL_CHARS = 20
    response = post_comment(client_as("supervisor_a"), world["turn_a"], text="가" * 21)
    assert response.status_code == 400
    assert response.json()["text"] == ["내용은 20자 이내여야 합니다."]
    assert post_comment(client_as("supervisor_a"), world["turn_a"], text="가" * 20).status_code == 201


def test_it_rejects_personal_identifiers_in_the_text(world, client_as):
    response = post_comment(client_as("supervisor_a"), world["turn_a"], text="연락처 010-1234-5678")
    assert response.status_code == 400
    assert "전화번호" in response.json()["text"][0]


def test_it_lets_only_the_author_change_a_comment(world, client_as, cast):
    from supervision.people.services import portal_user_create_or_update
    from supervision.roles import Role

    # A second supervisor of trainee_a's sessions would need reassignment; a superuser sees all but is not the author.
    root = portal_user_create_or_update(username="root_sup", role=Role.SUPERVISOR)
    root.is_superuser = True
    root.save()
    client = client_as("anonymous")
    client.force_login(root)
    url = f"/api/v1/comments/{world['comment_a'].pk}/"
    assert client.patch(url, {"text": "가로채기"}, format="json").status_code == 403
    assert client.delete(url).status_code == 403
    assert SupervisorComment.objects.get(pk=world["comment_a"].pk).text != "가로채기"


def test_it_never_shows_suggestions_to_the_trainee(world, client_as):
    suggestion = SupervisorComment.objects.get(is_suggestion=True, turn=world["turn_a"])
    trainee = client_as("trainee_a")
    assert suggestion.pk not in [c["id"] for c in trainee.get("/api/v1/comments/").json()["results"]]
    assert trainee.get(f"/api/v1/comments/{suggestion.pk}/").status_code == 404
    assert client_as("supervisor_a").get(f"/api/v1/comments/{suggestion.pk}/").status_code == 200


def test_it_keeps_every_change_in_the_comment_detail(world, client_as):
    supervisor = client_as("supervisor_a")
    url = f"/api/v1/comments/{world['comment_a'].pk}/"
    response = supervisor.patch(url, {"text": "고친 논평", "intent_deviation": {"severity": "major"}}, format="json")
    assert response.status_code == 200, response.content
    history = client_as("trainee_a").get(url).json()["history"]
    assert [h["action"] for h in history] == ["created", "changed"]
    assert all(h["by"]["username"] == "supervisor_a" for h in history)
    change = history[1]["changes"]
    assert change["text"] == {"before": "탐색 단계에서 해석이 이릅니다.", "after": "고친 논평"}
    assert change["intent_deviation"]["before"]["severity"] == "minor"
    assert change["intent_deviation"]["after"] == {"severity": "major"}
    assert "kind" not in change
    assert history[0]["changes"]["kind"] == {"before": None, "after": "critique"}


def test_it_records_a_deletion_with_who_deleted(world, client_as):
    comment_id = world["comment_a"].pk
    assert client_as("supervisor_a").delete(f"/api/v1/comments/{comment_id}/").status_code == 204
    last = SupervisorComment.history.filter(id=comment_id).latest("history_date")
    assert (last.history_type, last.history_user) == ("-", world["supervisor_a"])


def test_it_shows_the_history_in_the_admin(world, client_as):
    client_as("supervisor_a").patch(f"/api/v1/comments/{world['comment_a'].pk}/", {"text": "고친 논평"}, format="json")
    page = client_as("supervisor_a").get(f"/admin/supervision/supervisorcomment/{world['comment_a'].pk}/history/")
    assert page.status_code == 200
    assert page.content.decode().count("supervisor_a") >= 2
    # Another supervisor cannot read it through the admin either.
    other = client_as("supervisor_b").get(f"/admin/supervision/supervisorcomment/{world['comment_a'].pk}/history/")
    assert other.status_code == 404


def test_it_hides_a_historical_version_from_another_supervisor_in_the_admin(world, client_as):
    comment = world["comment_a"]
    version = comment.history.earliest("history_date").history_id
    url = f"/admin/supervision/supervisorcomment/{comment.pk}/history/{version}/"
    assert client_as("supervisor_a").get(url).status_code == 200
    assert client_as("supervisor_b").get(url).status_code == 404
    assert client_as("supervisor_b").get("/admin/supervision/supervisorcomment/x/history/").status_code == 404
    # A NUL in the path is refused before any view runs.
    assert client_as("supervisor_b").get("/admin/supervision/supervisorcomment/x%00/history/").status_code == 400
