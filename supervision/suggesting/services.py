"""Writes of the suggester: its suggestions (the annotation run of the model version), and a supervisor's
accept / dismiss. Accepting goes through the label service, so the attach rule, the label history and the
safety events follow exactly as for a label typed in the admin.

Suggestions are written in bulk: one read of the turns, the model on the whole batch, then binary COPY of
the run's rows on PostgreSQL (``bulk_create`` elsewhere), inside the caller's transaction.
"""

from __future__ import annotations

import getpass
import json
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, Q, Subquery

from supervision.agreement.models import AnnotationRun, RaterKind, RunTurn
from supervision.agreement.selectors import run_sessions_forget
from supervision.labelling import LabelRejected, turn_label_codes, turn_labels_update
from supervision.models import Turn
from supervision.roles import supervises
from supervision.services import ServiceError
from supervision.trajectory.tasks import queue_session_audits

from . import selectors
from .engine.features import TurnInput, turn_input
from .engine.model import AXIS_OF_SPEAKER, SuggesterModel
from .loading import current_model, model_path
from .models import SuggestionDismissal

logger = logging.getLogger(__name__)
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


# The columns of a ``StoredTurn``, in its order.
STORED_TURN_COLUMNS = ("id", "session_id", "seq", "speaker", "stage_id", "text", "nonverbal")


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
            .values_list(*STORED_TURN_COLUMNS)
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


def suggestions_refresh(*, session_ids: Sequence[int], model: SuggesterModel | None = None) -> dict:
    """(Re)suggests every turn of the sessions with the current model (``suggest_labels --session``): the
    sessions' rows in the model version's run are replaced. Returns ``{"model_version", "sessions",
    "turns"}``; without a usable model nothing is written and ``model_version`` is ``None``."""
    model = model or current_model()
    if model is None or not session_ids:
        return {"model_version": model.version if model else None, "sessions": 0, "turns": 0}
    with transaction.atomic():
        writer = SuggestionWriter(model)
        RunTurn.objects.filter(run=writer.run, turn__session_id__in=sorted(session_ids)).delete()
        written = 0
        for batch in _stored_turns(session_ids):
            written += writer.write([(t.id, t) for t in batch])
        writer.finish()
        # Sessions nobody labelled are audited on these suggestions: audited again once they are committed.
        transaction.on_commit(partial(queue_session_audits, sorted(set(session_ids))))
    return {"model_version": model.version, "sessions": len(set(session_ids)), "turns": written}


def suggestions_refresh_turns(*, turn_ids: Sequence[int], model: SuggesterModel | None = None) -> dict:
    """(Re)suggests the turns whose words were edited and the ``model.turns_before`` turns after each (they
    read it as a turn before theirs), with the current model: their rows in the model version's run are
    replaced, the rest of their sessions' are kept. Returns what ``suggestions_refresh`` returns; the
    sessions' audits follow the commit."""
    model = model or current_model()
    if model is None or not turn_ids:
        return {"model_version": model.version if model else None, "sessions": 0, "turns": 0}
    edited = Turn.objects.filter(pk__in=sorted(turn_ids)).values_list("session_id", "seq")
    reach = Q()
    for session_id, seq in edited:
        reach |= Q(session_id=session_id, seq__gte=seq, seq__lte=seq + model.turns_before)
    if not reach:
        return {"model_version": model.version, "sessions": 0, "turns": 0}
    turns = [
        StoredTurn(*row)
        for row in Turn.objects.filter(reach).order_by("session_id", "seq").values_list(*STORED_TURN_COLUMNS)
    ]
    session_ids = sorted({t.session_id for t in turns})
    with transaction.atomic():
        writer = SuggestionWriter(model)
        written = writer.write([(t.id, t) for t in turns], replaced=[t.id for t in turns])
        writer.finish()
        transaction.on_commit(partial(queue_session_audits, session_ids))
    return {"model_version": model.version, "sessions": len(session_ids), "turns": written}


