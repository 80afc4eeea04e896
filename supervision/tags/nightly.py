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
from dataclasses import dataclass

from django.db import connection, transaction

from supervision import pagecache
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.models import SupervisorComment
from supervision.tags.catalogue import overuses, underuses
from supervision.tags.models import FedSession, Origin, TraineeTag
from supervision.tags.services import (
    TagBook,
    record_gauge_pieces,
    risk_assessment_skipped,
    run_moment,
    tags_nightly_check,
)
from taxonomy import catalogue
from taxonomy.catalogue import Technique

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


def _snapshot_rows(day: datetime.date, due: str, trainee_ids: list[int] | None = None) -> list[tuple]:
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
    if trainee_ids is not None:
        due = f"({due}) AND g.trainee_id = ANY(%(trainees)s)"
    with connection.cursor() as cursor:
        cursor.execute(_SNAPSHOTS_SQL.format(due=due), {"day": day, "trainees": trainee_ids})
        return cursor.fetchall()


def tags_pending(*, day: datetime.date) -> list[int]:
    """The nightly chunks' part of this step (``settings.NIGHTLY_STEP_PARTS``): the trainees with snapshots
    of ``day`` the step would read (none off PostgreSQL, where the step reads every snapshot itself)."""
    if connection.vendor != "postgresql":
        return []
    return sorted({row[2] for row in _snapshot_rows(day, _TAGS_CHANGED)})


def tags_prepare(*, day: datetime.date, ids: list[int]) -> dict:
    """``tags_nightly`` for the trainees ``ids`` only (a chunk of the night; the verification is left to the
    step): a trainee's tags depend on their own sessions alone, so chunks of trainees give what one run gives."""
    return tags_nightly(day=day, trainee_ids=list(ids))


def tags_nightly(*, day: datetime.date, full: bool = False, trainee_ids: list[int] | None = None) -> dict:
    """Feeds the per-session snapshots computed for ``day`` that are new to the tag lifecycle (all of them
    with ``full``; idempotent either way: evidence is unique per tag, session and event), then runs the
    verification check as of the end of ``day``. Counts what it read (``snapshots``, ``critiques``,
    ``contradiction_checks``) and what it newly recorded (``evidence``, ``contradictions``).

    Each phase is one ``TagBook`` (one transaction, a few queries) however many snapshots it reads.
    ``trainee_ids`` limits the run to those trainees' snapshots and leaves out the verification (a chunk of
    the Celery night, ``tags_prepare``)."""
    full = full or connection.vendor != "postgresql"  # revision marks and tag digests are PostgreSQL's
    at = run_moment(day)
    changed = _snapshot_rows(day, "true" if full else _CHANGED, trainee_ids)
    snapshots = _serialized([row[0] for row in changed], {})
    skipped = risk_assessment_skipped(row[1] for row in changed)
    critiques = accepted_deviation_critiques(session_ids=[row[1] for row in changed])
    with transaction.atomic():
        book = TagBook({row[2] for row in changed} | {c.trainee_id for c in critiques}, {row[1] for row in changed})
        evidence = _feed(book, changed, snapshots, skipped, at, "evidence")
        created = record_critique_pieces(book, critiques, at)
        book.write()
    # Every tag the night created exists now: check the contradictions of the changed sessions and of
    # the sessions of trainees whose tags changed since those sessions were read.
    checked = _snapshot_rows(day, "true" if full else _TAGS_CHANGED, trainee_ids)
    snapshots = _serialized([row[0] for row in checked], snapshots)
    read = {row[1] for row in changed}
    skipped |= risk_assessment_skipped(row[1] for row in checked if row[1] not in read)
    with transaction.atomic():
        book = TagBook({row[2] for row in checked}, {row[1] for row in checked})
        contradictions = _feed(book, checked, snapshots, skipped, at, "contradictions")
        book.write()
    _remember(changed, checked)
    pagecache.everyone_changed()  # the trainees' dashboards show their tags
    return {
        "snapshots": len(changed),
        "critiques": len(critiques),
        "contradiction_checks": len(checked),
        "evidence": evidence["evidence"] + created,
        "contradictions": contradictions["contradictions"],
        "verification": tags_nightly_check(day=day) if trainee_ids is None else {},
    }


