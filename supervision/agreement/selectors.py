"""Reads for the agreement figures: the golden labels and saved runs as ``Ratings``, narrowed to the turns
the viewer may see (``user=None``: the command line, which sees everything)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from supervision.models import Turn, TurnClientState, TurnTechnique
from supervision.roles import sees_everything, trainee_filter
from taxonomy import catalogue

from .models import AdjudicationDecision, AnnotationRun, RunTurn
from .scoring import NO_ACT, Ratings


@dataclass
class TurnIndex:
    """What the figures need to name and order turns: utterance id, (session code, seq), trainee."""

    names: dict[int, str] = field(default_factory=dict)
    order: dict[int, tuple[str, int]] = field(default_factory=dict)
    sessions: dict[int, int] = field(default_factory=dict)


def turn_scope(user) -> Q:
    """Turns of the trainees ``user`` may see (all of them for the command line)."""
    if user is None:
        return Q()
    return trainee_filter(user, "session__trainee")


def golden_ratings(session_ids: Collection[int], user=None) -> tuple[Ratings, TurnIndex]:
    """The golden labels of every turn of these sessions the user may see: three queries.

    The golden set rates every axis of its speaker on every turn (an empty list is "none of these").
    """
    ratings, index = Ratings(), TurnIndex()
    turns = Turn.objects.filter(turn_scope(user), session_id__in=list(session_ids)).values_list(
        "pk", "utterance_id", "session__code", "seq", "speaker", "stage_id", "dialog_act", "session_id"
    )
    for pk, utterance_id, code, seq, speaker, stage, act, session_id in turns.iterator(chunk_size=10_000):
        index.names[pk] = utterance_id
        index.order[pk] = (code, seq)
        index.sessions[pk] = session_id
        ratings.stage[pk] = stage
        ratings.dialog_act[pk] = act or NO_ACT
        if speaker == catalogue.COUNSELOR:
            ratings.techniques[pk] = frozenset()
        else:
            ratings.client_states[pk] = frozenset()
    for model, axis in ((TurnTechnique, ratings.techniques), (TurnClientState, ratings.client_states)):
        codes: dict[int, list[str]] = {}
        links = model.objects.filter(turn__session_id__in=list(session_ids)).values_list("turn_id", "label__code")
        for turn_id, code in links.iterator(chunk_size=10_000):
            codes.setdefault(turn_id, []).append(code)
        for turn_id, labels in codes.items():
            if turn_id in axis:  # in scope and on the speaker's axis
                axis[turn_id] = frozenset(labels)
    return ratings, index


def run_session_ids(run: AnnotationRun) -> set[int]:
    return set(
        Turn.objects.filter(pk__in=RunTurn.objects.filter(run=run).values("turn_id"))
        .values_list("session_id", flat=True)
        .distinct()
    )


def run_ratings(run: AnnotationRun, user=None) -> Ratings:
    """A saved run's answers on the turns the user may see (one query)."""
    ratings = Ratings()
    rows = RunTurn.objects.filter(run=run)
    if user is not None and not sees_everything(user):
        rows = rows.filter(_run_turn_scope(user))
    for turn_id, techniques, states, stage, act_rated, act in rows.values_list(
        "turn_id", "techniques", "client_states", "stage_id", "dialog_act_rated", "dialog_act"
    ).iterator(chunk_size=10_000):
        if techniques is not None:
            ratings.techniques[turn_id] = frozenset(techniques)
        if states is not None:
            ratings.client_states[turn_id] = frozenset(states)
        if stage is not None:
            ratings.stage[turn_id] = stage
        if act_rated:
            ratings.dialog_act[turn_id] = act or NO_ACT
    return ratings


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
