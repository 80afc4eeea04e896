"""The same review-gauge work on whichever database this process uses, and its result as plain JSON with
no database ids in it, so runs on PostgreSQL and on SQLite can be compared field by field
(``test_two_backends.py`` runs it here and in a subprocess on a SQLite file). Must be imported after
``django.setup()``."""

from __future__ import annotations

import datetime
import tempfile
from pathlib import Path

from supervision.demo import load_demo
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.tests.conftest import DAY, session_s1, session_s2, session_s3_outside_window, session_s4
from supervision.importing.services import import_transcripts
from supervision.importing.sources import rows_from_path
from supervision.models import SupervisorComment
from supervision.nightly import nightly_review
from supervision.tags.models import TraineeTag
from supervision.testing import write_jsonl

# every stored column of a snapshot but the ids, the moment and the digest (which hashes the ids)
SNAPSHOT_FIELDS = [
    f.name
    for f in GaugeSnapshot._meta.concrete_fields
    if f.name not in ("id", "trainee", "session", "date", "computed_at", "figures_digest")
]


def build() -> list[datetime.date]:
    """`make run`'s demo (its own nightly review for today), then the gauge fixture sessions and the
    nightly review for their day. Returns the days reviewed."""
    load_demo()
    lines = session_s1() + session_s2() + session_s3_outside_window() + session_s4()
    with tempfile.TemporaryDirectory() as tmp:
        report = import_transcripts(rows=rows_from_path(write_jsonl(Path(tmp) / "fixture.jsonl", lines)))
    assert not report.errors, report.errors
    nightly_review(day=DAY)
    return sorted({*GaugeSnapshot.objects.values_list("date", flat=True).distinct()})


def dump() -> dict:
    snapshots = {}
    for snapshot in GaugeSnapshot.objects.select_related("trainee", "session").order_by("date", "id"):
        key = f"{snapshot.date} {snapshot.trainee.username} {snapshot.session.code if snapshot.session else '-'}"
        snapshots[key] = {name: getattr(snapshot, name) for name in SNAPSHOT_FIELDS}
    suggestions = {}
    for comment in SupervisorComment.objects.exclude(suggestion_key="").select_related("turn"):
        # safety suggestions name their disclosure turn by id: keep the key's meaning, not the id
        key = (
            comment.suggestion_key.rsplit(":", 1)[0]
            if comment.suggestion_key.startswith("safety:")
            else comment.suggestion_key
        )
        suggestions[f"{comment.turn.utterance_id} {key}"] = {
            "text": comment.text,
            "intent_deviation": comment.intent_deviation,
            "author": comment.author,
            "is_suggestion": comment.is_suggestion,
        }
    tags = {}
    for tag in TraineeTag.objects.select_related("trainee").prefetch_related(
        "evidence__session", "contradictions__session"
    ):
        tags[f"{tag.trainee.username} {tag.tag}"] = {
            "status": tag.status,
            "source": tag.source,
            "evidence": sorted([e.session.code if e.session else None, e.event] for e in tag.evidence.all()),
            "contradictions": sorted(
                [c.session.code if c.session else None, c.event, c.severity] for c in tag.contradictions.all()
            ),
        }
    return {"snapshots": snapshots, "suggestions": suggestions, "tags": tags}
