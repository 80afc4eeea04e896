"""Reads of review-gauge snapshots, narrowed to what the user may see."""

from __future__ import annotations

from django.db.models import F, QuerySet

from supervision.gauge.models import GaugeSnapshot
from supervision.roles import trainee_filter


def snapshots_visible_to(user) -> QuerySet[GaugeSnapshot]:
    """Newest first; on a day the trainee-wide snapshot comes before the per-session ones."""
    snapshots = GaugeSnapshot.objects.filter(trainee_filter(user)).select_related("trainee")
    return snapshots.order_by("-date", "trainee_id", F("session_id").asc(nulls_first=True), "id")
