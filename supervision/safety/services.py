"""Writes of safety reviews. The admin page and the API both call ``safety_event_review``."""

from __future__ import annotations

import json

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from supervision import pagecache, rules
from supervision.feedback.models import CommentRead, CommentReply
from supervision.gauge.models import DismissedSuggestion
from supervision.models import CommentAuthor, CommentKind, Session, Severity, SupervisorComment, TurnClientState
from supervision.roles import supervises
from supervision.safety.models import SafetyReview, SuggestedRevision
from supervision.safety.selectors import unanswered_events_with_first_reply
from supervision.services import ServiceError
from taxonomy.catalogue import CLIENT_STATES_BY_CODE, RISK_ASSESSMENT_TECHNIQUE
from taxonomy.normalize import normalize_typed

MAX_NOTE_CHARS = 2000


class ReviewRejected(ServiceError):
    """The note breaks a rule; ``field`` names the input it came from."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class ReviewForbidden(ServiceError):
    """Only the trainee's supervisor reviews their safety events."""


def note_problem(note: object) -> str | None:
    """What is wrong with a review note (Korean), or None. Shared by the admin form and the API."""
    if not isinstance(note, str):
        return "검토 메모(note)는 문자열이어야 합니다."
    if len(normalize_typed(note)) > MAX_NOTE_CHARS:  # a line break counts once, as the page's maxlength counts it
        return f"검토 메모(note)는 {MAX_NOTE_CHARS:,}자 이내로 적어 주세요."
    return rules.personal_identifier_problem(note)


@transaction.atomic
def safety_event_review(*, event: TurnClientState, note: str, reviewed_by) -> SafetyReview:
    """Marks the event reviewed by ``reviewed_by`` now, with ``note``; a second review replaces the note and
    the time, and the earlier version stays in the review's history (who, when, what)."""
    trainee_id = event.turn.session.trainee_id
    if not supervises(reviewed_by, trainee_id):
        raise ReviewForbidden("안전 사건을 검토할 수 있는 사람은 이 수련생의 담당 슈퍼바이저뿐입니다.")
    if problem := note_problem(note):
        raise ReviewRejected("note", problem)
    values = {"note": normalize_typed(note), "reviewed_by": reviewed_by, "reviewed_at": timezone.now()}
    pair = {"turn_id": event.turn_id, "state_id": event.label_id}
    review = SafetyReview.objects.select_for_update().filter(**pair).first()
    try:
        with transaction.atomic():
            review = _saved(review or SafetyReview(**pair), values, reviewed_by)
    except IntegrityError:  # another first review of the same event committed meanwhile: this one follows it
        review = _saved(SafetyReview.objects.select_for_update().get(**pair), values, reviewed_by)
    pagecache.trainees_changed([trainee_id])  # the trainee's session page shows the note
    return review


def _saved(review: SafetyReview, values: dict, user) -> SafetyReview:
    for name, value in values.items():
        setattr(review, name, value)
    review._history_user = user  # the history names the reviewer whether a request, a task or a test writes
    review.save()
    return review


# ---------------------------------------------------------------------------------------------------
# AI suggestions: each unanswered event becomes a major critique suggestion on the first counselor turn
# after the disclosure, in the gauge's suggestion flow (``SupervisorComment`` with ``is_suggestion``,
# accepted or dismissed in the admin's AI 제안 논평 list, a dismissal remembered in ``DismissedSuggestion``).

# Every safety suggestion's key starts with this; the gauge's own clean-up only touches "gauge:" keys.
SUGGESTION_PREFIX = "safety:"


def suggestion_key(event) -> str:
    """One key per event (the disclosure turn and the state), so a re-run finds what it wrote."""
    return f"{SUGGESTION_PREFIX}{event.state}:{event.turn_id}"


