"""Every transition of the lifecycle table, the time condition under frozen time, and the history."""

import datetime
import os
import subprocess
import sys

import pytest
from django.utils import timezone

from supervision.tags.models import Status, TagTransition, TraineeTag
from supervision.tags.services import TagInputError, tag_contradiction_record, tag_evidence_add, tags_nightly_check
from supervision.tags.tests.factories import T0, make_sessions

TAG = "overuses_relational"
DAY = datetime.timedelta(days=1)


@pytest.fixture
def trainee(cast):
    return cast.trainee_a


@pytest.fixture
def s(trainee):
    return make_sessions(trainee, 6)


def add(trainee, session=None, event="근거", tag=TAG):
    return tag_evidence_add(trainee_id=trainee.pk, tag=tag, event=event, session_id=session.pk if session else None).tag


def contradict(trainee, severity, event="반증", tag=TAG):
    return tag_contradiction_record(trainee_id=trainee.pk, tag=tag, event=event, severity=severity).tag


def nightly():
    return tags_nightly_check(day=timezone.localdate())


def make_hypothesis(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    add(trainee, s[0], "첫 회기")
    return add(trainee, s[1], "둘째 회기")


def make_verified(trainee, s, time_machine):
    make_hypothesis(trainee, s, time_machine)
    time_machine.move_to(T0 + 3 * DAY, tick=False)
    add(trainee, s[2], "셋째 회기")
    time_machine.move_to(T0 + 14 * DAY, tick=False)
    nightly()
    return TraineeTag.objects.get(trainee=trainee, tag=TAG)


def statuses(tag):
    return [(t.from_status, t.to_status) for t in TagTransition.objects.filter(trainee_tag=tag).order_by("at", "id")]


def test_it_creates_an_observation_from_the_first_evidence(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    tag = add(trainee, s[0])
    assert tag.status == Status.OBSERVATION and tag.source == "observed"
    assert tag.hypothesis_since is None and tag.verified_at is None and tag.last_updated == T0
    assert statuses(tag) == [("", "observation")]


def test_it_keeps_an_observation_while_the_evidence_comes_from_one_session(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    add(trainee, s[0], "하나")
    add(trainee, s[0], "둘")
    tag = add(trainee, None, "회기 없는 근거")
    assert tag.status == Status.OBSERVATION
    assert tag.evidence.count() == 3


def test_it_promotes_to_hypothesis_on_evidence_from_a_second_session(trainee, s, time_machine):
    tag = make_hypothesis(trainee, s, time_machine)
    assert tag.status == Status.HYPOTHESIS
    assert tag.hypothesis_since == T0
    assert statuses(tag) == [("", "observation"), ("observation", "hypothesis")]


def test_it_ignores_the_same_evidence_twice(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    add(trainee, s[0], "같은 근거")
    done = tag_evidence_add(trainee_id=trainee.pk, tag=TAG, event="같은 근거", session_id=s[0].pk)
    assert done.created is False
    assert done.tag.evidence.count() == 1


def test_it_verifies_a_hypothesis_after_the_days_with_new_evidence_and_enough_pieces(trainee, s, time_machine):
    tag = make_verified(trainee, s, time_machine)
    assert tag.status == Status.VERIFIED
    assert tag.verified_at == timezone.now()
    assert statuses(tag)[-1] == ("hypothesis", "verified")


def test_it_does_not_verify_before_the_days_have_passed(trainee, s, time_machine):
    make_hypothesis(trainee, s, time_machine)
    time_machine.move_to(T0 + 3 * DAY, tick=False)
    add(trainee, s[2], "셋째 회기")
    time_machine.move_to(T0 + 14 * DAY - datetime.timedelta(minutes=1), tick=False)
    assert nightly() == {"checked": 0, "verified": 0}
    assert TraineeTag.objects.get(trainee=trainee, tag=TAG).status == Status.HYPOTHESIS


def test_it_does_not_verify_without_new_evidence_since_entering_hypothesis(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    add(trainee, s[0], "하나")
    add(trainee, s[0], "둘")
    add(trainee, s[1], "셋")  # enters hypothesis with three pieces, none of them new since
    time_machine.move_to(T0 + 20 * DAY, tick=False)
    assert nightly() == {"checked": 1, "verified": 0}
    # The check also runs when evidence arrives: the first new piece verifies it at once.
    tag = add(trainee, s[2], "넷")
    assert tag.status == Status.VERIFIED


def test_it_does_not_verify_with_fewer_pieces_than_the_minimum(trainee, s, time_machine, settings):
    settings.UTAG_VERIFY_MIN_EVIDENCE = 4
    make_hypothesis(trainee, s, time_machine)
    time_machine.move_to(T0 + 3 * DAY, tick=False)
    add(trainee, s[2], "셋째 회기")
    time_machine.move_to(T0 + 15 * DAY, tick=False)
    nightly()
    assert TraineeTag.objects.get(trainee=trainee, tag=TAG).status == Status.HYPOTHESIS
    assert add(trainee, s[3], "넷째 회기").status == Status.VERIFIED


def test_it_reads_the_waiting_time_from_settings(trainee, s, time_machine, settings):
    settings.UTAG_VERIFY_AFTER_DAYS = 2
    make_hypothesis(trainee, s, time_machine)
    time_machine.move_to(T0 + 2 * DAY, tick=False)
    assert add(trainee, s[2], "셋째 회기").status == Status.VERIFIED


def test_it_does_not_verify_after_a_contradiction_since_entering_hypothesis(trainee, s, time_machine):
    make_hypothesis(trainee, s, time_machine)
    time_machine.move_to(T0 + 2 * DAY, tick=False)
    contradict(trainee, "low")
    time_machine.move_to(T0 + 3 * DAY, tick=False)
    add(trainee, s[2], "셋째 회기")
    time_machine.move_to(T0 + 30 * DAY, tick=False)
    nightly()
    tag = add(trainee, s[3], "넷째 회기")
    assert tag.status == Status.HYPOTHESIS


def test_it_records_a_low_contradiction_without_changing_the_status(trainee, s, time_machine):
    tag = make_verified(trainee, s, time_machine)
    time_machine.move_to(T0 + 15 * DAY, tick=False)
    after = contradict(trainee, "low")
    assert after.status == Status.VERIFIED and after.verified_at == tag.verified_at
    assert after.contradictions.count() == 1
    assert after.last_updated == T0 + 15 * DAY


def test_it_demotes_verified_to_hypothesis_on_a_medium_contradiction(trainee, s, time_machine):
    make_verified(trainee, s, time_machine)
    time_machine.move_to(T0 + 15 * DAY, tick=False)
    tag = contradict(trainee, "medium")
    assert tag.status == Status.HYPOTHESIS
    assert tag.verified_at is None and tag.hypothesis_since == T0 + 15 * DAY
    assert statuses(tag)[-1] == ("verified", "hypothesis")
    # The clock starts again: a new piece after 14 more days verifies it, not before.
    time_machine.move_to(T0 + 20 * DAY, tick=False)
    assert add(trainee, s[3], "넷째 회기").status == Status.HYPOTHESIS
    time_machine.move_to(T0 + 29 * DAY, tick=False)
    nightly()
    assert TraineeTag.objects.get(pk=tag.pk).status == Status.VERIFIED


def test_it_keeps_a_hypothesis_on_a_medium_contradiction(trainee, s, time_machine):
    make_hypothesis(trainee, s, time_machine)
    time_machine.move_to(T0 + DAY, tick=False)
    tag = contradict(trainee, "medium")
    assert tag.status == Status.HYPOTHESIS and tag.hypothesis_since == T0


def test_it_keeps_an_observation_on_any_contradiction(trainee, s, time_machine):
    time_machine.move_to(T0, tick=False)
    add(trainee, s[0])
    for severity in ("low", "medium", "high"):
        tag = contradict(trainee, severity, event=f"반증 {severity}")
        assert tag.status == Status.OBSERVATION
    assert statuses(tag) == [("", "observation")]


@pytest.mark.parametrize("start", ["hypothesis", "verified"])
def test_it_demotes_to_observation_on_a_high_contradiction(trainee, s, time_machine, start):
    if start == "verified":
        make_verified(trainee, s, time_machine)
    else:
        make_hypothesis(trainee, s, time_machine)
    moment = T0 + 16 * DAY
    time_machine.move_to(moment, tick=False)
    tag = contradict(trainee, "high")
    assert tag.status == Status.OBSERVATION
    assert tag.hypothesis_since is None and tag.verified_at is None and tag.observation_since == moment
    assert statuses(tag)[-1] == (start, "observation")
    # A reset: the old sessions no longer count; two new sessions are needed again.
    time_machine.move_to(moment + DAY, tick=False)
    assert add(trainee, s[0], "리셋 후 첫 근거").status == Status.OBSERVATION
    assert add(trainee, s[0], "리셋 후 같은 회기").status == Status.OBSERVATION
    assert add(trainee, s[4], "리셋 후 다른 회기").status == Status.HYPOTHESIS


def test_it_keeps_the_full_history_of_transitions(trainee, s, time_machine):
    make_verified(trainee, s, time_machine)
    time_machine.move_to(T0 + 15 * DAY, tick=False)
    contradict(trainee, "medium", event="보통")
    time_machine.move_to(T0 + 16 * DAY, tick=False)
    tag = contradict(trainee, "high", event="높음")
    assert statuses(tag) == [
        ("", "observation"),
        ("observation", "hypothesis"),
        ("hypothesis", "verified"),
        ("verified", "hypothesis"),
        ("hypothesis", "observation"),
    ]
    last = TagTransition.objects.filter(trainee_tag=tag).latest("at", "id")
    assert last.contradiction.event == "높음" and last.reason


def test_it_is_idempotent_for_the_nightly_check(trainee, s, time_machine):
    make_verified(trainee, s, time_machine)
    assert nightly() == {"checked": 0, "verified": 0}
    assert TagTransition.objects.filter(to_status="verified").count() == 1


def test_it_rejects_bad_input_without_writing(trainee, s):
    with pytest.raises(TagInputError) as unknown:
        add(trainee, s[0], tag="likes_cats")
    assert unknown.value.field == "tag"
    with pytest.raises(TagInputError) as blank:
        add(trainee, s[0], event="   ")
    assert blank.value.field == "event"
    other = make_sessions(trainee.__class__.objects.get(username="trainee_b"), 1)[0]
    with pytest.raises(TagInputError) as foreign:
        add(trainee, other)
    assert foreign.value.field == "session"
    with pytest.raises(TagInputError) as source:
        tag_evidence_add(trainee_id=trainee.pk, tag=TAG, source="declared", event="x")
    assert source.value.field == "source"
    add(trainee, s[0])
    with pytest.raises(TagInputError) as severity:
        contradict(trainee, "extreme")
    assert severity.value.field == "severity"
    assert TraineeTag.objects.count() == 1
    assert TraineeTag.objects.get().contradictions.count() == 0


def test_it_reads_both_settings_from_the_environment():
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='portal.settings'; django.setup();"
        "from django.conf import settings as s; print(s.UTAG_VERIFY_AFTER_DAYS, s.UTAG_VERIFY_MIN_EVIDENCE)"
    )
    env = {**os.environ, "UTAG_VERIFY_AFTER_DAYS": "7", "UTAG_VERIFY_MIN_EVIDENCE": "5"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["7", "5"]
    env.pop("UTAG_VERIFY_AFTER_DAYS"), env.pop("UTAG_VERIFY_MIN_EVIDENCE")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["14", "3"]
