"""Reads for the agreement figures: the golden labels and saved runs as ``Ratings``, narrowed to the turns
the viewer may see (``user=None``: the command line, which sees everything)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import BigIntegerField, Count, IntegerField, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Cast, Coalesce

from supervision.exporting import links_of_sessions
from supervision.gauge.models import SessionRevision
from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.roles import sees_everything, trainee_filter
from taxonomy import catalogue

from .models import AdjudicationDecision, AnnotationRun, RunTurn
from .scoring import NO_ACT, Ratings

RUN_SESSIONS_CACHE_SECONDS = 7 * 24 * 3600


@dataclass
class TurnTable:
    """The stored turns of some sessions, by id: what validation and the figures need to know of them."""

    names: dict[int, str] = field(default_factory=dict)  # utterance id
    order: dict[int, tuple[str, int]] = field(default_factory=dict)  # (session code, seq)
    sessions: dict[int, int] = field(default_factory=dict)
    speakers: dict[int, str] = field(default_factory=dict)
    stages: dict[int, str] = field(default_factory=dict)
    acts: dict[int, str | None] = field(default_factory=dict)
    by_name: dict[str, int] = field(default_factory=dict)

    def of_sessions(self, session_ids: Collection[int]) -> TurnTable:
        """The same table narrowed to the turns of these sessions."""
        keep = {pk for pk, session in self.sessions.items() if session in session_ids}
        narrowed = TurnTable()
        for name in ("names", "order", "sessions", "speakers", "stages", "acts"):
            column = getattr(self, name)
            setattr(narrowed, name, {pk: column[pk] for pk in keep if pk in column})
        narrowed.by_name = {name: pk for name, pk in self.by_name.items() if pk in keep}
        return narrowed


@dataclass(frozen=True)
class QueueTurn:
    """What the adjudication queue shows of a turn beside a difference, and whose it is."""

    trainee_id: int | None
    session_id: int
    seq: int
    text: str


def queue_turns(turn_ids: Collection[int]) -> dict[int, QueueTurn]:
    """One query: the turns of a run's differences (already narrowed to the viewer's trainees)."""
    rows = Turn.objects.filter(pk__in=sorted(turn_ids)).values_list(
        "pk", "session__trainee_id", "session_id", "seq", "text"
    )
    return {pk: QueueTurn(trainee_id, session_id, seq, text or "") for pk, trainee_id, session_id, seq, text in rows}


# Kept for readers of the figures: the part of the table that names and orders turns.
TurnIndex = TurnTable


def turn_scope(user) -> Q:
    """Turns of the trainees ``user`` may see (all of them for the command line)."""
    if user is None:
        return Q()
    return trainee_filter(user, "session__trainee")


def session_turns(*, codes: Collection[str] = (), session_ids: Collection[int] = (), user=None) -> TurnTable:
    """One query: the turns of the sessions named by code or id that ``user`` may see."""
    table = TurnTable()
    where = Q(session__code__in=sorted(codes)) if codes else Q(session_id__in=sorted(session_ids))
    # order_by(): nothing reads the table in transcript order (``order`` is there for that), and PostgreSQL
    # sorted a 100,000-turn read on disk for the turns' default ordering (0.11 of its 0.34 s, EXPLAIN ANALYZE).
    rows = (
        Turn.objects.filter(turn_scope(user), where)
        .order_by()
        .values_list("pk", "utterance_id", "session__code", "seq", "speaker", "stage_id", "dialog_act", "session_id")
    )
    for pk, utterance_id, code, seq, speaker, stage, act, session_id in rows:
        table.names[pk] = utterance_id
        table.by_name[utterance_id] = pk
        table.order[pk] = (code, seq)
        table.sessions[pk] = session_id
        table.speakers[pk] = speaker
        table.stages[pk] = stage
        table.acts[pk] = act
    return table


def golden_ratings(
    session_ids: Collection[int], user=None, *, turns: TurnTable | None = None
) -> tuple[Ratings, TurnTable]:
    """The golden labels of every turn of these sessions the user may see: three queries (two when
    ``turns``, the same sessions' turns read for everyone, is at hand).

    The golden set rates every axis of its speaker on every turn (an empty list is "none of these"). Equal
    label sets are one shared frozenset, as a run's answers are (``run_ratings``): the figures count the
    distinct (golden, rater) answer pairs, and shared sets compare by identity (agreement() 0.14 → 0.11 s
    CPU for 100,000 turns).
    """
    table = turns if turns is not None and user is None else session_turns(session_ids=session_ids, user=user)
    ratings = Ratings(stage=dict(table.stages))
    none = frozenset()
    for pk, act in table.acts.items():
        ratings.dialog_act[pk] = act or NO_ACT
        if table.speakers[pk] == catalogue.COUNSELOR:
            ratings.techniques[pk] = none
        else:
            ratings.client_states[pk] = none
    # The links of the sessions with a turn in view only (a supervisor's trainees, not the whole run), found
    # through the turn index (links_of_sessions): read through a join, the planner scanned both link tables
    # whole, 0.42 of 1.2 s for a 100,000-turn run in a database of 600,000 turns (make bench-agreement).
    in_view = sorted(set(table.sessions.values()))
    for model, axis in ((TurnTechnique, ratings.techniques), (TurnClientState, ratings.client_states)):
        codes: dict[int, list[str]] = {}
        links = model.objects.filter(links_of_sessions(model, in_view)).order_by()  # sets: any order
        for turn_id, code in links.values_list("turn_id", "label__code"):
            codes.setdefault(turn_id, []).append(code)
        shared: dict[tuple[str, ...], frozenset[str]] = {}
        for turn_id, labels in codes.items():
            if turn_id in axis:  # in scope and on the speaker's axis
                key = tuple(sorted(labels))
                if key not in shared:
                    shared[key] = frozenset(key)
                axis[turn_id] = shared[key]
    return ratings, table


def _run_sessions_key(run: AnnotationRun) -> str:
    return f"agreement:run-sessions:{run.cache_name}"


def run_sessions_forget(run: AnnotationRun) -> None:
    """For a run that grows after it was saved (the portal's own suggester adds each import's turns to the
    run of its model version): its kept list of sessions is read again."""
    cache.delete(_run_sessions_key(run))


def run_session_ids(run: AnnotationRun) -> set[int]:
    """The sessions a saved run rated. Kept in the cache: a run's turns are fixed when it is saved and can only
    go with their session, and a session that is gone has no turns left to read (0.12 s a read for a run of
    100,000 turns, several times a report page)."""
    key = _run_sessions_key(run)
    sessions = cache.get(key)
    if sessions is None:
        # order_by(): the models' default orderings (run by date, turn by session code and seq) would join two
        # more tables and make DISTINCT keep every turn (100,000 turns: 0.32 s, 0.10 s without; median of 5).
        rows = RunTurn.objects.filter(run=run).order_by().values_list("turn__session_id", flat=True).distinct()
        sessions = set(rows)
        cache.set(key, sessions, RUN_SESSIONS_CACHE_SECONDS)
    return sessions


def sessions_in_view(session_ids: Collection[int], user=None) -> dict[int, tuple[str, int]]:
    """Of these sessions, those that still exist and ``user`` may see, each with its code and revision mark
    (``gauge.SessionRevision``, 0 where none), in one query. The mark changes whenever a turn or label link
    of the session is written, whoever writes it (PostgreSQL triggers; elsewhere it is always 0)."""
    mark = SessionRevision.objects.filter(session_id=OuterRef("pk")).values("revision")[:1]
    rows = (
        Session.objects.filter(trainee_filter(user, "trainee") if user is not None else Q(), pk__in=sorted(session_ids))
        .annotate(mark=Coalesce(Subquery(mark, output_field=BigIntegerField()), Value(0)))
        .order_by()
        .values_list("pk", "code", "mark")
    )
    return {pk: (code, mark) for pk, code, mark in rows}


def run_ratings(
    run: AnnotationRun,
    user=None,
    *,
    turn_ids: Collection[int] | None = None,
    session_ids: Collection[int] | None = None,
) -> Ratings:
    """A saved run's answers on the turns the user may see (one query); only ``turn_ids`` or the turns of
    ``session_ids`` when given."""
    ratings = Ratings()
    rows = RunTurn.objects.filter(run=run).order_by("turn_id")
    if user is not None and not sees_everything(user):
        rows = rows.filter(_run_turn_scope(user))
    if turn_ids is not None:
        rows = rows.filter(turn_id__in=sorted(turn_ids))
    if session_ids is not None:
        rows = rows.filter(turn__session_id__in=sorted(session_ids))
    # The label lists as JSON text, each distinct text decoded once: a run repeats a few hundred answers over
    # its 100,000 turns, and the JSON field decoding every one was a third of this read (profiled).
    answers = _AnswerCache()
    for turn_id, techniques, states, stage, act_rated, act in rows.values_list(
        "turn_id",
        Cast("techniques", TextField()),
        Cast("client_states", TextField()),
        "stage_id",
        "dialog_act_rated",
        "dialog_act",
    ).iterator(chunk_size=10_000):
        if techniques is not None:
            ratings.techniques[turn_id] = answers[techniques]
        if states is not None:
            ratings.client_states[turn_id] = answers[states]
        if stage is not None:
            ratings.stage[turn_id] = stage
        if act_rated:
            ratings.dialog_act[turn_id] = act or NO_ACT
    return ratings


class _AnswerCache(dict):
    """JSON text of a label list → its labels as one shared frozenset."""

    def __missing__(self, text: str) -> frozenset:
        self[text] = labels = frozenset(json.loads(text))
        return labels


def _run_turn_scope(user) -> Q:
    return trainee_filter(user, "turn__session__trainee")


def latest_run(rater: str) -> AnnotationRun | None:
    return AnnotationRun.objects.filter(rater=rater).order_by("-created_at", "-id").first()


def _visible_turn_count(user) -> Coalesce:
    rows = RunTurn.objects.filter(run_id=OuterRef("pk"))
    if user is not None and not sees_everything(user):
        rows = rows.filter(_run_turn_scope(user))
    counted = rows.order_by().values("run_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def runs_visible(user) -> QuerySet[AnnotationRun]:
    """Runs with their count of turns the user may see; a supervisor sees the runs that rated any turn of
    their trainees (and only those turns count)."""
    runs = AnnotationRun.objects.select_related("uploaded_by").annotate(turn_count=_visible_turn_count(user))
    if user is not None and not sees_everything(user):
        runs = runs.filter(turn_count__gt=0)
    return runs.order_by("-created_at", "-id")


def rater_versions(run: AnnotationRun, user=None) -> QuerySet[AnnotationRun]:
    """The same rater's runs, oldest first: the trend of its versions."""
    return runs_visible(user).filter(rater=run.rater).order_by("created_at", "id")


def latest_runs_per_rater(user=None) -> list[AnnotationRun]:
    """The newest run of each rater: the sources of Krippendorff's α next to the golden set."""
    latest: dict[str, AnnotationRun] = {}
    for run in runs_visible(user):
        latest.setdefault(run.rater, run)
    return list(latest.values())


def decided_keys(run: AnnotationRun) -> set[tuple[int, str, str]]:
    return set(AdjudicationDecision.objects.filter(run=run).values_list("turn_id", "axis", "label"))


def decisions(run: AnnotationRun, user=None) -> QuerySet[AdjudicationDecision]:
    rows = AdjudicationDecision.objects.filter(run=run).select_related("turn", "decided_by")
    if user is not None:
        rows = rows.filter(_run_turn_scope(user))
    return rows


def decisions_visible(user) -> QuerySet[AdjudicationDecision]:
    return AdjudicationDecision.objects.filter(_run_turn_scope(user))
