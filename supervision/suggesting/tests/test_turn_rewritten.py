"""A turn's words edited in the admin were suggested from the old words, and so were the turns after it that
read it as a turn before theirs (``turns_before``): once the edit commits, those turns are suggested again —
the rest of the session keeps its rows — and the audit follows. Saving a turn without changing its words, cues
or stage suggests nothing again."""

import io

import pytest
from django.core.management import call_command

from supervision.agreement.models import RunTurn
from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
from supervision.models import Session
from supervision.suggesting.engine.features import TurnInput, session_inputs
from supervision.suggesting.loading import current_model
from supervision.suggesting.selectors import current_run
from supervision.suggesting.tests.test_import_suggestions import TEXTS, unlabelled_rows
from supervision.tests.test_admin_writes import post_turn

pytestmark = pytest.mark.django_db
RISK_QUESTION = "혹시 요즘 죽고 싶다는 생각까지 드세요?"


@pytest.fixture
def session(cast, tmp_path):
    # twice the import tests' unlabelled turns: longer than the edited turn and the model's reach after it
    path = write_csv(tmp_path / "RWT1.csv", ENGLISH_HEADER, unlabelled_rows("RWT1", 2 * len(TEXTS)))
    call_command("import_transcripts", str(path), "--trainee", "trainee_a", stdout=io.StringIO())
    return Session.objects.get(code="RWT1")


def _stored(turn):
    row = RunTurn.objects.get(run=current_run(), turn=turn)
    return row.techniques if turn.speaker == "counselor" else row.client_states


def _read(turn) -> TurnInput:
    """The turn as the model reads it now: with the stored turns before it."""
    turns = list(turn.session.turns.order_by("seq"))
    read = session_inputs(((t.text, t.stage_id, t.nonverbal or ()) for t in turns), current_model().turns_before)
    return read[[t.pk for t in turns].index(turn.pk)]


def _model_on(turn):
    [(labels, _scores)] = current_model().predict([_read(turn)], [turn.speaker], runners_up=0)
    return labels


def test_a_supervisors_edit_of_a_turns_words_has_it_and_the_next_turn_suggested_again(
    client, cast, session, django_capture_on_commit_callbacks
):
    turns = list(session.turns.order_by("seq"))
    question = next(t for t in turns[:-1] if t.speaker == "counselor")
    answer = turns[turns.index(question) + 1]
    assert "risk_assessment" not in _stored(question)
    rows_before = dict(RunTurn.objects.filter(run=current_run(), turn__session=session).values_list("turn_id", "pk"))
    client.force_login(cast.supervisor_a)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_turn(client, question, text=RISK_QUESTION)
    assert response.status_code == 302, response.content.decode()[:2000]
    # the words were saved, not only labels: the message says so
    assert f"{question.utterance_id} 발화를 저장했습니다." in client.get(response.url).content.decode()
    question.refresh_from_db()
    assert question.text == RISK_QUESTION
    assert _stored(question) == _model_on(question)
    assert "risk_assessment" in _stored(question)
    assert _read(answer).previous == RISK_QUESTION
    assert _stored(answer) == _model_on(answer)  # read with the new question before it
    assert RunTurn.objects.filter(run=current_run(), turn__session=session).count() == len(turns)
    # the edited turn and the turns_before turns after it were written again, each as the model reads it now;
    # the others keep their rows
    rows_after = dict(RunTurn.objects.filter(run=current_run(), turn__session=session).values_list("turn_id", "pk"))
    reach = range(question.seq, question.seq + current_model().turns_before + 1)
    assert any(t.seq not in reach for t in turns)
    for turn in turns:
        assert (rows_after[turn.pk] != rows_before[turn.pk]) == (turn.seq in reach), turn.seq
        assert _stored(turn) == _model_on(turn)


def test_saving_a_turn_unchanged_suggests_nothing_again(client, cast, session, django_capture_on_commit_callbacks):
    turn = session.turns.order_by("seq").first()
    before = RunTurn.objects.get(run=current_run(), turn=turn).pk
    client.force_login(cast.supervisor_a)
    with django_capture_on_commit_callbacks(execute=True):
        assert post_turn(client, turn).status_code == 302
    assert RunTurn.objects.get(run=current_run(), turn=turn).pk == before  # the row was not written again
