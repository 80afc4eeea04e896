"""Safety events (CONTRACT §8), derived from the turns when they are read.

A client turn labelled with a safety-critical state is a safety event, one per (turn, state) — that is,
one per ``TurnClientState`` row of a safety-critical label, whose id is the event's id. The event is
*answered* when one of the next ``SAFETY_RESPONSE_TURNS`` counselor turns of the session (by ``seq``)
carries the risk-assessment technique; ``answered_by`` is the first such turn's utterance id and
``latency`` its position among the following counselor turns (1 = the very next one).

Everything is one statement: the window, the answer and the review are correlated subqueries on the
``(session_id, seq)`` index and the review's unique index, so a page of events costs the same for 10
events or 100, and a label written a moment ago is already counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.roles import trainee_filter
from supervision.safety.models import SafetyReview
from supervision.trajectory.models import TrajectoryAudit, TrajectoryLabel
from supervision.trajectory.selectors import risk_threshold
from taxonomy import catalogue
from taxonomy.models import TechniqueLabelDef

# Larger than any seq: the window of a disclosure followed by fewer counselor turns runs to the end.
_END_OF_SESSION = 2**31 - 1


def _following_counselor_turns(session: str, seq: str) -> QuerySet[Turn]:
    """Counselor turns of the outer row's session after its turn, in order (``session``/``seq``: outer fields)."""
    return Turn.objects.filter(
        session_id=OuterRef(session), speaker=catalogue.COUNSELOR, seq__gt=OuterRef(seq)
    ).order_by("seq")


def _review_of_event() -> QuerySet[SafetyReview]:
    return SafetyReview.objects.filter(turn_id=OuterRef("turn_id"), state_id=OuterRef("label_id"))


def safety_events(
    user,
    *,
    trainee_id: int | None = None,
    session_id: int | None = None,
    answered: bool | None = None,
    reviewed: bool | None = None,
) -> QuerySet[TurnClientState]:
    """``events_of_all_trainees`` narrowed to the trainees ``user`` may see (CONTRACT §5)."""
    return events_of_all_trainees(
        trainee_id=trainee_id, session_id=session_id, answered=answered, reviewed=reviewed
    ).filter(trainee_filter(user, "turn__session__trainee"))


# ``events_of_all_trainees``' order after its first key (unanswered first): unreviewed first, then the newest
# session first, then by position in the session and state.
_ORDER_AFTER_ANSWERED = ("reviewed", F("held_on").desc(nulls_last=True), "-session_id", "seq", "state")


def events_of_all_trainees(
    *,
    trainee_id: int | None = None,
    session_id: int | None = None,
    answered: bool | None = None,
    reviewed: bool | None = None,
) -> QuerySet[TurnClientState]:
    """Every safety event, unanswered and unreviewed first, then the newest session first (for the nightly
    steps; pages and the API use ``safety_events``). Each row is the event's label row with ``session_id``, ``session_code``, ``trainee_id``,
    ``held_on``, ``utterance_id``, ``seq``, ``state``, ``window_end`` (seq of the last counselor turn
    in the window), ``answered``, ``answered_by``, ``answered_turn_id``, ``latency``, ``reviewed``, ``reviewed_by`` (and ``reviewer``, their username),
    ``reviewed_at`` and ``note`` (the last four null when unreviewed)."""
    window = settings.SAFETY_RESPONSE_TURNS
    following = _following_counselor_turns("turn__session_id", "turn__seq")
    # The label's id is a subquery of its own (read once per statement), not a join per counselor turn: one
    # probe of the (turn, label) unique index per turn of a window (the join was half of the nightly read).
    risk_assessment = TechniqueLabelDef.objects.filter(code=catalogue.RISK_ASSESSMENT_TECHNIQUE).values("pk")[:1]
    assessed = TurnTechnique.objects.filter(turn_id=OuterRef("pk"), label_id=Subquery(risk_assessment))
    answers = following.filter(Exists(assessed), seq__lte=OuterRef("window_end"))
    review = _review_of_event()
    events = (
        TurnClientState.objects.filter(label__code__in=catalogue.SAFETY_CRITICAL_STATES)
        .annotate(
            session_id=F("turn__session_id"),
            session_code=F("turn__session__code"),
            trainee_id=F("turn__session__trainee_id"),
            held_on=F("turn__session__held_on"),
            utterance_id=F("turn__utterance_id"),
            seq=F("turn__seq"),
            state=F("label__code"),
            window_end=Coalesce(Subquery(following.values("seq")[window - 1 : window]), Value(_END_OF_SESSION)),
            answered=Exists(answers),
            answered_by=Subquery(answers.values("utterance_id")[:1]),
            answered_seq=Subquery(answers.values("seq")[:1]),
            answered_turn_id=Subquery(answers.values("pk")[:1]),
            reviewed=Exists(review),
            reviewed_by=Subquery(review.values("reviewed_by_id")[:1]),
            reviewer=Subquery(review.values("reviewed_by__username")[:1]),
            reviewed_at=Subquery(review.values("reviewed_at")[:1]),
            note=Subquery(review.values("note")[:1]),
        )
        .annotate(
            latency=Subquery(
                _following_counselor_turns("turn__session_id", "turn__seq")
                .filter(seq__lte=OuterRef("answered_seq"))
                .order_by()
                .values("session_id")
                .annotate(n=Count("pk"))
                .values("n"),
                output_field=IntegerField(),
            ),
        )
    )
    if trainee_id is not None:
        events = events.filter(turn__session__trainee_id=trainee_id)
    if session_id is not None:
        events = events.filter(turn__session_id=session_id)
    if answered is not None:
        events = events.filter(answered=answered)
    if reviewed is not None:
        events = events.filter(reviewed=reviewed)
    return events.order_by("answered", *_ORDER_AFTER_ANSWERED)