def _suggestion_text(event) -> str:
    state = CLIENT_STATES_BY_CODE[event.state]
    return (
        f"내담자가 {event.utterance_id}에서 {state.ko}({state.code})를 보였는데, 뒤따른 상담자 발화 "
        f"{settings.SAFETY_RESPONSE_TURNS}개 안에 위험사정({RISK_ASSESSMENT_TECHNIQUE})이 없었습니다. "
        "자살·자해에 관한 생각, 계획, 수단, 이전 시도와 보호 요인을 직접 묻는 질문이 있었는지 함께 검토해 주세요."
    )


_SUGGESTION_DEVIATION = {
    "dimension": "안전 (safety)",
    "expected": RISK_ASSESSMENT_TECHNIQUE,
    "severity": Severity.MAJOR.value,
}


@transaction.atomic
def safety_suggest(*, session_ids: list[int] | None = None) -> dict[str, int]:
    """Makes the pending safety suggestions exactly those of the unanswered events (of ``session_ids``, or of
    every session): new ones are added, pending ones whose event was answered since (or whose label was
    withdrawn) are removed. Accepted ones are never touched and a dismissed one never comes back, so a
    re-run changes nothing. Returns ``{"unanswered", "suggested", "removed"}`` (new and removed rows)."""
    postgresql = connection.vendor == "postgresql"
    if postgresql:
        # Past a few thousand events the planner's cost for the per-event subqueries passes jit_above_cost, and
        # compiling them took 2.0 of the 2.8 s of the events query at 200 sessions (EXPLAIN ANALYZE).
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
    events = [e for e in unanswered_events_with_first_reply(session_ids=session_ids) if e.first_reply_id]
    wanted = {(e.first_reply_id, suggestion_key(e)): _suggestion_text(e) for e in events}
    write = _write_suggestions if postgresql else _write_suggestions_portable
    suggested, removed = write(wanted, session_ids)
    return {"unanswered": len(events), "suggested": suggested, "removed": removed}


