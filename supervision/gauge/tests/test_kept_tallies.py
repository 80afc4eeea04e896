"""Kept per-session tallies: every way a session's rows change gives it a new revision, and a nightly run
that reuses the unchanged sessions' tallies writes exactly what a full recompute writes."""

import datetime
import json
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from supervision.gauge import aggregate
from supervision.gauge.aggregate import tallies_forget, tally_sql_digest
from supervision.gauge.models import GaugeSnapshot, SessionRevision, SessionTally
from supervision.gauge.services import gauge_compute
from supervision.gauge.suggestions import suggestion_accept
from supervision.gauge.tests.conftest import DAY
from supervision.models import Session, SupervisorComment, Turn, TurnClientState, TurnTechnique
from taxonomy.models import TechniqueLabelDef

pytestmark = pytest.mark.django_db


def revision(code):
    session_id = Session.objects.get(code=code).pk
    row = SessionRevision.objects.filter(session_id=session_id).first()
    return row.revision if row else 0


def turn(utterance_id):
    return Turn.objects.get(utterance_id=utterance_id)


def edit_text(fixture):
    t = turn("S1-K-002")
    t.text = "조금 다른 합성 발화"
    t.save()


def edit_act_in_bulk(fixture):
    Turn.objects.filter(utterance_id="S1-K-007").update(dialog_act="goodbye")


def add_technique(fixture):
    TurnTechnique.objects.create(turn=turn("S1-C-001"), label=TechniqueLabelDef.objects.get(code="psychoeducation"))


def remove_client_state(fixture):
    TurnClientState.objects.filter(turn__session__code="S1").first().delete()


def add_critique(fixture):
    SupervisorComment.objects.create(
        turn=turn("S1-C-002"), kind="critique", text="합성 논평", intent_deviation={"severity": "major"}
    )


def accept_suggestion(fixture):
    suggestion = SupervisorComment.objects.filter(is_suggestion=True, turn__session__code="S1").first()
    suggestion_accept(comment=suggestion, user=fixture.supervisor_a)


def plain_sql(fixture):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE turns SET stage = '정리' WHERE utterance_id = 'S1-K-001'")


@pytest.mark.parametrize(
    "change",
    [edit_text, edit_act_in_bulk, add_technique, remove_client_state, add_critique, accept_suggestion, plain_sql],
)
def test_every_way_of_changing_a_sessions_rows_gives_it_a_new_revision(fixture_sessions, change):
    gauge_compute(day=DAY)
    before = {code: revision(code) for code in ("S1", "S2", "S4")}
    change(fixture_sessions)
    assert revision("S1") > before["S1"]
    assert {code: revision(code) for code in ("S2", "S4")} == {"S2": before["S2"], "S4": before["S4"]}


def test_the_gauges_own_suggestions_change_no_revision(fixture_sessions):
    gauge_compute(day=DAY)  # the first run writes every suggestion
    assert SupervisorComment.objects.filter(is_suggestion=True).exists()
    kept = dict(SessionTally.objects.values_list("session_id", "revision"))
    assert dict(SessionRevision.objects.filter(session_id__in=kept).values_list("session_id", "revision")) == kept


def test_deleting_a_session_forgets_its_revision(fixture_sessions):
    gauge_compute(day=DAY)
    s2 = Session.objects.get(code="S2")
    assert SessionRevision.objects.filter(session_id=s2.pk).exists()
    s2.delete()
    assert not SessionRevision.objects.filter(session_id=s2.pk).exists()
    assert gauge_compute(day=DAY).sessions == 2


def figures_written(day=DAY):
    """Every snapshot of the day and every pending suggestion, without ids and times."""
    snapshots = sorted(
        (
            {k: v for k, v in row.items() if k not in ("id", "computed_at")}
            for row in GaugeSnapshot.objects.filter(date=day).values()
        ),
        key=lambda row: (row["trainee_id"], row["session_id"] or 0),
    )
    suggestions = sorted(
        SupervisorComment.objects.filter(is_suggestion=True).values_list("turn_id", "suggestion_key", "text")
    )
    return snapshots, suggestions


def test_a_run_reusing_kept_tallies_writes_what_a_full_recompute_writes(fixture_sessions):
    gauge_compute(day=DAY)
    first = figures_written()
    for change in (edit_act_in_bulk, add_technique, remove_client_state, add_critique, accept_suggestion):
        change(fixture_sessions)
    Turn.objects.filter(utterance_id="S4-K-002").update(text="(침묵)", dialog_act="silence")
    s2 = Session.objects.get(code="S2")
    SupervisorComment.objects.create(turn=turn("S2-C-001"), kind="critique", text="합성", intent_deviation={})

    run = gauge_compute(day=DAY)
    reused = figures_written()
    assert reused != first  # the changes show
    assert SessionTally.objects.get(session=s2).revision == SessionRevision.objects.get(session_id=s2.pk).revision

    tallies_forget()
    full = gauge_compute(day=DAY)
    assert figures_written() == reused
    assert full == run


