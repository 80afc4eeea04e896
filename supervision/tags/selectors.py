"""Reads of tendency tags, always through the viewer's role (``supervision.roles``).

A trainee the viewer may not see answers ``Http404``. Observations are internal: only the trainee's
supervisor, staff and superusers see them; for anyone else ``min_status`` is raised to hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, Prefetch, QuerySet
from django.http import Http404

from supervision.roles import sees_everything, supervises, visible_trainees
from supervision.tags import catalogue
from supervision.tags.models import STATUS_RANK, Source, Status, TagContradiction, TagEvidence, TraineeTag

DEFAULT_MIN_STATUS = Status.HYPOTHESIS


def visible_trainee(*, viewer, trainee_id: int):
    """The trainee, if ``viewer`` may see their work; otherwise 404 (never reveal that they exist)."""
    trainee = visible_trainees(viewer).filter(pk=trainee_id).first()
    if trainee is None:
        raise Http404
    return trainee


def sees_observations(*, viewer, trainee_id: int) -> bool:
    return sees_everything(viewer) or supervises(viewer, trainee_id)


def _with_history(queryset: QuerySet) -> QuerySet:
    return queryset.prefetch_related(
        # The session along: pages name evidence by session code and date, never by a database id.
        Prefetch("evidence", queryset=TagEvidence.objects.select_related("session").order_by("at", "id")),
        Prefetch("contradictions", queryset=TagContradiction.objects.select_related("session").order_by("at", "id")),
    )


def _statuses_from(min_status: str) -> list[str]:
    threshold = STATUS_RANK[Status(min_status)]
    return [status for status, rank in STATUS_RANK.items() if rank >= threshold]


def tags_active(*, viewer, trainee_id: int, min_status: str = DEFAULT_MIN_STATUS) -> QuerySet:
    """The trainee's tags at ``min_status`` or above (``get_active_tags`` of the U-tag document)."""
    visible_trainee(viewer=viewer, trainee_id=trainee_id)
    if not sees_observations(viewer=viewer, trainee_id=trainee_id):
        min_status = max(min_status, DEFAULT_MIN_STATUS, key=lambda s: STATUS_RANK[Status(s)])
    queryset = TraineeTag.objects.filter(trainee_id=trainee_id, status__in=_statuses_from(min_status))
    return _with_history(queryset.order_by("tag"))


def tag_with_history(tag_pk: int) -> TraineeTag:
    """One tag with its evidence and contradictions, for the answer to a write the caller was allowed."""
    return _with_history(TraineeTag.objects.filter(pk=tag_pk)).get()


def tags_conflicted(*, viewer, trainee_id: int) -> QuerySet:
    """Declared tags with contradictions (``get_conflicted_tags``): where words and sessions differ.

    Whatever their status: the U-tag document's ``get_conflicted_tags`` has no status filter, and a declared
    tag is the trainee's own word, so it is never hidden from them as an observation is."""
    visible_trainee(viewer=viewer, trainee_id=trainee_id)
    contradicted = TagContradiction.objects.filter(trainee_tag=OuterRef("pk"))
    queryset = TraineeTag.objects.filter(trainee_id=trainee_id, source=Source.DECLARED).filter(Exists(contradicted))
    return _with_history(queryset.order_by("tag"))


@dataclass
class Perspective:
    """One declared focus next to what the sessions showed about the same category."""

    declared: TraineeTag
    observed: list[TraineeTag] = field(default_factory=list)

    @property
    def ko(self) -> str:
        return self.declared.definition.ko


@dataclass
class Perspectives:
    pairs: list[Perspective]
    observed_only: list[TraineeTag]

    @property
    def empty(self) -> bool:
        return not self.pairs and not self.observed_only


def tags_perspectives(*, viewer, trainee_id: int) -> Perspectives:
    """The trainee's visible tags arranged as two perspectives (declared focus | what sessions showed).

    A trainee sees their own declarations from the first one on: their own words are not an internal
    observation, so the status threshold applies to observed tags only."""
    tags = list(tags_active(viewer=viewer, trainee_id=trainee_id, min_status=Status.OBSERVATION))
    if viewer.pk == trainee_id:
        own = TraineeTag.objects.filter(trainee_id=trainee_id, source=Source.DECLARED).order_by("tag")
        tags = [t for t in tags if t.source != Source.DECLARED] + list(_with_history(own))
    declared = [t for t in tags if t.source == Source.DECLARED]
    observed = [t for t in tags if t.source == Source.OBSERVED]
    pairs = [Perspective(d, [o for o in observed if o.definition.category == d.definition.category]) for d in declared]
    paired = {o.pk for p in pairs for o in p.observed}
    return Perspectives(pairs=pairs, observed_only=[o for o in observed if o.pk not in paired])


def declarable_tags() -> list[catalogue.TagDef]:
    return [t for t in catalogue.TAGS if t.source == catalogue.DECLARED]
