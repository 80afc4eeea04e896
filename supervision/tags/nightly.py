"""The tags step of the nightly review: gauge snapshots become evidence, then due hypotheses are verified."""

from __future__ import annotations

import datetime

from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.tags.services import tags_nightly_check, tags_record_gauge_evidence


def tags_nightly(*, day: datetime.date) -> dict:
    """Feeds every per-session snapshot computed for ``day`` to the tag lifecycle (idempotent: evidence is
    unique per tag, session and event), then runs the verification check as of the end of ``day``."""
    totals = {"evidence": 0, "contradictions": 0}
    snapshots = GaugeSnapshot.objects.filter(date=day, session__isnull=False).order_by("trainee_id", "session_id")
    for snapshot in snapshots.iterator(chunk_size=500):
        counts = tags_record_gauge_evidence(
            trainee_id=snapshot.trainee_id,
            session_id=snapshot.session_id,
            snapshot=GaugeSnapshotSerializer(snapshot).data,
            day=day,
        )
        for key in totals:
            totals[key] += counts.get(key, 0)
    return {**totals, "verification": tags_nightly_check(day=day)}
