"""A TagBook that records many pieces in memory ends where recording them one by one ends: the same tags,
statuses, moments, pieces and transitions (the nightly job relies on it)."""

import datetime
import random

from django.db import transaction

from supervision.tags.models import ContradictionSeverity, TagContradiction, TagEvidence, TagTransition, TraineeTag
from supervision.tags.services import TagBook, tag_contradiction_record, tag_evidence_add, tags_nightly_check
from supervision.tags.tests.factories import T0, make_sessions

TAGS = ("overuses_relational", "underuses_intervention", "rq_below_fair")


def script(trainees, sessions, seed: int) -> list[tuple]:
    """Evidence and contradictions over six weeks, some repeated, in time order."""
    rng = random.Random(seed)
    steps, at = [], T0
    for _ in range(160):
        at += datetime.timedelta(hours=rng.choice((1, 6, 30, 80)))
        trainee = rng.choice(trainees)
        session = rng.choice([None, *sessions[trainee.pk]])
        kind = "evidence" if rng.random() < 0.7 else "contradiction"
        severity = rng.choice(ContradictionSeverity.values)
        event = f"합성 근거 {rng.randrange(4)}"
        steps.append((kind, trainee.pk, rng.choice(TAGS), session.pk if session else None, event, severity, at))
    return steps


def state() -> dict:
    return {
        "tags": sorted(
            TraineeTag.objects.values_list(
                "trainee_id", "tag", "status", "observation_since", "hypothesis_since", "verified_at", "last_updated"
            )
        ),
        "evidence": list(
            TagEvidence.objects.order_by("trainee_tag__trainee_id", "trainee_tag__tag", "at", "session_id").values_list(
                "trainee_tag__tag", "session_id", "event", "at"
            )
        ),
        "contradictions": list(
            TagContradiction.objects.order_by("trainee_tag__trainee_id", "trainee_tag__tag", "at").values_list(
                "trainee_tag__tag", "session_id", "event", "severity", "at"
            )
        ),
        "transitions": list(
            TagTransition.objects.order_by("trainee_tag__trainee_id", "trainee_tag__tag", "at", "id").values_list(
                "trainee_tag__trainee_id",
                "trainee_tag__tag",
                "from_status",
                "to_status",
                "at",
                "reason",
                "evidence__event",
                "contradiction__event",
            )
        ),
    }


def one_by_one(steps) -> None:
    for kind, trainee_id, tag, session_id, event, severity, at in steps:
        if kind == "evidence":
            tag_evidence_add(trainee_id=trainee_id, tag=tag, event=event, session_id=session_id, at=at)
        elif TraineeTag.objects.filter(trainee_id=trainee_id, tag=tag).exists():
            tag_contradiction_record(
                trainee_id=trainee_id, tag=tag, event=event, severity=severity, session_id=session_id, at=at
            )


def in_books(steps, days: int) -> None:
    """Each stretch of ``days`` in one book, so a book also starts from what earlier books stored."""
    trainees = {step[1] for step in steps}
    sessions = {step[3] for step in steps}
    start = steps[0][-1]
    while steps:
        end = start + datetime.timedelta(days=days)
        stretch = [step for step in steps if step[-1] < end]
        steps = steps[len(stretch) :]
        with transaction.atomic():
            book = TagBook(trainees, sessions)
            for kind, trainee_id, tag, session_id, event, severity, at in stretch:
                if kind == "evidence":
                    book.add_evidence(trainee_id=trainee_id, tag=tag, event=event, session_id=session_id, at=at)
                elif (trainee_id, tag) in book.held:
                    book.add_contradiction(
                        trainee_id=trainee_id, tag=tag, event=event, severity=severity, session_id=session_id, at=at
                    )
            book.write()
        start = end


def test_a_book_ends_where_one_by_one_ends(cast, settings):
    settings.UTAG_VERIFY_AFTER_DAYS = 3
    trainees = [cast.trainee_a, cast.trainee_b]
    sessions = {t.pk: make_sessions(t, 4) for t in trainees}
    results = []
    for record in (one_by_one, lambda steps: in_books(steps, days=10), lambda steps: in_books(steps, days=1000)):
        for seed in (1, 2, 3):
            with transaction.atomic():
                record(script(trainees, sessions, seed))
                results.append((seed, state()))
                transaction.set_rollback(True)
    by_seed = {}
    for seed, result in results:
        by_seed.setdefault(seed, []).append(result)
    for seed, (single, stretches, whole) in by_seed.items():
        assert single["transitions"], seed
        assert any(row[3] == "verified" for row in single["transitions"]), seed
        assert stretches == single, seed
        assert whole == single, seed


def test_the_nightly_check_verifies_what_is_due_in_one_book(cast, settings, django_assert_max_num_queries):
    settings.UTAG_VERIFY_AFTER_DAYS = 2
    sessions = make_sessions(cast.trainee_a, 3)
    for n, session in enumerate(sessions):
        for tag in TAGS:
            tag_evidence_add(
                trainee_id=cast.trainee_a.pk,
                tag=tag,
                event="합성 근거",
                session_id=session.pk,
                at=T0 + datetime.timedelta(days=n),
            )
    assert set(TraineeTag.objects.values_list("status", flat=True)) == {"hypothesis"}
    tag_contradiction_record(
        trainee_id=cast.trainee_a.pk, tag=TAGS[0], event="합성 반증", severity="low", at=T0 + datetime.timedelta(days=5)
    )
    with django_assert_max_num_queries(12):
        done = tags_nightly_check(day=(T0 + datetime.timedelta(days=9)).date())
    assert done == {"checked": 3, "verified": 2}
    statuses = dict(TraineeTag.objects.values_list("tag", "status"))
    assert statuses == {TAGS[0]: "hypothesis", TAGS[1]: "verified", TAGS[2]: "verified"}
