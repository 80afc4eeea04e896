"""Reads of review-gauge snapshots, narrowed to what the user may see."""

from __future__ import annotations

from django.db.models import F, QuerySet

from supervision.gauge.models import GaugeSnapshot
from supervision.roles import trainee_filter


def snapshots_visible_to(user, *, trainee_id: int | None = None) -> QuerySet[GaugeSnapshot]:
    """Newest first; on a day the trainee-wide snapshot comes before the per-session ones."""
    snapshots = GaugeSnapshot.objects.filter(trainee_filter(user))
    if trainee_id is not None:
        snapshots = snapshots.filter(trainee_id=trainee_id)
    return snapshots.order_by("-date", "trainee_id", F("session_id").asc(nulls_first=True), "id")
