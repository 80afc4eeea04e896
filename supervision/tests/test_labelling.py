"""The label service: every golden-label edit (the admin's label forms, adjudication) goes through
``turn_labels_update``, which keeps the shared rules and writes one history row per changed axis."""

from __future__ import annotations

import pytest

from supervision.feedback.tests.factories import make_session
from supervision.labelling import LabelRejected, turn_label_codes, turn_labels_update
from supervision.models import LabelChange, TurnTechnique

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(cast):
    return make_session("LBL_A1", 6, trainee="trainee_a")


def test_it_changes_labels_and_records_each_changed_axis(cast, session):
    turn = session.turns.get(seq=2)
    before = turn_label_codes(turn)
    rows = turn_labels_update(
        turn=turn, changed_by=cast.supervisor_a, via="admin", techniques=["empathy"], stage="개입", dialog_act="inform"
    )
    after = turn_label_codes(turn.__class__.objects.get(pk=turn.pk))
    assert after["techniques"] == ["empathy"] and after["stage"] == "개입" and after["dialog_act"] == "inform"
    assert {(r.axis, tuple(r.before) if isinstance(r.before, list) else r.before) for r in rows} >= {
        ("techniques", tuple(before["techniques"])),
        ("stage", before["stage"]),
    }
    assert LabelChange.objects.filter(turn=turn, changed_by=cast.supervisor_a, via="admin").count() == len(rows)
    # Nothing changed, nothing recorded.
    assert turn_labels_update(turn=turn, changed_by=cast.supervisor_a, via="admin", techniques=["empathy"]) == []


def test_it_refuses_labels_against_the_rules_and_writes_nothing(cast, session):
    client_turn = session.turns.get(seq=3)
    with pytest.raises(LabelRejected) as rejected:
        turn_labels_update(turn=client_turn, changed_by=cast.supervisor_a, via="admin", techniques=["empathy"])
    assert "기법은 상담자 발화에만" in rejected.value.problems["techniques"][0]
    with pytest.raises(LabelRejected):
        turn_labels_update(turn=client_turn, changed_by=cast.supervisor_a, via="admin", client_states=["made_up"])
    assert not LabelChange.objects.exists()


def test_it_applies_the_silence_correction(cast, session):
    turn = session.turns.get(seq=2)  # a turn with words
    turn_labels_update(turn=turn, changed_by=cast.supervisor_a, via="admin", dialog_act="silence")
    assert turn_label_codes(turn.__class__.objects.get(pk=turn.pk))["dialog_act"] == "null"


def test_the_admin_label_forms_go_through_the_service(client, cast, session):
    turn = session.turns.get(seq=2)
    client.force_login(cast.supervisor_a)
    links = list(TurnTechnique.objects.filter(turn=turn).order_by("id"))
    data = {
        "stage": "정리",
        "text": turn.text,
        "nonverbal": "[]",
        "dialog_act": turn.dialog_act or "",
        "technique_links-TOTAL_FORMS": str(len(links)),
        "technique_links-INITIAL_FORMS": str(len(links)),
        "technique_links-MIN_NUM_FORMS": "0",
        "technique_links-MAX_NUM_FORMS": "1000",
        "comments-TOTAL_FORMS": "0",
        "comments-INITIAL_FORMS": "0",
        "comments-MIN_NUM_FORMS": "0",
        "comments-MAX_NUM_FORMS": "1000",
    }
    for i, link in enumerate(links):
        data |= {f"technique_links-{i}-id": str(link.pk), f"technique_links-{i}-turn": str(turn.pk)}
        data[f"technique_links-{i}-label"] = str(link.label_id)
        if i == 0:
            data[f"technique_links-{i}-DELETE"] = "on"
    response = client.post(f"/admin/supervision/turn/{turn.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    changes = {c.axis: c for c in LabelChange.objects.filter(turn=turn)}
    assert set(changes) == {"techniques", "stage"}
    assert changes["stage"].after == "정리" and changes["stage"].changed_by == cast.supervisor_a
    assert len(changes["techniques"].after) == len(links) - 1
    assert turn_label_codes(turn.__class__.objects.get(pk=turn.pk))["stage"] == "정리"


def test_it_shows_the_history_only_for_the_supervisors_own_trainees(client, cast, session):
    other = make_session("LBL_B1", 4, trainee="trainee_b")
    turn_labels_update(turn=session.turns.get(seq=2), changed_by=cast.supervisor_a, via="admin", stage="개입")
    turn_labels_update(turn=other.turns.get(seq=0), changed_by=cast.supervisor_b, via="admin", stage="개입")
    client.force_login(cast.supervisor_a)
    page = client.get("/admin/supervision/labelchange/").content.decode()
    assert "LBL_A1-C-002" in page and "LBL_B1" not in page