def turns_rewritten(sender, session_ids: list[int], turn_ids: Sequence[int] = (), **kwargs) -> None:
    """Receiver of ``supervision.signals.turns_rewritten`` (a turn's words edited in the admin, committed):
    the edited turns and the ones after them that read them as a turn before theirs were suggested from the
    old words, and are suggested again (``suggestions_refresh_turns``; whole sessions when no turn is named);
    their audits follow. Never raises: the edit is done. A failure is logged and the old suggestions stay
    until ``suggest_labels --session``."""
    try:
        if turn_ids:
            suggestions_refresh_turns(turn_ids=turn_ids)
        else:
            suggestions_refresh(session_ids=session_ids)
    except Exception:
        logger.exception("AI 라벨 제안을 다시 만들지 못했습니다 (회기 %s)", session_ids)


def _predict(model: SuggesterModel, turns, inputs: list[TurnInput]) -> list:
    """(labels, [(label, probability), …] of those labels) per turn: what the run stores."""
    return model.predict(inputs, [t.speaker for t in turns], runners_up=0)


def _turn_inputs(turns, before: list[list[str]]) -> list[TurnInput]:
    """What the model reads of each turn, with the texts of the turns before it, nearest first."""
    return [
        turn_input(turn.text or "", turn.stage or "", turn.nonverbal or (), texts)
        for turn, texts in zip(turns, before, strict=True)
    ]


def _session_of(turn) -> object:
    """The session a written turn belongs to: its id (a stored turn) or its code (an import's record)."""
    return turn.session_id if isinstance(turn, StoredTurn) else turn.session


def _copy_tails(turns, predictions, labels_json: dict[tuple, str]) -> list[str]:
    """Each turn's row of the text COPY after its run and turn ids (``SuggestionWriter._copy``): the JSON is
    written here, as the codes are plain identifiers and the numbers floats, so nothing needs escaping, and
    there is no ``json.dumps`` per value (it was a fifth of the cost). ``scores`` keeps the probabilities of
    the labels suggested, which the pages show (``NULL`` when none is); the runners-up the model also ranks
    (``suggest_labels --input`` prints them) are not stored: nothing reads them, they were three quarters of
    the jsonb the server parsed, and ranking them was two thirds of the model's time
    (``predict(runners_up=0)``)."""
    tails = []
    for turn, (labels, scores) in zip(turns, predictions, strict=True):
        listed = labels_json.get(tuple(labels))
        if listed is None:
            listed = labels_json[tuple(labels)] = json.dumps(labels)
        shown = "{" + ", ".join(f'"{code}": {p!r}' for code, p in scores) + "}" if labels else "\\N"
        if turn.speaker == "counselor":
            tails.append(f"\t{listed}\t\\N\tf\t{shown}\n")
        else:
            tails.append(f"\t\\N\t{listed}\tf\t{shown}\n")
    return tails


class _Predicting:
    """The model on one chunk in a thread of its own; ``result`` waits for it (and raises what it raised).
    The thread also makes the model's inputs and, with ``labels_json`` (PostgreSQL), the chunk's COPY rows
    (``_copy_tails``): that is Python, but done while the import waits on PostgreSQL it costs the import
    next to nothing."""

    def __init__(self, model: SuggesterModel, turns, before: list[list[str]], labels_json: dict | None) -> None:
        self._result: list | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(model, turns, before, labels_json), name="suggester", daemon=True
        )
        self._thread.start()

    def _run(self, model: SuggesterModel, turns, before: list[list[str]], labels_json: dict | None) -> None:
        try:
            predictions = _predict(model, turns, _turn_inputs(turns, before))
            self._result = predictions if labels_json is None else _copy_tails(turns, predictions, labels_json)
        except BaseException as exc:  # handed to the caller's thread by ``result``
            self._error = exc

    def result(self) -> list:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def _same_objects(these: Sequence[object], those: Sequence[object]) -> bool:
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


@dataclass
class _Chunk:
    """A chunk's turns that have an axis, read before they are written: the texts of the turns before each,
    nearest first (``None``: to be read back once the turns have ids), and the model once it has started on
    them."""

    given: Sequence[object]  # the chunk as ``read`` was given it
    turns: list
    before: list[list[str | None]]
    predicting: _Predicting | None = None
    ids: list[int] | None = None


