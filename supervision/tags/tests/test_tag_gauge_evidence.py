"""Evidence and contradictions from per-session gauge snapshots, and the risk check on imported turns."""

import datetime

import pytest
from django.utils import timezone

from supervision.importing.readers import read_jsonl
from supervision.importing.services import import_transcripts
from supervision.models import Session
from supervision.tags.models import Status, TagContradiction, TagEvidence, TraineeTag
from supervision.tags.services import TagInputError, session_skips_risk_assessment, tags_record_gauge_evidence
from supervision.tags.tests.factories import T0, category_entry, make_sessions, snapshot
from supervision.testing import golden_session, write_jsonl

DAY = datetime.timedelta(days=1)


@pytest.fixture
def trainee(cast):
    return cast.trainee_a


@pytest.fixture
def s(trainee):
    return make_sessions(trainee, 4)


def record(trainee, session, snap):
    return tags_record_gauge_evidence(
        trainee_id=trainee.pk, session_id=session.pk, snapshot=snap, day=timezone.localdate()
    )


def tag(trainee, name):
    return TraineeTag.objects.get(trainee=trainee, tag=name)


def test_it_records_over_and_under_use_and_a_low_ratio_as_observed_evidence(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    snap = snapshot(
        s[0].pk,
        rq_band="below_fair",
        RELATIONAL=category_entry("over", 0.62),
        INTERVENTION=category_entry("under", 0.05),
    )
    assert record(trainee, s[0], snap) == {"evidence": 3, "contradictions": 0}
    assert set(TraineeTag.objects.values_list("tag", flat=True)) == {
        "overuses_relational",
        "underuses_intervention",
        "rq_below_fair",
    }
    piece = tag(trainee, "overuses_relational").evidence.get()
    assert piece.session_id == s[0].pk and piece.origin == "gauge" and piece.detail["share"] == 0.62
    assert all(t.source == "observed" and t.status == Status.OBSERVATION for t in TraineeTag.objects.all())


def test_it_does_not_duplicate_evidence_when_the_nightly_job_runs_again(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    snap = snapshot(s[0].pk, rq_band="below_fair", RELATIONAL=category_entry("over", 0.62))
    record(trainee, s[0], snap)
    time_machine.move_to(T0 + DAY, tick=False)
    snap["categories"]["RELATIONAL"]["share"] = 0.64  # a re-run over a slightly changed session
    assert record(trainee, s[0], snap) == {"evidence": 0, "contradictions": 0}
    assert TagEvidence.objects.count() == 2


def test_it_promotes_to_hypothesis_across_two_sessions(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    for session in s[:2]:
        record(trainee, session, snapshot(session.pk, RELATIONAL=category_entry("over", 0.6)))
    assert tag(trainee, "overuses_relational").status == Status.HYPOTHESIS


@pytest.mark.parametrize(
    ("tag_name", "share", "severity"),
    [
        ("overuses_relational", 0.30, "medium"),  # lower half of the band: plainly not over-using
        ("overuses_relational", 0.43, "low"),  # within, but near the upper edge
        ("underuses_relational", 0.43, "medium"),
        ("underuses_relational", 0.27, "low"),
    ],
)
def test_it_contradicts_an_existing_tag_from_a_balanced_session_by_where_the_share_sits(
    trainee, s, time_machine, tag_name, share, severity
):
    time_machine.move_to(T0, tick=False)
    status = "over" if tag_name.startswith("over") else "under"
    record(trainee, s[0], snapshot(s[0].pk, RELATIONAL=category_entry(status, 0.6 if status == "over" else 0.1)))
    record(trainee, s[1], snapshot(s[1].pk, RELATIONAL=category_entry("within", share)))
    contradiction = tag(trainee, tag_name).contradictions.get()
    assert contradiction.severity == severity and contradiction.session_id == s[1].pk
    assert "목표 범위 안" in contradiction.event


def test_it_records_no_contradiction_for_tags_the_trainee_does_not_have(trainee, s):
    assert record(trainee, s[0], snapshot(s[0].pk, rq_band="good")) == {"evidence": 0, "contradictions": 0}
    assert not TraineeTag.objects.exists()


def test_it_demotes_a_verified_tag_when_a_balanced_session_says_medium(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    record(trainee, s[0], snapshot(s[0].pk, RELATIONAL=category_entry("over", 0.6)))
    record(trainee, s[1], snapshot(s[1].pk, RELATIONAL=category_entry("over", 0.6)))
    time_machine.move_to(T0 + 14 * DAY, tick=False)
    record(trainee, s[2], snapshot(s[2].pk, RELATIONAL=category_entry("over", 0.6)))
    assert tag(trainee, "overuses_relational").status == Status.VERIFIED
    time_machine.move_to(T0 + 15 * DAY, tick=False)
    record(trainee, s[3], snapshot(s[3].pk, RELATIONAL=category_entry("within", 0.3)))
    assert tag(trainee, "overuses_relational").status == Status.HYPOTHESIS


def test_it_contradicts_with_high_severity_when_a_session_shows_the_opposite(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    record(trainee, s[0], snapshot(s[0].pk, RELATIONAL=category_entry("over", 0.6)))
    record(trainee, s[1], snapshot(s[1].pk, RELATIONAL=category_entry("over", 0.6)))
    record(trainee, s[2], snapshot(s[2].pk, RELATIONAL=category_entry("under", 0.1)))
    over = tag(trainee, "overuses_relational")
    assert over.status == Status.OBSERVATION
    assert over.contradictions.get().severity == "high"


@pytest.mark.parametrize(("band", "severity"), [("fair", "low"), ("good", "medium")])
def test_it_contradicts_a_low_ratio_tag_from_a_session_with_a_better_ratio(trainee, s, band, severity):
    record(trainee, s[0], snapshot(s[0].pk, rq_band="below_fair"))
    record(trainee, s[1], snapshot(s[1].pk, rq_band=band))
    assert tag(trainee, "rq_below_fair").contradictions.get().severity == severity


def test_it_makes_a_declared_focus_conflicted_without_demoting_it(cast, trainee, s):
    from supervision.tags.services import tag_evidence_add

    tag_evidence_add(trainee_id=trainee.pk, tag="prioritizes_relational", source="declared", event="관계에 집중")
    record(trainee, s[0], snapshot(s[0].pk, RELATIONAL=category_entry("under", 0.1)))
    declared = tag(trainee, "prioritizes_relational")
    assert declared.contradictions.get().severity == "low"
    assert declared.status == Status.OBSERVATION


def test_it_rejects_a_session_of_another_trainee(cast, trainee):
    other = make_sessions(cast.trainee_b, 1)[0]
    with pytest.raises(TagInputError):
        record(trainee, other, snapshot(other.pk, rq_band="below_fair"))
    assert not TagEvidence.objects.exists()


def test_it_tolerates_a_snapshot_with_missing_parts(trainee, s):
    weird = {"categories": {"RELATIONAL": {"status": "within"}, "NOT_A_CATEGORY": {"status": "over"}}, "rq_band": None}
    assert record(trainee, s[0], weird) == {"evidence": 0, "contradictions": 0}


# --- Risk assessment, from a session built with the real importer ---------------------------------


def _risk_lines(code: str, assessed: bool) -> list[dict]:
    lines = golden_session(code, 6)
    lines[3]["client_states"] = ["suicidal_ideation_admit"]
    if assessed:
        lines[4]["techniques"] = ["risk_assessment"]
    return lines


def _session(code):
    return Session.objects.get(code=code)


def test_it_records_skipped_risk_assessment_from_an_imported_session(trainee, tmp_path, time_machine):
    time_machine.move_to(T0, tick=False)
    write_jsonl(tmp_path / "a.jsonl", _risk_lines("RISK_01", assessed=False) + _risk_lines("RISK_02", assessed=False))
    report = import_transcripts(rows=read_jsonl(tmp_path / "a.jsonl"), trainee_username=trainee.username)
    assert report.ok, report.errors
    first, second = _session("RISK_01"), _session("RISK_02")
    assert session_skips_risk_assessment(first.pk) is True
    record(trainee, first, snapshot(first.pk))
    record(trainee, second, snapshot(second.pk))
    skips = tag(trainee, "skips_risk_assessment")
    assert skips.evidence.count() == 2 and skips.status == Status.HYPOTHESIS


def test_it_contradicts_skipped_risk_assessment_when_a_session_assesses_risk(trainee, tmp_path, time_machine):
    time_machine.move_to(T0, tick=False)
    lines = _risk_lines("RISK_01", assessed=False) + _risk_lines("RISK_02", assessed=True)
    lines += golden_session("CALM_01", 4)
    write_jsonl(tmp_path / "b.jsonl", lines)
    assert import_transcripts(rows=read_jsonl(tmp_path / "b.jsonl"), trainee_username=trainee.username).ok
    assert session_skips_risk_assessment(_session("RISK_02").pk) is False
    assert session_skips_risk_assessment(_session("CALM_01").pk) is None
    for code in ("RISK_01", "RISK_02", "CALM_01"):
        record(trainee, _session(code), snapshot(_session(code).pk))
    skips = tag(trainee, "skips_risk_assessment")
    assert skips.evidence.count() == 1
    contradiction = TagContradiction.objects.get(trainee_tag=skips)
    assert contradiction.severity == "medium" and contradiction.session_id == _session("RISK_02").pk