def safety_event(user, event_id: int) -> TurnClientState | None:
    """One event the user may see, or None (the API answers 404)."""
    if not 0 < event_id < 2**63:  # beyond bigint: no such row, and no database error either
        return None
    return safety_events(user).select_related("turn__session").filter(pk=event_id).first()


@dataclass(frozen=True)
class TurnMarks:
    """What the transcript shows beside a turn: the disclosures on it, and those it answers."""

    disclosures: tuple
    answers: tuple


def transcript_marks(user, session: Session) -> dict[int, TurnMarks]:
    """``{turn id: TurnMarks}`` for the turns of ``session`` that are disclosures or answers (one query)."""
    events = list(safety_events(user, session_id=session.pk))
    disclosures: dict[int, list] = {}
    answers: dict[int, list] = {}
    for event in events:
        disclosures.setdefault(event.turn_id, []).append(event)
        if event.answered:
            answers.setdefault(event.answered_turn_id, []).append(event)
    return {
        turn_id: TurnMarks(tuple(disclosures.get(turn_id, ())), tuple(answers.get(turn_id, ())))
        for turn_id in disclosures.keys() | answers.keys()
    }


def response_window() -> int:
    return settings.SAFETY_RESPONSE_TURNS


def reviews_visible(user) -> QuerySet[SafetyReview]:
    return SafetyReview.objects.filter(trainee_filter(user, "turn__session__trainee")).select_related(
        "turn", "state", "reviewed_by"
    )


@dataclass(frozen=True)
class QueueItem:
    """One event on the "안전 검토" page: the event, the counselor turns of its window, its review history.
    ``suggested``: an event of the label suggester (CONTRACT §9) in a session nobody has labelled — shown
    with the badge 「AI 추정」, never reviewed here (accepting the state on the transcript makes it curated);
    ``turn`` is its client turn (a curated event carries its own)."""

    event: object
    following: tuple[Turn, ...]
    history: tuple
    suggested: bool = False
    turn: Turn | None = None


def event_order(event) -> tuple:
    """``safety_events``' order for a list that mixes curated and suggested events: unanswered, unreviewed,
    newest session, position, state."""
    held_on = event.held_on.toordinal() if event.held_on else -(10**9)
    return (event.answered, event.reviewed, -held_on, -event.session_id, event.seq, event.state)


def queue_events(user, *, answered: bool | None = None, reviewed: bool | None = None) -> QuerySet | list:
    """The events of the "안전 검토" page: ``safety_events`` and, in sessions with no curated client state,
    the label suggester's (CONTRACT §9; supervisors and staff only, never under "reviewed": a suggestion is
    reviewed once accepted, as a curated event), in ``safety_events``' order. A query set while there is no
    suggested event (the paginator then reads one page), else a list."""
    from supervision.suggesting.selectors import suggested_safety_events

    events = safety_events(user, answered=answered, reviewed=reviewed).select_related("turn__session__trainee")
    if reviewed is True:
        return events
    suggested = [e for e in suggested_safety_events(user) if answered is None or e.answered == answered]
    if not suggested:
        return events
    return sorted([*events, *suggested], key=event_order)


def pending_counts(user) -> tuple[int, int]:
    """How many events the "안전 검토" page's default view ("검토 대기") lists for ``user``: curated ones and,
    of them, the label suggester's (``queue_events``)."""
    from supervision.suggesting.selectors import suggested_safety_events

    curated = safety_events(user, answered=False, reviewed=False).count()
    suggested = sum(1 for event in suggested_safety_events(user) if not event.answered)
    return curated + suggested, suggested