def snapshot_rows():
    return {
        (s.trainee.username, s.session.code if s.session else None): (s.pk, s.computed_at)
        for s in GaugeSnapshot.objects.select_related("trainee", "session")
    }


def test_a_rerun_with_nothing_changed_rewrites_nothing(fixture_sessions):
    gauge_compute(day=DAY)
    written = snapshot_rows()
    kept = dict(SessionTally.objects.values_list("session_id", "computed_at"))
    gauge_compute(day=DAY)
    assert snapshot_rows() == written
    assert dict(SessionTally.objects.values_list("session_id", "computed_at")) == kept


def test_one_changed_session_rewrites_its_snapshot_and_its_trainees_only(fixture_sessions):
    gauge_compute(day=DAY)
    written = snapshot_rows()
    add_technique(fixture_sessions)
    gauge_compute(day=DAY)
    now = snapshot_rows()
    assert now.keys() == written.keys()
    assert {key for key in now if now[key] != written[key]} == {("trainee_a", "S1"), ("trainee_a", None)}


def test_tallies_kept_by_another_version_of_the_statement_are_recomputed(fixture_sessions):
    gauge_compute(day=DAY)
    expected = figures_written()
    # what an older statement might have kept
    SessionTally.objects.update(sql_digest="an older statement", tally={"sessions": 1, "turns": 999})
    gauge_compute(day=DAY)
    assert figures_written() == expected
    assert set(SessionTally.objects.values_list("sql_digest", flat=True)) == {tally_sql_digest()}


def test_a_new_day_reuses_the_tallies(fixture_sessions, django_assert_num_queries):
    gauge_compute(day=DAY)
    kept = dict(SessionTally.objects.values_list("session_id", "computed_at"))
    next_day = DAY + datetime.timedelta(days=1)
    run = gauge_compute(day=next_day)
    assert dict(SessionTally.objects.values_list("session_id", "computed_at")) == kept
    assert GaugeSnapshot.objects.filter(date=next_day).count() == run.trainees + run.sessions == 5


def test_compute_gauges_full_aggregates_every_session_again(fixture_sessions):
    call_command("compute_gauges", "--date", DAY.isoformat(), stdout=StringIO())
    expected = figures_written()
    kept = dict(SessionTally.objects.values_list("session_id", "computed_at"))
    out = StringIO()
    call_command("compute_gauges", "--date", DAY.isoformat(), "--full", stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1]) == {"trainees": 2, "sessions": 3, "turns": 24}
    again = dict(SessionTally.objects.values_list("session_id", "computed_at"))
    assert again.keys() == kept.keys() and all(again[s] > kept[s] for s in kept)
    assert figures_written() == expected


@pytest.mark.django_db(transaction=True)
def test_a_write_committed_while_a_run_is_going_is_picked_up_by_the_next_run(fixture_sessions, monkeypatch):
    """The run aggregates, then (paused here) another connection commits a change to S1; the run keeps
    the tally it computed from the rows before the change. The revision it kept is older than S1's now,
    so the next run aggregates S1 again instead of trusting the kept tally."""
    aggregated, resume = threading.Event(), threading.Event()
    keep = aggregate._keep_tallies

    def keep_then_wait(sessions, computed_at):
        keep(sessions, computed_at)
        aggregated.set()
        resume.wait(30)

    monkeypatch.setattr(aggregate, "_keep_tallies", keep_then_wait)
    errors = []

    def nightly_run():
        try:
            gauge_compute(day=DAY)
        except Exception as exc:  # surfaced below: a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connection.close()

    running = threading.Thread(target=nightly_run)
    running.start()
    assert aggregated.wait(30)
    Turn.objects.filter(utterance_id="S1-K-007").update(dialog_act="goodbye")  # commits at once
    resume.set()
    running.join(30)
    assert not errors
    s1 = GaugeSnapshot.objects.get(session__code="S1", date=DAY)
    assert (s1.closing_acknowledged, s1.closed_on_resuming_client) == (0, 1)  # the run saw the rows before

    monkeypatch.setattr(aggregate, "_keep_tallies", keep)
    gauge_compute(day=DAY)
    s1 = GaugeSnapshot.objects.get(session__code="S1", date=DAY)
    assert (s1.closing_acknowledged, s1.closed_on_resuming_client) == (1, 0)
