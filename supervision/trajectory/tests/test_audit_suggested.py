"""CONTRACT §9 for stored sessions: a session none of whose turns carries a technique or client state is
audited on the label suggester's labels (less dismissals) and says so — ``"labels": "suggested"`` in the API,
「AI 추정 라벨 기준」 on the trainee's and the supervisor's pages — while trainees never see the suggestions
themselves. A labelled session reads its own labels (``"given"``). Scoped by role like the session."""

import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from supervision.agreement.models import RunTurn
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv
from supervision.models import Session
from supervision.suggesting.models import SuggestionDismissal
from supervision.suggesting.selectors import current_run, open_suggestions
from supervision.suggesting.tests.test_decisions import _force
from supervision.suggesting.tests.test_import_suggestions import TEXTS, unlabelled_rows
from supervision.testing import PASSWORD
from supervision.trajectory.engine.audit import audit_windows
from supervision.trajectory.models import AuditedRevision, TrajectoryAudit
from supervision.trajectory.services import _read_batch, trajectory_audit_sessions, with_suggested_labels

pytestmark = pytest.mark.django_db
NOTE = "AI 추정 라벨 기준"


def _import(tmp_path, code, rows):
    path = write_csv(tmp_path / f"{code}.csv", ENGLISH_HEADER, rows)
    call_command("import_transcripts", str(path), "--trainee", "trainee_a", stdout=io.StringIO())
    return Session.objects.get(code=code)


@pytest.fixture
def unlabelled(cast, tmp_path):
    session = _import(tmp_path, "AUS1", unlabelled_rows("AUS1"))
    turns = list(session.turns.order_by("seq"))
    # What the model says is the model's (its own tests); pinned here so the audit's input is known.
    _force(turns[1], ["self_harm_disclosure", "despair"])
    _force(turns[2], ["empathy", "risk_assessment"])
    trajectory_audit_sessions(session_ids=[session.pk])
    return session, turns


@pytest.fixture
def labelled(cast, tmp_path):
    rows = session_rows("AUS2", len(TEXTS))
    for seq, row in enumerate(rows):
        row[5] = TEXTS[seq]
    session = _import(tmp_path, "AUS2", rows)
    trajectory_audit_sessions(session_ids=[session.pk])
    return session


def test_an_unlabelled_session_is_audited_on_its_suggestions_less_dismissals(cast, unlabelled):
    session, turns = unlabelled
    assert AuditedRevision.objects.get(session=session).labels == "suggested"
    SuggestionDismissal.objects.create(
        run=current_run(), turn=turns[1], label="despair", dismissed_by=cast.supervisor_a
    )
    _revisions, sessions = _read_batch([session.pk])
    read, suggested = with_suggested_labels(sessions)
    assert suggested == {session.pk}
    rows = dict((row[1], row) for row in read[0][1])
    assert rows[turns[1].utterance_id][6] == ["self_harm_disclosure"]  # the dismissed one is left out
    assert rows[turns[2].utterance_id][5] == ["empathy", "risk_assessment"]
    # the stored audit is the engine's on exactly those labels
    trajectory_audit_sessions(session_ids=[session.pk])
    window = [
        {"seq": seq, "utterance_id": uid, "speaker": speaker, "text": text, "nonverbal": nonverbal,
         "techniques": techniques, "client_states": states}
        for seq, uid, speaker, text, nonverbal, techniques, states in read[0][1]
    ]  # fmt: skip
    [expected] = audit_windows([window])
    stored = TrajectoryAudit.objects.get(session=session)
    assert (stored.label, stored.score, stored.explanation) == (expected.label, expected.score, expected.explanation)
    text_only = [{**turn, "techniques": [], "client_states": []} for turn in window]
    assert audit_windows([text_only])[0].explanation != stored.explanation  # the labels were read


def test_the_audit_reads_only_the_suggestions_the_model_gives_even_odds(cast, unlabelled):
    session, turns = unlabelled
    row = RunTurn.objects.get(turn=turns[2])
    row.scores = {"empathy": 0.49, "risk_assessment": 0.5}
    row.save()
    _revisions, sessions = _read_batch([session.pk])
    read, _suggested = with_suggested_labels(sessions)
    rows = dict((row[1], row) for row in read[0][1])
    assert rows[turns[2].utterance_id][5] == ["risk_assessment"]
    # the supervisor's list still offers both
    assert open_suggestions([turns[2].pk])[turns[2].pk].labels == ["empathy", "risk_assessment"]


def test_a_labelled_session_reads_its_own_labels(labelled):
    assert AuditedRevision.objects.get(session=labelled).labels == "given"
    _revisions, sessions = _read_batch([labelled.pk])
    assert with_suggested_labels(sessions) == (sessions, frozenset())


def test_without_a_usable_model_an_unlabelled_session_is_audited_on_its_text(cast, tmp_path, settings):
    session = _import(tmp_path, "AUS3", unlabelled_rows("AUS3"))
    settings.SUGGESTER_MODEL_PATH = str(tmp_path / "missing.json")
    from supervision.suggesting.loading import forget_loaded_models

    forget_loaded_models()
    try:
        trajectory_audit_sessions(session_ids=[session.pk])
    finally:
        forget_loaded_models()
    assert AuditedRevision.objects.get(session=session).labels == "given"