def _serialized(snapshot_ids: list[int], known: dict[int, dict]) -> dict[int, dict]:
    """The snapshots in the shape of CONTRACT §6, the ones not ``known`` read in one query."""
    missing = list(GaugeSnapshot.objects.filter(pk__in=[pk for pk in snapshot_ids if pk not in known]))
    # many=True: the serializer's fields are built once, not once per snapshot (2 ms each, profiled)
    for snapshot, data in zip(missing, GaugeSnapshotSerializer(missing, many=True).data, strict=True):
        known[snapshot.pk] = data
    return known


def _feed(
    book: TagBook, rows: list[tuple], snapshots: dict[int, dict], skipped: dict[int, bool], at, record: str
) -> dict[str, int]:
    counts = {"evidence": 0, "contradictions": 0}
    for snapshot_id, session_id, trainee_id, *_ in rows:
        done = record_gauge_pieces(
            book,
            trainee_id=trainee_id,
            session_id=session_id,
            snapshot=snapshots[snapshot_id],
            at=at,
            record=record,
            skipped=skipped.get(session_id),
        )
        for key in counts:
            counts[key] += done[key]
    return counts


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


@dataclass(frozen=True, slots=True)
class DeviationCritique:
    """An accepted critique whose intent deviation names an expected and an actual technique (None when
    the code is not in the taxonomy)."""

    comment_id: int
    session_id: int
    trainee_id: int
    utterance_id: str
    expected: Technique | None
    actual: Technique | None

    @property
    def crosses_categories(self) -> bool:
        return self.expected is not None and self.actual is not None and self.expected.category != self.actual.category


def accepted_deviation_critiques(*, session_ids) -> list[DeviationCritique]:
    """Accepted critiques of the sessions (a list, or a queryset of ids) whose intent deviation names an
    expected and an actual technique, in the order they were written."""
    rows = (
        SupervisorComment.objects.accepted_critiques()
        .filter(turn__session__in=session_ids, intent_deviation__has_keys=["expected", "actual"])
        .values_list("id", "turn__session_id", "turn__session__trainee_id", "turn__utterance_id", "intent_deviation")
        .order_by("id")
    )
    return [
        DeviationCritique(
            comment_id,
            session_id,
            trainee_id,
            utterance_id,
            catalogue.TECHNIQUES_BY_CODE.get(deviation.get("expected", "")),
            catalogue.TECHNIQUES_BY_CODE.get(deviation.get("actual", "")),
        )
        for comment_id, session_id, trainee_id, utterance_id, deviation in rows
    ]


def record_critique_pieces(book: TagBook, critiques: list[DeviationCritique], at) -> int:
    """Each critique across categories is evidence that the trainee under-uses the expected category and over-uses the actual
    one (e.g. expected cognitive_restructuring, actual validation → underuses_intervention,
    overuses_relational). The event text is derived from the critique itself, so a re-run adds nothing.
    Returns the number of new pieces."""
    created = 0
    for critique in critiques:
        if not critique.crosses_categories:
            continue
        expected, actual = critique.expected, critique.actual
        event = f"{critique.utterance_id} 논평: 권장 {expected.ko}({expected.code}) 대신 {actual.ko}({actual.code})"
        for tag in (underuses(expected.category), overuses(actual.category)):
            created += book.add_evidence(
                trainee_id=critique.trainee_id,
                tag=tag,
                event=event,
                session_id=critique.session_id,
                origin=Origin.SUPERVISOR,
                detail={"comment": critique.comment_id},
                at=at,
            ).created
    return created


@transaction.atomic
def tags_record_critique_evidence(*, day: datetime.date, session_ids: list[int] | None = None) -> tuple[int, int]:
    """The evidence of the accepted cross-category critiques (``record_critique_pieces``) of the given
    sessions (default: every session gauged for ``day``). Idempotent. Returns the number of critiques read
    and of new pieces."""
    if session_ids is None:
        session_ids = GaugeSnapshot.objects.filter(date=day, session__isnull=False).values("session_id")
    elif not session_ids:
        return 0, 0
    critiques = accepted_deviation_critiques(session_ids=session_ids)
    book = TagBook({c.trainee_id for c in critiques}, {c.session_id for c in critiques})
    created = record_critique_pieces(book, critiques, run_moment(day))
    book.write()
    return len(critiques), created
