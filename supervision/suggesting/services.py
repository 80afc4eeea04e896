"""Writes of the suggester: its suggestions (the annotation run of the model version), and a supervisor's
accept / dismiss. Accepting goes through the label service, so the attach rule, the label history and the
safety events follow exactly as for a label typed in the admin.

Suggestions are written in bulk: one read of the turns, the model on the whole batch, then binary COPY of
the run's rows on PostgreSQL (``bulk_create`` elsewhere), inside the caller's transaction.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction

from supervision.agreement.models import AnnotationRun, RaterKind, RunTurn
from supervision.agreement.selectors import run_sessions_forget
from supervision.labelling import LabelRejected, turn_label_codes, turn_labels_update
from supervision.models import Turn
from supervision.roles import supervises
from supervision.services import ServiceError

from . import selectors
from .engine.features import TurnInput
from .engine.model import AXIS_OF_SPEAKER, SuggesterModel
from .loading import current_model, model_path
from .models import SuggestionDismissal

# Turns suggested at a time: memory follows this, not the number of sessions.
BATCH_TURNS = 20_000
RUN_NOTE = "포털 자체 평가 AI(라벨 제안 모델) — 가져오기마다 자동으로 제안"


class SuggestionRejected(ServiceError):
    pass


class SuggestionForbidden(SuggestionRejected):
    """The user is not the trainee's supervisor."""


@dataclass
class StoredTurn:
    id: int
    session_id: int
    seq: int
    speaker: str
    stage: str
    text: str
    nonverbal: list


def suggestion_run(model: SuggesterModel) -> AnnotationRun:
    """The annotation run of the model version (rater = the version, kind ``ai``), created on first use.
    Concurrent imports wait on a lock for the moment it takes, so a version never gets two runs."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('portal-suggester-run'))")
    run = AnnotationRun.objects.filter(rater=model.version, kind=RaterKind.AI).order_by("id").first()
    if run is None:
        run = AnnotationRun.objects.create(
            rater=model.version,
            kind=RaterKind.AI,
            note=f"{RUN_NOTE}; training data sha256 {model.meta.get('training_data_sha256', '')[:16]}…",
            uploaded_from=f"suggester ({_os_user()})",
            file_name=model_path().name,
        )
    return run


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _stored_turns(session_ids: Sequence[int]) -> Iterable[list[StoredTurn]]:
    """The sessions' turns in order, in batches of whole sessions of about ``BATCH_TURNS``."""
    batch: list[StoredTurn] = []
    ordered = sorted(session_ids)
    for start in range(0, len(ordered), 500):
        rows = (
            Turn.objects.filter(session_id__in=ordered[start : start + 500])
            .order_by("session_id", "seq")
            .values_list("id", "session_id", "seq", "speaker", "stage_id", "text", "nonverbal")
        )
        last_session = None
        for row in rows.iterator(chunk_size=5000):
            if len(batch) >= BATCH_TURNS and row[1] != last_session:
                yield batch
                batch = []
            batch.append(StoredTurn(*row))
            last_session = row[1]
    if batch:
        yield batch


def _inputs(turns: Sequence[StoredTurn]) -> list[TurnInput]:
    """Turns of whole sessions in ``seq`` order: the previous turn is the one before in the list."""
    result = []
    previous_session, previous_text = None, ""
    for turn in turns:
        if turn.session_id != previous_session:
            previous_text = ""
        result.append(TurnInput(turn.text, turn.stage, turn.nonverbal or (), previous_text))
        previous_session, previous_text = turn.session_id, turn.text
    return result


