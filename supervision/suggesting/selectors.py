"""Reads of the suggester's output for pages, audits and the safety check.

"Open" suggestions are what a supervisor still has to decide: the labels the current model version
suggested for a turn that are neither golden already nor dismissed. What the audit reads for an unlabelled
session are the suggested labels it trusts (``labels_for_audit``) minus the dismissed ones (nothing is golden
there); the safety check reads every suggested safety state (``suggested_safety_events``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, Q, Subquery

from supervision.agreement.models import AnnotationRun, RaterKind, RunTurn
from supervision.models import Session, Turn, TurnClientState, TurnTechnique

from .engine.model import labels_for_audit
from .loading import current_model
from .models import SuggestionDismissal


@dataclass
class TurnSuggestion:
    run: AnnotationRun
    labels: list[str]  # open: suggested, not golden, not dismissed (model order)
    scores: dict[str, float]  # the probability of each label the model suggested
    suggested: list[str] = field(default_factory=list)  # all the model suggested
    dismissed: list[str] = field(default_factory=list)


def current_run() -> AnnotationRun | None:
    """The run of the model version this process serves, ``None`` without a usable model or before its
    first suggestion."""
    model = current_model()
    if model is None:
        return None
    return AnnotationRun.objects.filter(rater=model.version, kind=RaterKind.AI).order_by("id").first()


def _golden(turn_ids: Collection[int]) -> dict[int, set[str]]:
    golden: dict[int, set[str]] = defaultdict(set)
    for link in (TurnTechnique, TurnClientState):
        for turn_id, code in link.objects.filter(turn_id__in=turn_ids).values_list("turn_id", "label__code"):
            golden[turn_id].add(code)
    return golden


def open_suggestions(turn_ids: Collection[int], run: AnnotationRun | None = None) -> dict[int, TurnSuggestion]:
    """Per turn of ``turn_ids`` that the current model version rated: its suggestion (three queries)."""
    run = run or current_run()
    if run is None or not turn_ids:
        return {}
    turn_ids = sorted(turn_ids)
    rows = RunTurn.objects.filter(run=run, turn_id__in=turn_ids).values_list(
        "turn_id", "techniques", "client_states", "scores"
    )
    dismissed: dict[int, set[str]] = defaultdict(set)
    for turn_id, label in SuggestionDismissal.objects.filter(run=run, turn_id__in=turn_ids).values_list(
        "turn_id", "label"
    ):
        dismissed[turn_id].add(label)
    golden = _golden(turn_ids)
    found = {}
    for turn_id, techniques, client_states, scores in rows:
        suggested = list(techniques if techniques is not None else client_states or [])
        gone = dismissed.get(turn_id, set())
        have = golden.get(turn_id, set())
        found[turn_id] = TurnSuggestion(
            run=run,
            labels=[code for code in suggested if code not in gone and code not in have],
            scores=scores or {},
            suggested=suggested,
            dismissed=sorted(gone),
        )
    return found


def labels_for_audit_of(session_ids: Collection[int], run: AnnotationRun | None = None) -> dict[str, list[str]]:
    """Per turn of the sessions, by utterance id (the trajectory audit reads turns by it): the suggested labels
    the audit reads where nobody has labelled the session — those the model gives even odds or more
    (``labels_for_audit``), less what supervisors dismissed."""
    run = run or current_run()
    if run is None or not session_ids:
        return {}
    rows = RunTurn.objects.filter(run=run, turn__session_id__in=sorted(session_ids)).values_list(
        "turn_id", "turn__utterance_id", "techniques", "client_states", "scores"
    )
    dismissed: dict[int, set[str]] = defaultdict(set)
    for turn_id, label in SuggestionDismissal.objects.filter(
        run=run, turn__session_id__in=sorted(session_ids)
    ).values_list("turn_id", "label"):
        dismissed[turn_id].add(label)
    return {
        utterance_id: [
            code
            for code in labels_for_audit(techniques if techniques is not None else client_states or [], scores or {})
            if code not in dismissed[turn_id]
        ]
        for turn_id, utterance_id, techniques, client_states, scores in rows
    }


def unlabelled_sessions_q() -> Q:
    """Sessions none of whose turns carries a curated technique or client state."""
    techniques = TurnTechnique.objects.filter(turn__session=OuterRef("pk"))
    states = TurnClientState.objects.filter(turn__session=OuterRef("pk"))
    return ~Q(Exists(techniques)) & ~Q(Exists(states))


def suggested_only_sessions(queryset=None):
    """Sessions with no curated label that the current model version has suggested for
    (the admin's 「라벨 없음 — AI 추정만」)."""
    queryset = queryset if queryset is not None else Session.objects.all()
    run = current_run()
    if run is None:
        return queryset.none()
    suggested = RunTurn.objects.filter(run=run, turn__session=OuterRef("pk"))
    return queryset.filter(unlabelled_sessions_q()).filter(Exists(suggested))


def sessions_without_suggestions() -> list[int]:
    """The sessions the model version this process serves has not rated, in id order: those imported before
    it was deployed (a new version starts a new run), none otherwise; none without a usable model.

    An import and ``suggestions_refresh`` rate a session's turns all together, so a session's first turn
    stands for it: one index probe a session (the nightly job's bar allows no scan of every turn; an
    anti-join of the turns with the run's rows took 58 ms per 20,000 turns)."""
    if current_model() is None:
        return []
    first_turn = Turn.objects.filter(session=OuterRef("pk")).order_by("seq").values("pk")[:1]
    sessions = Session.objects.annotate(first_turn=Subquery(first_turn)).filter(first_turn__isnull=False)
    run = current_run()  # None: the version has suggested nothing yet
    if run is not None:
        sessions = sessions.exclude(Exists(RunTurn.objects.filter(run=run, turn_id=OuterRef("first_turn"))))
    return list(sessions.order_by("pk").values_list("pk", flat=True))


def turns_without_suggestion(session_ids: Collection[int]) -> int:
    """How many turns of the sessions the current model version has not rated (0 after an import)."""
    run = current_run()
    if run is None:
        return Turn.objects.filter(session_id__in=session_ids).count()
    rated = RunTurn.objects.filter(run=run, turn=OuterRef("pk"))
    return Turn.objects.filter(session_id__in=session_ids).exclude(Exists(rated)).count()


@dataclass
class SuggestedSafetyEvent:
    """A safety event the suggester found (CONTRACT §9) in a session with no curated client-state label:
    the §8 fields with ``source`` "suggested". Its ``id`` is negative (no curated event has it) and it
    cannot be reviewed: a supervisor accepts the suggested state first, and it becomes a curated event."""

    id: int
    session_id: int
    session_code: str
    trainee_id: int | None
    held_on: object
    turn_id: int
    utterance_id: str
    seq: int
    state: str
    answered: bool = False
    answered_by: str | None = None
    latency: int | None = None
    reviewed: bool = False
    reviewed_by: int | None = None
    reviewed_at: object = None
    note: str | None = None
    source: str = "suggested"


def suggested_safety_events(user, *, trainee_id: int | None = None) -> list[SuggestedSafetyEvent]:
    """Every suggested safety event in the sessions ``user`` may see: client turns whose suggestion (less
    dismissals) holds a safety-critical state, in sessions none of whose turns has a curated client state.
    Answered as in §8 when one of the next ``SAFETY_RESPONSE_TURNS`` counselor turns is labelled or
    suggested ``risk_assessment``. A few queries, whatever the number of sessions. Supervisors and staff
    only: a trainee never sees raw suggestions."""
    from django.conf import settings

    from supervision.roles import is_supervisor, sees_everything, trainee_filter
    from taxonomy import catalogue

    run = current_run()
    if run is None or not (sees_everything(user) or is_supervisor(user)):
        return []  # trainees never see raw suggestions
    curated_states = TurnClientState.objects.filter(turn__session=OuterRef("turn__session"))
    hits = (
        RunTurn.objects.filter(run=run, turn__speaker=catalogue.CLIENT)
        .filter(_holding(catalogue.SAFETY_CRITICAL_STATES, "client_states"))
        .filter(trainee_filter(user, "turn__session__trainee"))
        .exclude(Exists(curated_states))
    )
    if trainee_id is not None:
        hits = hits.filter(turn__session__trainee_id=trainee_id)
    rows = [
        row
        for row in hits.values_list(
            "pk",
            "turn_id",
            "client_states",
            "turn__session_id",
            "turn__session__code",
            "turn__session__trainee_id",
            "turn__session__held_on",
            "turn__utterance_id",
            "turn__seq",
        )
        if catalogue.SAFETY_CRITICAL_STATES & set(row[2] or ())  # SQLite: the filter above is Python's
    ]
    if not rows:
        return []
    session_ids = sorted({row[3] for row in rows})
    dismissed = set(
        SuggestionDismissal.objects.filter(run=run, turn__session_id__in=session_ids).values_list("turn_id", "label")
    )
    counselor = list(
        Turn.objects.filter(session_id__in=session_ids, speaker=catalogue.COUNSELOR)
        .order_by("session_id", "seq")
        .values_list("pk", "session_id", "seq", "utterance_id")
    )
    risk = catalogue.RISK_ASSESSMENT_TECHNIQUE
    assessed = set(
        TurnTechnique.objects.filter(turn__session_id__in=session_ids, label__code=risk).values_list(
            "turn_id", flat=True
        )
    )
    assessed |= {
        turn_id
        for turn_id, techniques in RunTurn.objects.filter(run=run, turn__session_id__in=session_ids)
        .filter(_holding({risk}, "techniques"))
        .values_list("turn_id", "techniques")
        if risk in (techniques or ()) and (turn_id, risk) not in dismissed
    }
    following: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for pk, session_id, seq, utterance_id in counselor:
        following[session_id].append((seq, pk, utterance_id))
    window = settings.SAFETY_RESPONSE_TURNS
    events = []
    for pk, turn_id, states, session_id, code, trainee, held_on, utterance_id, seq in rows:
        after = [item for item in following[session_id] if item[0] > seq][:window]
        answer = next(((n, item) for n, item in enumerate(after, start=1) if item[1] in assessed), None)
        for index, state in enumerate(catalogue.CLIENT_STATE_CODES):
            if state not in catalogue.SAFETY_CRITICAL_STATES or state not in (states or []):
                continue
            if (turn_id, state) in dismissed:
                continue
            events.append(
                SuggestedSafetyEvent(
                    id=-(pk * 100 + index),
                    session_id=session_id,
                    session_code=code,
                    trainee_id=trainee,
                    held_on=held_on,
                    turn_id=turn_id,
                    utterance_id=utterance_id,
                    seq=seq,
                    state=state,
                    answered=answer is not None,
                    answered_by=answer[1][2] if answer else None,
                    latency=answer[0] if answer else None,
                )
            )
    return events


def _holding(codes, field: str) -> Q:
    """Rows whose list ``field`` holds one of ``codes``: a jsonb containment test on PostgreSQL (its GIN-free
    scan stays in the database); other databases have no such lookup, and the caller filters in Python."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return Q(**{f"{field}__isnull": False})
    found = Q()
    for code in sorted(codes):
        found |= Q(**{f"{field}__contains": [code]})
    return found