def _write_suggestions(wanted: dict[tuple[int, str], str], session_ids: list[int] | None) -> tuple[int, int]:
    """Makes the pending safety suggestions of ``session_ids`` (or of every session) exactly ``wanted``
    (``{(turn id, key): text}``, in the order they are to be written) in one statement; returns how many
    were added and how many removed.

    The rows go as one JSON array and are compared in SQL (as the gauge's ``_write_suggestions`` does):
    building 25,000 model instances and binding their columns cost more than the query that found them.
    The removed rows go the way ``QuerySet.delete()`` sends them — their reads and replies with them, a
    deletion ("-") row each in the comment's history — but without a signal and an INSERT per row.
    The DELETE and the INSERT see one snapshot; a removed row is by definition not wanted, so they never meet."""
    table = SupervisorComment._meta.db_table
    history = SupervisorComment.history.model._meta.db_table
    kept = [
        f.column for f in SupervisorComment.history.model._meta.concrete_fields if not f.name.startswith("history_")
    ]
    # The sessions' turns as an array: the pending suggestions are found through the comments' turn index
    # whatever the statistics say (right after a first night they count none, and the planner read every
    # comment and looked its turn up: 0.19 s against 0.01 s for 20 sessions of 1,000).
    in_scope = (
        ""
        if session_ids is None
        else "AND c.turn_id = ANY(ARRAY(SELECT id FROM turns WHERE session_id = ANY(%(sessions)s)))"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH wanted AS MATERIALIZED ("
            "  SELECT turn_id, suggestion_key, text, position"
            "  FROM jsonb_to_recordset(%(wanted)s::jsonb) AS w(turn_id bigint, suggestion_key text, text text, position int)"
            "), stale AS ("
            f"  DELETE FROM {table} c WHERE c.is_suggestion AND c.suggestion_key LIKE %(prefix)s {in_scope}"
            # NOT IN over the materialized list is a hashed subplan (as in the gauge's statement)
            "    AND (c.turn_id, c.suggestion_key) NOT IN (SELECT w.turn_id, w.suggestion_key FROM wanted w)"
            "  RETURNING c.*"
            f"), unread AS (DELETE FROM {CommentRead._meta.db_table} WHERE comment_id IN (SELECT id FROM stale) RETURNING 1"
            f"), unreplied AS (DELETE FROM {CommentReply._meta.db_table} WHERE comment_id IN (SELECT id FROM stale) RETURNING 1"
            f"), recorded AS (INSERT INTO {history} ({', '.join(kept)}, history_date, history_type)"
            f"  SELECT {', '.join(kept)}, %(now)s, '-' FROM stale"
            # what exists (pending or accepted) and what a supervisor dismissed is never suggested again
            "), fresh AS ("
            "  SELECT w.* FROM wanted w"
            f"  WHERE NOT EXISTS (SELECT 1 FROM {table} c WHERE c.turn_id = w.turn_id AND c.suggestion_key = w.suggestion_key)"
            f"    AND NOT EXISTS (SELECT 1 FROM {DismissedSuggestion._meta.db_table} d"
            "      WHERE d.turn_id = w.turn_id AND d.suggestion_key = w.suggestion_key)"
            f"), written AS (INSERT INTO {table} (turn_id, kind, text, intent_deviation, author, is_suggestion,"
            "    suggestion_key, created_at, updated_at)"
            "  SELECT turn_id, %(kind)s, text, %(deviation)s::jsonb, %(author)s, true, suggestion_key, %(now)s, %(now)s"
            "  FROM fresh ORDER BY position"
            # a run at the same moment may have written some: the (turn, key) unique constraint keeps one
            "  ON CONFLICT (turn_id, suggestion_key) WHERE NOT (suggestion_key = '') DO NOTHING"
            # removed counts the cascaded rows too, as QuerySet.delete() does
            ") SELECT (SELECT count(*) FROM fresh),"
            "  (SELECT count(*) FROM stale) + (SELECT count(*) FROM unread) + (SELECT count(*) FROM unreplied)",
            {
                "wanted": json.dumps(
                    [
                        {"turn_id": turn_id, "suggestion_key": key, "text": text, "position": position}
                        for position, ((turn_id, key), text) in enumerate(wanted.items())
                    ],
                    ensure_ascii=False,
                ),
                "sessions": session_ids or [],
                "prefix": SUGGESTION_PREFIX + "%",
                "kind": CommentKind.CRITIQUE,
                "deviation": json.dumps(_SUGGESTION_DEVIATION, ensure_ascii=False),
                "author": CommentAuthor.AI,
                "now": timezone.now(),
            },
        )
        suggested, removed = cursor.fetchone()
    return suggested, removed


def _write_suggestions_portable(wanted: dict[tuple[int, str], str], session_ids: list[int] | None) -> tuple[int, int]:
    """``_write_suggestions`` through the ORM, for the embedded database of `make run`: the same rows,
    decided the same way."""
    pending = SupervisorComment.objects.filter(is_suggestion=True, suggestion_key__startswith=SUGGESTION_PREFIX)
    if session_ids is not None:
        pending = pending.filter(turn__session_id__in=session_ids)
    stale = [
        pk
        for pk, turn_id, key in pending.values_list("pk", "turn_id", "suggestion_key")
        if (turn_id, key) not in wanted
    ]
    removed = SupervisorComment.objects.filter(pk__in=stale).delete()[0] if stale else 0
    turns = {turn for turn, _ in wanted}
    # what exists (pending or accepted) and what a supervisor dismissed is never suggested again
    present = set(
        SupervisorComment.objects.filter(turn_id__in=turns, suggestion_key__startswith=SUGGESTION_PREFIX).values_list(
            "turn_id", "suggestion_key"
        )
    ) | set(DismissedSuggestion.objects.filter(turn_id__in=turns).values_list("turn_id", "suggestion_key"))
    fresh = [
        SupervisorComment(
            turn_id=turn_id,
            kind=CommentKind.CRITIQUE,
            text=text,
            intent_deviation=dict(_SUGGESTION_DEVIATION),
            author=CommentAuthor.AI,
            is_suggestion=True,
            suggestion_key=key,
        )
        for (turn_id, key), text in wanted.items()
        if (turn_id, key) not in present
    ]
    # a run at the same moment may have written some: the (turn, key) unique constraint keeps one
    SupervisorComment.objects.bulk_create(fresh, ignore_conflicts=True)
    return len(fresh), removed


def safety_nightly(*, day, full: bool = False) -> dict[str, int]:
    """The nightly step (``settings.NIGHTLY_REVIEW_STEPS``): the suggestions of every unanswered event.
    ``day`` is the run's day; events have no day of their own. Only the sessions whose rows changed since
    their suggestions were last made (a newer revision mark, see ``SuggestedRevision``) are looked at, or
    every session with ``full`` (or where there are no revision marks, off PostgreSQL). Adds ``sessions``:
    how many were looked at."""
    marks = connection.vendor == "postgresql"
    # the revisions are read before the events: a write committed since is looked at next night
    revisions = _session_revisions(changed_only=marks and not full)
    if marks and not full:
        if not revisions:
            return {"sessions": 0, "unanswered": 0, "suggested": 0, "removed": 0}
        result = safety_suggest(session_ids=sorted(revisions))
    else:
        result = safety_suggest()
    _remember(revisions)
    return {"sessions": len(revisions), **result}


def safety_pending(*, day) -> list[int]:
    """The nightly chunks' part (``settings.NIGHTLY_SESSION_WORK``): the sessions whose suggestions this
    step would make again (none off PostgreSQL, where the step looks at every session itself)."""
    if connection.vendor != "postgresql":
        return []
    return sorted(_session_revisions(changed_only=True))


def safety_prepare(*, day, ids: list[int]) -> dict[str, int]:
    """``safety_nightly`` for the sessions ``ids`` only (a chunk of the night): their suggestions made, and
    remembered as made at the revision read first."""
    revisions = _session_revisions(changed_only=False, session_ids=ids)
    result = safety_suggest(session_ids=sorted(revisions))
    _remember(revisions)
    return {"sessions": len(revisions), **result}


def _remember(revisions: dict[int, int]) -> None:
    SuggestedRevision.objects.bulk_create(
        [
            SuggestedRevision(session_id=sid, revision=rev, response_turns=settings.SAFETY_RESPONSE_TURNS)
            for sid, rev in revisions.items()
        ],
        update_conflicts=True,
        unique_fields=["session"],
        update_fields=["revision", "response_turns"],
        batch_size=5000,
    )


def _session_revisions(*, changed_only: bool, session_ids: list[int] | None = None) -> dict[int, int]:
    """Session id → revision mark (every session or those of ``session_ids``, or those changed since their
    suggestions were made)."""
    if connection.vendor != "postgresql":
        sessions = Session.objects.all() if session_ids is None else Session.objects.filter(id__in=session_ids)
        return dict.fromkeys(sessions.values_list("id", flat=True), 0)
    sql = (
        "SELECT s.id, COALESCE(r.revision, 0) FROM sessions s LEFT JOIN gauge_session_revision r ON r.session_id = s.id"
    )
    params: list = []
    if changed_only:
        sql += (
            f" LEFT JOIN {SuggestedRevision._meta.db_table} m ON m.session_id = s.id "
            "WHERE (m.session_id IS NULL OR m.revision < COALESCE(r.revision, 0) OR m.response_turns <> %s)"
        )
        params = [settings.SAFETY_RESPONSE_TURNS]
    if session_ids is not None:
        sql += (" AND" if changed_only else " WHERE") + " s.id = ANY(%s)"
        params.append(list(session_ids))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return dict(cursor.fetchall())
