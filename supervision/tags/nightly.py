"""The tags step of the nightly review: gauge snapshots and accepted critiques become evidence, then due
hypotheses are verified.

Only what is new is read. ``FedSession`` keeps, per session, what the step last read: the snapshot's
``figures_digest`` (equal digests mean equal figures), the revision of the session's rows (the gauge's
revision marks, kept by PostgreSQL triggers: a critique written or accepted changes it) and a digest of the
trainee's tag names. A night reads

1. the evidence of the sessions whose snapshot figures or rows changed (and their accepted critiques),
2. then the contradictions of those sessions and of every session of a trainee whose set of tags changed
   since the session was last read (a contradiction is recorded only against a tag that exists, so a tag
   created tonight, by the evidence or through the API, is checked against the trainee's other sessions).

All evidence is recorded before any contradiction, so the result does not depend on the order of the
snapshots, and equals a full recompute (``full=True``: every snapshot of the day).
"""

from __future__ import annotations

import datetime
import itertools

from django.db import connection, transaction

from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.models import SupervisorComment
from supervision.tags.catalogue import overuses, underuses
from supervision.tags.models import FedSession, Origin, TraineeTag
from supervision.tags.services import run_moment, tag_evidence_add, tags_nightly_check, tags_record_gauge_evidence
from taxonomy import catalogue

# Per-session snapshots of the day with what the step last read of them, and the revision and tag set now.
_SNAPSHOTS_SQL = f"""
WITH tag_sets AS (
    SELECT trainee_id, md5(string_agg(tag, ',' ORDER BY tag)) AS digest
    FROM {TraineeTag._meta.db_table} GROUP BY trainee_id
)
SELECT g.id, g.session_id, g.trainee_id, g.figures_digest, COALESCE(r.revision, 0), COALESCE(t.digest, ''),
       m.figures_digest, m.revision, m.tags_digest
FROM {GaugeSnapshot._meta.db_table} g
LEFT JOIN gauge_session_revision r ON r.session_id = g.session_id
LEFT JOIN tag_sets t ON t.trainee_id = g.trainee_id
LEFT JOIN {FedSession._meta.db_table} m ON m.session_id = g.session_id
WHERE g.date = %(day)s AND g.session_id IS NOT NULL AND ({{due}})
ORDER BY g.trainee_id, g.session_id
"""
_CHANGED = "m.session_id IS NULL OR m.figures_digest <> g.figures_digest OR m.revision < COALESCE(r.revision, 0)"
_TAGS_CHANGED = f"{_CHANGED} OR m.tags_digest <> COALESCE(t.digest, '')"


def _snapshot_rows(day: datetime.date, due: str) -> list[tuple]:
    if connection.vendor != "postgresql":
        # No revision marks or tag digests off PostgreSQL (the embedded SQLite of `make run`): every
        # per-session snapshot of the day, in the same shape and order, as a full recompute reads them.
        snapshots = GaugeSnapshot.objects.filter(date=day, session__isnull=False).order_by("trainee_id", "session_id")
        return [
            (pk, session_id, trainee_id, digest, 0, "", None, None, None)
            for pk, session_id, trainee_id, digest in snapshots.values_list(
                "pk", "session_id", "trainee_id", "figures_digest"
            )
        ]
    with connection.cursor() as cursor:
        cursor.execute(_SNAPSHOTS_SQL.format(due=due), {"day": day})
        return cursor.fetchall()


def tags_nightly(*, day: datetime.date, full: bool = False) -> dict:
    """Feeds the per-session snapshots computed for ``day`` that are new to the tag lifecycle (all of them
    with ``full``; idempotent either way: evidence is unique per tag, session and event), then runs the
    verification check as of the end of ``day``. Counts what it read (``snapshots``, ``critiques``,
    ``contradiction_checks``) and what it newly recorded (``evidence``, ``contradictions``)."""
    full = full or connection.vendor != "postgresql"  # revision marks and tag digests are PostgreSQL's
    changed = _snapshot_rows(day, "true" if full else _CHANGED)
    serialized: dict[int, dict] = {}

    def feed(rows: list[tuple], record: str) -> dict[str, int]:
        counts = {"evidence": 0, "contradictions": 0}
        snapshots = GaugeSnapshot.objects.in_bulk([row[0] for row in rows])
        # One transaction per trainee (rows come ordered by trainee): a commit per snapshot cost more than
        # the snapshot's own work on a first night, and a trainee's tags are locked only while theirs run.
        for _trainee, group in itertools.groupby(rows, key=lambda row: row[2]):
            with transaction.atomic():
                for snapshot_id, session_id, trainee_id, *_ in group:
                    if snapshot_id not in serialized:
                        serialized[snapshot_id] = GaugeSnapshotSerializer(snapshots[snapshot_id]).data
                    done = tags_record_gauge_evidence(
                        trainee_id=trainee_id,
                        session_id=session_id,
                        snapshot=serialized[snapshot_id],
                        day=day,
                        record=record,
                    )
                    for key in counts:
                        counts[key] += done.get(key, 0)
        return counts

    evidence = feed(changed, "evidence")
    critiques, created = tags_record_critique_evidence(day=day, session_ids=[row[1] for row in changed])
    # Every tag the night creates exists now: check the contradictions of the changed sessions and of
    # the sessions of trainees whose tags changed since those sessions were read.
    checked = _snapshot_rows(day, "true" if full else _TAGS_CHANGED)
    contradictions = feed(checked, "contradictions")
    _remember(changed, checked)
    return {
        "snapshots": len(changed),
        "critiques": critiques,
        "contradiction_checks": len(checked),
        "evidence": evidence["evidence"] + created,
        "contradictions": contradictions["contradictions"],
        "verification": tags_nightly_check(day=day),
    }


def _remember(changed: list[tuple], checked: list[tuple]) -> None:
    """What was read: the changed sessions' digest and revision as read before their critiques (a critique
    written since gives a newer revision: read again next night); for the others only the tag set."""
    read = {row[1]: row for row in changed}
    marks = []
    for _id, session_id, _trainee, digest, revision, tags, old_digest, old_revision, _old_tags in checked:
        if session_id in read:
            digest, revision = read[session_id][3], read[session_id][4]
        else:
            digest, revision = old_digest or "", old_revision or 0
        marks.append(FedSession(session_id=session_id, figures_digest=digest, revision=revision, tags_digest=tags))
    with transaction.atomic():
        FedSession.objects.bulk_create(
            marks,
            update_conflicts=True,
            unique_fields=["session"],
            update_fields=["figures_digest", "revision", "tags_digest"],
        )


def tags_record_critique_evidence(*, day: datetime.date, session_ids: list[int] | None = None) -> tuple[int, int]:
    """Accepted critiques whose intent deviation names an expected and an actual technique from different
    categories are evidence that the trainee under-uses the expected category and over-uses the actual one
    (e.g. expected cognitive_restructuring, actual validation → underuses_intervention, overuses_relational).

    Scope: the given sessions (default: every session gauged for ``day``). Idempotent: the event text is
    derived from the critique itself, and evidence is unique per tag, session and event. Returns the number
    of critiques read and of new pieces.
    """
    if session_ids is None:
        session_ids = GaugeSnapshot.objects.filter(date=day, session__isnull=False).values("session_id")
    elif not session_ids:
        return 0, 0
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
    created = read = 0
    for comment_id, session_id, trainee_id, utterance_id, deviation in critiques:
        read += 1
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
    return read, created