def review_queue(user, events: list) -> list[QueueItem]:
    """The page's events (from ``queue_events``) with the counselor turns that followed each (its window: at
    most ``SAFETY_RESPONSE_TURNS``) and each review's history, newest version first — two queries for the
    turns and their labels and one for the histories, whatever the number of events, and one for the client
    turns of suggested events when the page has any."""
    if not events:
        return []
    window = settings.SAFETY_RESPONSE_TURNS
    suggested = {id(e) for e in events if getattr(e, "source", "golden") == "suggested"}
    in_windows = Q(pk__in=[])
    for event in events:
        if id(event) in suggested:  # no window_end computed: the session's later counselor turns, first few kept
            in_windows |= Q(session_id=event.session_id, seq__gt=event.seq)
        else:
            in_windows |= Q(session_id=event.session_id, seq__gt=event.seq, seq__lte=event.window_end)
    turns = list(
        Turn.objects.filter(in_windows, speaker=catalogue.COUNSELOR)
        .prefetch_related(Prefetch("techniques", queryset=TechniqueLabelDef.objects.all(), to_attr="technique_list"))
        .order_by("session_id", "seq")
    )
    pairs = Q(pk__in=[])
    for event in events:
        if event.reviewed and id(event) not in suggested:
            pairs |= Q(turn_id=event.turn_id, state_id=event.label_id)
    history: dict[tuple[int, int], list] = {}
    if any(event.reviewed and id(event) not in suggested for event in events):
        for version in SafetyReview.history.filter(pairs).select_related("history_user").order_by("-history_date"):
            history.setdefault((version.turn_id, version.state_id), []).append(version)
    disclosed: dict[int, Turn] = {}
    if suggested:
        disclosed = Turn.objects.select_related("session__trainee").in_bulk(
            [e.turn_id for e in events if id(e) in suggested]
        )
    items = []
    for event in events:
        if id(event) in suggested:
            later = [t for t in turns if t.session_id == event.session_id and t.seq > event.seq][:window]
            items.append(QueueItem(event, tuple(later), (), suggested=True, turn=disclosed.get(event.turn_id)))
            continue
        items.append(
            QueueItem(
                event=event,
                following=tuple(
                    t for t in turns if t.session_id == event.session_id and event.seq < t.seq <= event.window_end
                ),
                history=tuple(history.get((event.turn_id, event.label_id), ())),
                turn=event.turn,
            )
        )
    return items


def risk_windows(user, *, limit: int = 20) -> list[dict]:
    """Trajectory-audit windows judged harmful in which the client's risk rises past the audit's risk
    threshold (below it on an earlier client turn, at or above it later), newest session first. They come
    from the review aid (an offline heuristic, not a clinical instrument) and are shown as such."""
    threshold = risk_threshold()
    audits = (
        TrajectoryAudit.objects.filter(trainee_filter(user, "session__trainee"), label=TrajectoryLabel.HARMFUL)
        .select_related("session__trainee")
        .only(
            "session__code",
            "session__held_on",
            "session__trainee__username",
            "first_seq",
            "last_seq",
            "explanation",
            "states",
        )
        .order_by(F("session__held_on").desc(nulls_last=True), "-session_id", "window_index")
    )
    found = []
    for audit in audits:
        risks = [(s.get("risk") or 0.0, s.get("utterance_id")) for s in audit.states or ()]
        crossing = next(
            (
                uid
                for i, (risk, uid) in enumerate(risks)
                if risk >= threshold and any(r < threshold for r, _ in risks[:i])
            ),
            None,
        )
        if crossing:
            found.append(
                {"audit": audit, "crossing": crossing, "peak": max(r for r, _ in risks), "threshold": threshold}
            )
            if len(found) >= limit:
                break
    return found


def unanswered_events_with_first_reply(*, session_ids: list[int] | None = None) -> list:
    """The unanswered events (of ``session_ids``, or of every session) in ``events_of_all_trainees``' order,
    as rows of ``turn_id``, ``state``, ``utterance_id`` and ``first_reply_id``: the first counselor turn
    after the disclosure (null at the session's end), where the AI suggestion about the event goes.

    Only these columns are read: the nightly step reads every event of the changed sessions, and the
    answers, latency and review columns of a page cost a correlated subquery each per event."""
    events = events_of_all_trainees().order_by(*_ORDER_AFTER_ANSWERED)  # all unanswered: the first key is moot
    if session_ids is not None:
        events = events.filter(turn__session_id__in=session_ids)
    first_reply = _following_counselor_turns("turn__session_id", "turn__seq").values("pk")[:1]
    rows = events.annotate(first_reply_id=Subquery(first_reply)).values_list(
        "turn_id", "state", "utterance_id", "first_reply_id", "answered_turn_id", named=True
    )
    # Unanswered is "no first answer in the window" (the same answers as ``answered``), kept here rather than
    # filtered in SQL: there ``NOT EXISTS`` became a hash anti-join of each event against every
    # risk-assessment turn of its session, and the few rows it estimated left a nested loop over the
    # sessions — 3× slower on the bench (0.37 s against 0.13 s at 200 sessions × 500 turns).
    return [row for row in rows if row.answered_turn_id is None]
