"""The nightly tags step reads only new snapshots and new accepted critiques (counted, not timed), and what
it records equals a full recompute."""

import datetime

from django.db import connection
from django.test.utils import CaptureQueriesContext

from supervision.gauge.services import gauge_compute
from supervision.importing.services import import_transcripts
from supervision.models import SupervisorComment, Turn
from supervision.tags import catalogue as tags_catalogue
from supervision.tags.models import Origin, TagContradiction, TagEvidence, TraineeTag
from supervision.tags.nightly import tags_nightly
from supervision.tags.services import tag_evidence_add
from supervision.testing import golden_session
from taxonomy import catalogue

DAY = datetime.date(2026, 11, 20)


def import_session(code: str, techniques: list[str] | None = None) -> None:
    lines = golden_session(code, 8, trainee="trainee_a", held_on="2026-11-18")
    if techniques:
        for line, technique in zip((x for x in lines if x["speaker"] == "counselor"), techniques, strict=False):
            line["techniques"] = [technique]
    report = import_transcripts(rows=enumerate(lines, start=1))
    assert report.ok, report.errors


def night(day: datetime.date, **options) -> dict:
    gauge_compute(day=day)
    return tags_nightly(day=day, **options)


def tag_rows() -> dict:
    """Everything the tag lifecycle keeps, without ids and moments."""
    return {
        "tags": sorted(TraineeTag.objects.values_list("trainee_id", "tag", "status", "source")),
        "evidence": sorted(TagEvidence.objects.values_list("trainee_tag__tag", "session_id", "event", "origin")),
        "contradictions": sorted(
            TagContradiction.objects.values_list("trainee_tag__tag", "session_id", "event", "severity")
        ),
    }


def test_a_quiet_night_reads_nothing_and_a_changed_session_alone_is_read_again(cast):
    for code in ("TG1", "TG2", "TG3"):
        import_session(code)
    first = night(DAY)
    assert (first["snapshots"], first["contradiction_checks"]) == (3, 3)
    assert first["evidence"] > 0

    quiet = night(DAY + datetime.timedelta(days=1))
    assert (quiet["snapshots"], quiet["critiques"], quiet["contradiction_checks"]) == (0, 0, 0)
    assert (quiet["evidence"], quiet["contradictions"]) == (0, 0)

    # TG2 gets an accepted cross-category critique; TG4 is new and balanced enough to contradict a tag
    SupervisorComment.objects.create(
        turn=Turn.objects.get(utterance_id="TG2-C-002"),
        kind="critique",
        text="합성 논평",
        intent_deviation={"expected": "cognitive_restructuring", "actual": "validation", "severity": "moderate"},
    )
    import_session("TG4", ["empathy", "exploration", "cognitive_restructuring", "stabilization"])
    third_day = DAY + datetime.timedelta(days=2)
    third = night(third_day)
    assert (third["snapshots"], third["critiques"]) == (2, 1)
    incremental = tag_rows()
    assert any(session for _tag, session, event, _ in incremental["evidence"] if "논평: 권장" in event)

    full = tags_nightly(day=third_day, full=True)
    assert full["snapshots"] == 4
    assert (full["evidence"], full["contradictions"]) == (0, 0)
    assert tag_rows() == incremental


def test_a_tag_added_between_nights_is_checked_against_the_unchanged_sessions(cast):
    for code in ("TP1", "TP2"):
        import_session(code)
    night(DAY)
    reflection_category = catalogue.TECHNIQUES_BY_CODE["reflection"].category
    other = next(c.code for c in catalogue.CATEGORIES if c.code != reflection_category)
    tag_evidence_add(
        trainee_id=cast.trainee_a.pk,
        tag=tags_catalogue.prioritizes(other),
        event="수련생이 밝힌 초점",
        session_id=None,
        origin=Origin.TRAINEE,
        detail={},
        at=None,
    )
    second = night(DAY + datetime.timedelta(days=1))
    assert (second["snapshots"], second["critiques"], second["contradiction_checks"]) == (0, 0, 2)
    assert second["contradictions"] == 2  # the declared focus was under its band in both sessions
    rows = tag_rows()
    assert tags_nightly(day=DAY + datetime.timedelta(days=1), full=True)["contradictions"] == 0
    assert tag_rows() == rows


def test_a_night_costs_the_same_queries_for_two_sessions_or_six(cast):
    """Each phase is one TagBook: the queries do not grow with the snapshots, the pieces or the trainees."""
    for code in ("TQ1", "TQ2"):
        import_session(code)
    gauge_compute(day=DAY)
    with CaptureQueriesContext(connection) as two:
        first = tags_nightly(day=DAY)
    for index in range(6):
        lines = golden_session(f"TR{index}", 8, trainee="trainee_b", held_on="2026-11-18")
        assert import_transcripts(rows=enumerate(lines, start=1)).ok
    later = DAY + datetime.timedelta(days=1)
    gauge_compute(day=later)
    with CaptureQueriesContext(connection) as six:
        second = tags_nightly(day=later)
    assert (first["snapshots"], second["snapshots"]) == (2, 6)
    assert second["evidence"] > first["evidence"] > 0
    assert len(six) == len(two)