def _api(client, username, session):
    assert client.login(username=username, password=PASSWORD)
    return client.get(f"/api/v1/sessions/{session.pk}/trajectory/")


def test_the_api_says_which_labels_the_audit_read_to_whoever_may_see_the_session(client, unlabelled, labelled):
    session, _turns = unlabelled
    for username in ("trainee_a", "supervisor_a", "staff"):
        body = _api(client, username, session).json()
        assert body["session"] == session.pk and body["labels"] == "suggested" and body["pending"] is False
        assert [w["window_index"] for w in body["windows"]] == [0]
        assert body["windows"][0]["label"] in {"productive", "neutral", "harmful"}
        assert "self_harm_disclosure" not in str(body)  # the audit, never the suggestions themselves
        assert _api(client, username, labelled).json()["labels"] == "given"
        client.logout()
    for username in ("trainee_b", "supervisor_b"):
        assert _api(client, username, session).status_code == 404
        client.logout()
    assert client.get(f"/api/v1/sessions/{session.pk}/trajectory/").status_code in (401, 403)


def test_the_trainees_page_notes_the_basis_and_shows_no_suggestion(client, unlabelled, labelled):
    session, _turns = unlabelled
    assert client.login(username="trainee_a", password=PASSWORD)
    page = client.get(f"/feedback/sessions/{session.pk}/").content.decode()
    assert NOTE in page and 'id="audit-basis"' in page
    assert "self_harm_disclosure" not in page and "자해 보고" not in page and "label-suggestions" not in page
    assert NOTE not in client.get(f"/feedback/sessions/{labelled.pk}/").content.decode()
    client.logout()
    assert client.login(username="trainee_b", password=PASSWORD)
    assert client.get(f"/feedback/sessions/{session.pk}/").status_code == 404


def test_the_supervisors_pages_note_the_basis_for_their_own_trainees_only(client, unlabelled, labelled):
    session, _turns = unlabelled
    admin_page = reverse("admin:supervision_session_change", args=[session.pk])
    assert client.login(username="supervisor_a", password=PASSWORD)
    page = client.get(admin_page).content.decode()
    assert page.count(NOTE) == 1 and "궤적 감사" in page
    assert "확률 0.5 이상인 것(기각한 것 제외)으로 감사했습니다" in page  # what the audit read, said plainly
    assert NOTE in client.get(f"/feedback/sessions/{session.pk}/").content.decode()
    labelled_page = client.get(reverse("admin:supervision_session_change", args=[labelled.pk])).content.decode()
    assert "궤적 감사" in labelled_page and NOTE not in labelled_page
    client.logout()
    assert client.login(username="supervisor_b", password=PASSWORD)
    response = client.get(admin_page)
    assert response.status_code in (302, 403, 404) and NOTE not in response.content.decode()
    assert client.get(f"/feedback/sessions/{session.pk}/").status_code == 404


def audit_rows(session) -> list[tuple]:
    return list(
        TrajectoryAudit.objects.filter(session=session)
        .order_by("window_index")
        .values_list("label", "score", "explanation", "states")
    )


def test_dismissing_a_suggestion_has_the_session_audited_again_without_it(
    cast, unlabelled, django_capture_on_commit_callbacks
):
    from supervision.suggesting.services import suggestion_dismiss

    session, turns = unlabelled
    before = audit_rows(session)
    with django_capture_on_commit_callbacks(execute=True):
        suggestion_dismiss(turn=turns[1], label="self_harm_disclosure", dismissed_by=cast.supervisor_a)
    after = audit_rows(session)
    assert after != before  # the self-harm disclosure no longer in the trace
    trajectory_audit_sessions(session_ids=[session.pk])
    assert audit_rows(session) == after  # what the audit on the labels less the dismissal gives


def test_suggesting_a_session_again_has_it_audited_again(cast, unlabelled, django_capture_on_commit_callbacks):
    from supervision.suggesting.services import suggestions_refresh

    session, _turns = unlabelled
    before = audit_rows(session)  # on the pinned labels
    with django_capture_on_commit_callbacks(execute=True):
        suggestions_refresh(session_ids=[session.pk])  # the model's own labels replace the pinned ones
    after = audit_rows(session)
    trajectory_audit_sessions(session_ids=[session.pk])
    assert audit_rows(session) == after != before


def test_the_audit_list_says_and_filters_which_labels_each_window_read(client, unlabelled, labelled):
    session, _turns = unlabelled
    changelist = reverse("admin:trajectory_trajectoryaudit_changelist")
    assert client.login(username="supervisor_a", password=PASSWORD)
    rows = re.findall(r"<tr>.*?</tr>", client.get(changelist).content.decode(), flags=re.S)
    suggested_rows = [row for row in rows if "AI 추정 라벨 기준" in row]
    assert suggested_rows and all(session.code in row for row in suggested_rows)
    assert any(labelled.code in row and "입력된 라벨" in row for row in rows)

    only_suggested = client.get(changelist, {"labels": "suggested"}).content.decode()
    assert session.code in only_suggested and labelled.code not in only_suggested
    only_given = client.get(changelist, {"labels": "given"}).content.decode()
    assert labelled.code in only_given and f">{session.code}<" not in only_given
    window = TrajectoryAudit.objects.filter(session=session).first()
    detail = client.get(reverse("admin:trajectory_trajectoryaudit_change", args=[window.pk])).content.decode()
    assert "AI 추정 라벨 기준" in detail
