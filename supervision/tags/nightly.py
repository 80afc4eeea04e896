"""The tags step of the nightly review: gauge snapshots become evidence, then due hypotheses are verified."""

from __future__ import annotations

import datetime

from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.models import SupervisorComment
from supervision.tags.catalogue import overuses, underuses
from supervision.tags.models import Origin
from supervision.tags.services import run_moment, tag_evidence_add, tags_nightly_check, tags_record_gauge_evidence
from taxonomy import catalogue


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
    totals["evidence"] += tags_record_critique_evidence(day=day)
    return {**totals, "verification": tags_nightly_check(day=day)}


def tags_record_critique_evidence(*, day: datetime.date) -> int:
    """Accepted critiques whose intent deviation names an expected and an actual technique from different
    categories are evidence that the trainee under-uses the expected category and over-uses the actual one
    (e.g. expected cognitive_restructuring, actual validation → underuses_intervention, overuses_relational).

    Scope: the sessions gauged for ``day``. Idempotent: the event text is derived from the critique itself,
    and evidence is unique per tag, session and event. Returns the number of new pieces.
    """
    session_ids = GaugeSnapshot.objects.filter(date=day, session__isnull=False).values("session_id")
    critiques = (
        SupervisorComment.objects.accepted_critiques()
        .filter(
            turn__session__in=session_ids,
            intent_deviation__has_keys=["expected", "actual"],
        )
        .values_list("id", "turn__session_id", "turn__session__trainee_id", "turn__utterance_id", "intent_deviation")
        .order_by("id")
    )
    at = run_moment(day)
    created = 0
    for comment_id, session_id, trainee_id, utterance_id, deviation in critiques:
        expected = catalogue.TECHNIQUES_BY_CODE.get(deviation.get("expected", ""))
        actual = catalogue.TECHNIQUES_BY_CODE.get(deviation.get("actual", ""))
        if expected is None or actual is None or expected.category == actual.category:
            continue
        event = f"{utterance_id} 논평: 권장 {expected.ko}({expected.code}) 대신 {actual.ko}({actual.code})"
        for tag in (underuses(expected.category), overuses(actual.category)):
            created += tag_evidence_add(
                trainee_id=trainee_id,
                tag=tag,
                event=event,
                session_id=session_id,
                origin=Origin.SUPERVISOR,
                detail={"comment": comment_id},
                at=at,
            ).created
    return created