def suggestions_refresh(*, session_ids: Sequence[int], model: SuggesterModel | None = None) -> dict:
    """(Re)suggests every turn of the sessions with the current model: the sessions' rows in the model
    version's run are replaced. Returns ``{"model_version", "sessions", "turns"}``; without a usable model
    nothing is written and ``model_version`` is ``None``."""
    model = model or current_model()
    if model is None or not session_ids:
        return {"model_version": model.version if model else None, "sessions": 0, "turns": 0}
    with transaction.atomic():
        run = suggestion_run(model)
        RunTurn.objects.filter(run=run, turn__session_id__in=sorted(session_ids)).delete()
        written = 0
        for batch in _stored_turns(session_ids):
            suggestions = model.suggest(_inputs(batch), [t.speaker for t in batch])
            rows = []
            for turn, suggestion in zip(batch, suggestions, strict=True):
                axis = AXIS_OF_SPEAKER.get(turn.speaker)
                if axis is None:
                    continue
                rows.append((turn.id, axis, suggestion.labels, suggestion.scores))
            _write_rows(run, rows)
            written += len(rows)
        run_sessions_forget(run)
        transaction.on_commit(lambda: run_sessions_forget(run))
    return {"model_version": model.version, "sessions": len(set(session_ids)), "turns": written}


def _write_rows(run: AnnotationRun, rows: list[tuple[int, str, list[str], dict]]) -> None:
    if not rows:
        return
    if connection.vendor != "postgresql":
        RunTurn.objects.bulk_create(
            [
                RunTurn(
                    run=run,
                    turn_id=turn_id,
                    techniques=labels if axis == "techniques" else None,
                    client_states=labels if axis == "client_states" else None,
                    scores=scores,
                )
                for turn_id, axis, labels, scores in rows
            ],
            batch_size=500,
        )
        return
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(
            f"COPY {RunTurn._meta.db_table} (run_id, turn_id, techniques, client_states, dialog_act_rated, scores) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(("int8", "int8", "jsonb", "jsonb", "bool", "jsonb"))
        run_id, write_row = run.pk, copy.write_row
        for turn_id, axis, labels, scores in rows:
            if axis == "techniques":
                write_row((run_id, turn_id, labels, None, False, scores))
            else:
                write_row((run_id, turn_id, None, labels, False, scores))


# A supervisor's decisions ---------------------------------------------------------------------------------


def _check(turn: Turn, user) -> None:
    if not supervises(user, turn.session.trainee_id):
        raise SuggestionForbidden("담당 수련생의 발화에 대한 제안만 수락하거나 기각할 수 있습니다.")


def _offered(turn: Turn, label: str | None = None) -> tuple[AnnotationRun, list[str]]:
    offered = selectors.open_suggestions([turn.pk]).get(turn.pk)
    if offered is None or (label is not None and label not in offered.labels):
        raise SuggestionRejected("이 발화에 지금 제안된 라벨이 아닙니다(이미 수락·기각했거나 제안이 바뀜).")
    return offered.run, offered.labels


@transaction.atomic
def suggestion_accept(*, turn: Turn, accepted_by, labels: Sequence[str] | None = None) -> list:
    """Adds the suggested ``labels`` (all of the turn's open suggestions when ``None``: 「모두 수락」) to the
    turn's golden labels through the label service; returns its history rows."""
    _check(turn, accepted_by)
    run, offered = _offered(turn, labels[0] if labels and len(labels) == 1 else None)
    wanted = list(offered if labels is None else labels)
    if not wanted or not set(wanted) <= set(offered):
        raise SuggestionRejected("이 발화에 지금 제안된 라벨만 수락할 수 있습니다.")
    axis = AXIS_OF_SPEAKER[turn.speaker]
    current = turn_label_codes(turn)[axis]
    try:
        return turn_labels_update(
            turn=turn,
            changed_by=accepted_by,
            via="suggestion",
            note=f"AI 제안 수락({run.rater})",
            **{axis: [*current, *[code for code in wanted if code not in current]]},
        )
    except LabelRejected as rejected:
        raise SuggestionRejected(" ".join(m for ms in rejected.problems.values() for m in ms)) from None


@transaction.atomic
def suggestion_dismiss(*, turn: Turn, label: str, dismissed_by) -> SuggestionDismissal:
    """Remembers that the supervisor rejected this suggestion; that model version does not offer it again."""
    _check(turn, dismissed_by)
    run, _offered_labels = _offered(turn, label)
    try:
        with transaction.atomic():
            return SuggestionDismissal.objects.create(run=run, turn=turn, label=label, dismissed_by=dismissed_by)
    except IntegrityError:
        raise SuggestionRejected("이미 기각한 제안입니다.") from None
