"""Critique dimensions as tag evidence (DESIGN.md, "Tendency tags": evidence comes from the gauge and from
critique dimensions)."""

import datetime

from supervision.gauge.services import gauge_compute
from supervision.importing.services import import_transcripts
from supervision.tags.models import TagEvidence, TraineeTag
from supervision.tags.nightly import tags_nightly
from supervision.testing import golden_session

DAY = datetime.date(2026, 11, 20)


def import_with_critique(code: str, *, expected: str, actual: str) -> None:
    lines = golden_session(code, 6, trainee="trainee_a", held_on="2026-11-18")
    lines[2]["comments"] = [
        {"kind": "critique", "text": "재구성이 필요한 지점", "author": "supervisor", "dimension": "개입 시점",
         "expected": expected, "actual": actual, "severity": "moderate"},
    ]  # fmt: skip
    report = import_transcripts(rows=enumerate(lines, start=1))
    assert report.ok, report.errors


def test_it_turns_cross_category_critiques_into_evidence_and_a_hypothesis(cast):
    import_with_critique("CE01", expected="cognitive_restructuring", actual="validation")
    import_with_critique("CE02", expected="cognitive_restructuring", actual="empathy")
    gauge_compute(day=DAY)
    tags_nightly(day=DAY)

    critique_evidence = TagEvidence.objects.filter(event__contains="논평: 권장")
    assert sorted(critique_evidence.values_list("trainee_tag__tag", "session__code")) == [
        ("overuses_relational", "CE01"),
        ("overuses_relational", "CE02"),
        ("underuses_intervention", "CE01"),
        ("underuses_intervention", "CE02"),
    ]
    assert TraineeTag.objects.get(trainee=cast.trainee_a, tag="underuses_intervention").status == "hypothesis"
    assert "CE01-C-002 논평: 권장 인지재구성(cognitive_restructuring) 대신 타당화(validation)" in set(
        critique_evidence.values_list("event", flat=True)
    )

    before = TagEvidence.objects.count()
    tags_nightly(day=DAY)
    assert TagEvidence.objects.count() == before


def test_it_ignores_critiques_within_one_category_or_with_free_text(cast):
    import_with_critique("CE03", expected="reflection", actual="empathy")
    import_with_critique("CE04", expected="더 기다려 주기", actual="validation")
    gauge_compute(day=DAY)
    tags_nightly(day=DAY)
    assert not TagEvidence.objects.filter(event__contains="논평: 권장").exists()