class SuggestionWriter:
    """Writes the suggestions of turns as they are stored, into the run of the model version, inside the
    caller's transaction. The import feeds it chunk by chunk with the records it has in memory (nothing is
    read back); ``replaced`` names turns that may hold an older suggestion of this version (a re-import).

    With ``overlap`` (the import) the model runs on a chunk in a background thread while the caller goes on
    with its own work: the model is NumPy on whole arrays, which runs without the GIL, and the caller mostly
    waits on PostgreSQL, so the two share the time instead of adding up. The import hands a chunk over with
    ``read`` before it writes the chunk's turns, links and comments, which is when it waits on PostgreSQL
    most; ``write`` then gives the turns' ids. The chunk's rows are written on the caller's connection (its
    transaction) at the next ``read`` or at ``finish``, so every turn has its suggestion when the import
    commits. Only the model's arithmetic leaves the thread that owns the connection."""

    COLUMNS = "run_id, turn_id, techniques, client_states, dialog_act_rated, scores"

    def __init__(self, model: SuggesterModel, *, overlap: bool = False) -> None:
        self.model = model
        self.run = suggestion_run(model)
        self.overlap = overlap
        self._labels_json: dict[tuple, str] = {}
        self._read: _Chunk | None = None
        self._pending: _Chunk | None = None
        # (session, seq) -> text of the previous chunk's turns: a session's turns before the first of a chunk
        self._previous_chunk: dict[tuple, str] = {}

    @classmethod
    def for_import(cls) -> SuggestionWriter | None:
        model = current_model()
        return cls(model, overlap=True) if model is not None else None

    def read(self, turns: Sequence[object]) -> None:
        """A chunk before its turns are written (objects with ``session``, ``seq``, ``speaker``, ``stage``,
        ``text``, ``nonverbal``); ``write`` follows with the same objects and their ids. With ``overlap`` the
        model starts on them now (started at ``write`` it ran while the import parsed the next chunk, both
        wanting the GIL, and the last chunk's was waited for at the end)."""
        self._store_pending()
        kept = [turn for turn in turns if turn.speaker in AXIS_OF_SPEAKER]
        chunk = self._read = _Chunk(turns, kept, self._texts_before(turns, kept))
        if self.overlap and kept and not any(None in texts for texts in chunk.before):
            chunk.predicting = _Predicting(self.model, kept, chunk.before, self._copy_labels())

    def write(self, turns: Sequence[tuple[int, object]], *, replaced: Sequence[int] = ()) -> int:
        """``turns``: (turn id, an object with ``session``, ``seq``, ``speaker``, ``stage``, ``text``,
        ``nonverbal``), the objects given to ``read`` if it was called for this chunk."""
        chunk = self._read
        if chunk is None or not _same_objects(chunk.given, [turn for _, turn in turns]):
            self.read([turn for _, turn in turns])
            chunk = self._read
        self._read = None
        if replaced:
            RunTurn.objects.filter(run=self.run, turn_id__in=list(replaced)).delete()
        chunk.ids = [turn_id for turn_id, turn in turns if turn.speaker in AXIS_OF_SPEAKER]
        if not chunk.turns:
            return 0
        if chunk.predicting is None:
            before = self._read_back(chunk)
            if not self.overlap:
                predictions = _predict(self.model, chunk.turns, _turn_inputs(chunk.turns, before))
                labels_json = self._copy_labels()
                self._store(
                    chunk, predictions if labels_json is None else _copy_tails(chunk.turns, predictions, labels_json)
                )
                return len(chunk.turns)
            chunk.predicting = _Predicting(self.model, chunk.turns, before, self._copy_labels())
        self._pending = chunk
        return len(chunk.turns)

    def _texts_before(self, chunk: Sequence[object], turns: list) -> list[list[str | None]]:
        """The texts of the session's turns at seq - 1 … seq - ``model.turns_before`` for each of ``turns``
        (those of the ``chunk`` that have an axis; the safety scorer reads the counselor's question before an
        answer and the client's words before that, and without them the shipped model misses disclosures it
        finds in cross-validation), from this chunk or the one before, as the import and
        ``suggestions_refresh`` write sessions in order. ``None``: to be read back (a chunk's first turns
        whose neighbours were written earlier, or a re-imported turn whose neighbours the file lacks)."""
        here = {(_session_of(turn), turn.seq): turn.text or "" for turn in chunk}
        earlier, found = self._previous_chunk, []
        depth = range(1, self.model.turns_before + 1)
        for turn in turns:
            session, texts = _session_of(turn), []
            for k in depth:
                text = here.get((session, turn.seq - k))
                if text is None:
                    text = earlier.get((session, turn.seq - k))
                texts.append("" if text is None and turn.seq - k < 0 else text)
            found.append(texts)
        self._previous_chunk = here
        return found

    def _read_back(self, chunk: _Chunk) -> list[list[str]]:
        """``chunk.before`` with the texts ``_texts_before`` left out read back in one query (so only once
        the turns have ids)."""
        missing = [turn_id for turn_id, texts in zip(chunk.ids, chunk.before, strict=True) if None in texts]
        if not missing:
            return chunk.before
        offsets = sorted({k for texts in chunk.before for k, text in enumerate(texts, start=1) if text is None})
        stored = {
            row[0]: row[1:]
            for row in Turn.objects.filter(pk__in=missing)
            .annotate(
                **{
                    f"text_before_{k}": Subquery(
                        Turn.objects.filter(session_id=OuterRef("session_id"), seq=OuterRef("seq") - k).values("text")[
                            :1
                        ]
                    )
                    for k in offsets
                }
            )
            .values_list("pk", *(f"text_before_{k}" for k in offsets))
        }
        column = {k: i for i, k in enumerate(offsets)}

        def stored_text(turn_id: int, k: int) -> str:
            row = stored.get(turn_id)
            return (row[column[k]] if row else None) or ""  # no turn at seq - k: nothing before

        return [
            [text if text is not None else stored_text(turn_id, k) for k, text in enumerate(texts, start=1)]
            for turn_id, texts in zip(chunk.ids, chunk.before, strict=True)
        ]

    def finish(self) -> None:
        self._store_pending()
        run_sessions_forget(self.run)
        transaction.on_commit(lambda: run_sessions_forget(self.run))

    def _store_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            self._store(pending, pending.predicting.result())

    def _copy_labels(self) -> dict[tuple, str] | None:
        """The JSON of the label lists written so far, for ``_copy_tails``; ``None``: no COPY (not PostgreSQL)."""
        return self._labels_json if connection.vendor == "postgresql" else None

    def _store(self, chunk: _Chunk, result: list) -> None:
        """``result``: the chunk's ``_copy_tails`` on PostgreSQL, else its predictions."""
        if connection.vendor == "postgresql":
            self._copy(chunk.ids, result)
        else:
            self._bulk_create(list(zip(chunk.ids, chunk.turns, strict=True)), result)

    def _copy(self, turn_ids: list[int], tails: list[str]) -> None:
        """Text COPY of the chunk's rows (``_copy_tails``), on the caller's connection."""
        run_id = self.run.pk
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(f"COPY {RunTurn._meta.db_table} ({self.COLUMNS}) FROM STDIN") as copy,
        ):
            copy.write("".join([f"{run_id}\t{turn_id}{tail}" for turn_id, tail in zip(turn_ids, tails, strict=True)]))

    def _bulk_create(self, turns, predictions) -> None:
        RunTurn.objects.bulk_create(
            [
                RunTurn(
                    run=self.run,
                    turn_id=turn_id,
                    techniques=labels if turn.speaker == "counselor" else None,
                    client_states=labels if turn.speaker == "client" else None,
                    scores=dict(scores) or None,
                )
                for (turn_id, turn), (labels, scores) in zip(turns, predictions, strict=True)
            ],
            batch_size=500,
        )


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
            dismissal = SuggestionDismissal.objects.create(run=run, turn=turn, label=label, dismissed_by=dismissed_by)
    except IntegrityError:
        raise SuggestionRejected("이미 기각한 제안입니다.") from None
    # An unlabelled session's audit reads its suggestions less dismissals: audited again after this one.
    transaction.on_commit(partial(queue_session_audits, [turn.session_id]))
    return dismissal
