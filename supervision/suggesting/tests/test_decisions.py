"""A supervisor accepts or dismisses suggestions: accepting writes exactly that label through the label
service (history row, safety event at once), dismissing is remembered for the model version; only the
trainee's own supervisor may do either."""

import io

import pytest
from django.core.management import call_command

from supervision.agreement.models import RunTurn
from supervision.exporting import label_codes_by_turn
from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
from supervision.models import LabelChange, Turn, TurnClientState, TurnTechnique
from supervision.safety.selectors import safety_events
from supervision.suggesting.selectors import open_suggestions
from supervision.suggesting.services import (
    SuggestionRejected,
    suggestion_accept,
    suggestion_dismiss,
    suggestions_refresh,
)
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def session_turns(cast, tmp_path):
    path = write_csv(tmp_path / "dec.csv", ENGLISH_HEADER, unlabelled_rows("DEC1"))
    call_command("import_transcripts", str(path), "--trainee", "trainee_a", stdout=io.StringIO())
    return list(Turn.objects.filter(session__code="DEC1").order_by("seq"))


def _force(turn, labels):
    """Pins what the model said about ``turn`` (what it says is the model's; the decisions are tested here)."""
    row = RunTurn.objects.get(turn=turn)
    axis = "techniques" if turn.speaker == "counselor" else "client_states"
    setattr(row, axis, labels)
    row.scores = dict.fromkeys(labels, 0.9)
    row.save()


def test_accepting_one_label_writes_exactly_it_through_the_label_service(cast, session_turns):
    counselor = session_turns[2]
    _force(counselor, ["empathy", "risk_assessment"])
    history = suggestion_accept(turn=counselor, accepted_by=cast.supervisor_a, labels=["risk_assessment"])
    assert label_codes_by_turn(TurnTechnique, turn_ids=[counselor.pk])[counselor.pk] == ["risk_assessment"]
    change = LabelChange.objects.get(turn=counselor)
    assert history == [change]
    assert (change.axis, change.before, change.after, change.via) == (
        "techniques",
        [],
        ["risk_assessment"],
        "suggestion",
    )
    assert change.changed_by == cast.supervisor_a
    assert open_suggestions([counselor.pk])[counselor.pk].labels == ["empathy"]


def test_accepting_a_suggested_disclosure_makes_a_safety_event_at_once(cast, session_turns):
    client_turn = session_turns[3]
    _force(client_turn, ["self_harm_disclosure"])
    assert not TurnClientState.objects.filter(turn=client_turn).exists()
    suggestion_accept(turn=client_turn, accepted_by=cast.supervisor_a, labels=["self_harm_disclosure"])
    events = list(safety_events(cast.supervisor_a))
    assert [(e.turn_id, e.label.code) for e in events] == [(client_turn.pk, "self_harm_disclosure")]


def test_accept_all_takes_every_open_suggestion_of_the_turn(cast, session_turns):
    counselor = session_turns[4]
    _force(counselor, ["empathy", "scaling"])
    suggestion_dismiss(turn=counselor, label="empathy", dismissed_by=cast.supervisor_a)
    suggestion_accept(turn=counselor, accepted_by=cast.supervisor_a)
    assert label_codes_by_turn(TurnTechnique, turn_ids=[counselor.pk])[counselor.pk] == ["scaling"]
    assert open_suggestions([counselor.pk])[counselor.pk].labels == []


def test_a_dismissal_is_remembered_and_not_offered_again_by_that_version(cast, session_turns):
    counselor = session_turns[0]
    _force(counselor, ["facilitative_question"])
    suggestion_dismiss(turn=counselor, label="facilitative_question", dismissed_by=cast.supervisor_a)
    assert open_suggestions([counselor.pk])[counselor.pk].labels == []
    with pytest.raises(SuggestionRejected):
        suggestion_accept(turn=counselor, accepted_by=cast.supervisor_a, labels=["facilitative_question"])
    # Suggested again (a re-import, suggest_labels --session): still dismissed for this model version.
    suggestions_refresh(session_ids=[counselor.session_id])
    _force(counselor, ["facilitative_question"])
    assert open_suggestions([counselor.pk])[counselor.pk].dismissed == ["facilitative_question"]
    assert open_suggestions([counselor.pk])[counselor.pk].labels == []
    assert not TurnTechnique.objects.filter(turn=counselor).exists()


def test_only_the_trainees_supervisor_decides(cast, session_turns):
    counselor = session_turns[2]
    _force(counselor, ["risk_assessment"])
    for outsider in (cast.supervisor_b, cast.trainee_a, cast.staff):
        with pytest.raises(SuggestionRejected):
            suggestion_accept(turn=counselor, accepted_by=outsider, labels=["risk_assessment"])
        with pytest.raises(SuggestionRejected):
            suggestion_dismiss(turn=counselor, label="risk_assessment", dismissed_by=outsider)
    assert not TurnTechnique.objects.filter(turn=counselor).exists()
    assert not LabelChange.objects.exists()


def test_a_label_that_was_not_suggested_cannot_be_accepted(cast, session_turns):
    counselor = session_turns[2]
    _force(counselor, ["risk_assessment"])
    with pytest.raises(SuggestionRejected):
        suggestion_accept(turn=counselor, accepted_by=cast.supervisor_a, labels=["humor"])
    assert not TurnTechnique.objects.filter(turn=counselor).exists()
