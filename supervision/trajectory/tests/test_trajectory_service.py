"""Stored trajectory audits: windows of sessions, set-based reads, idempotent upsert, selector shape."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command

from supervision.models import Session
from supervision.testing import golden_session, write_jsonl
from supervision.trajectory.engine.resources import engine_version
from supervision.trajectory.models import TrajectoryAudit
from supervision.trajectory.selectors import audits_for
from supervision.trajectory.services import trajectory_audit_sessions, trajectory_nightly, window_bounds

pytestmark = pytest.mark.django_db


def import_session(tmp_path, code: str, turns: int, trainee: str = "trainee_a", **fields) -> Session:
    lines = golden_session(code, turns, **fields)
    for line in lines:
        if line["speaker"] == "client" and line["seq"] >= turns // 2:
            # The second half of the session deteriorates: gives the audit something to see.
            line["text"] = "I'm worthless. Nothing will ever change and I want to die."
            line["client_states"] = ["suicidal_ideation_admit"]
    call_command("import_transcripts", str(write_jsonl(tmp_path / f"{code}.jsonl", lines)), trainee=trainee)
    return Session.objects.get(code=code)


def test_window_bounds_cover_every_turn_with_overlap():
    assert window_bounds(0) == []
    assert window_bounds(7) == [(0, 7)]
    assert window_bounds(10) == [(0, 10)]
    assert window_bounds(23) == [(0, 10), (5, 15), (10, 20), (13, 23)]
    assert window_bounds(20) == [(0, 10), (5, 15), (10, 20)]


def test_it_audits_a_session_in_overlapping_windows(cast, tmp_path):
    session = import_session(tmp_path, "TRJ01", 23)
    summary = trajectory_audit_sessions(session_ids=[session.pk])
    assert summary.as_dict() == {"sessions": 1, "windows": 4, "turns": 23, "removed": 0}
    rows = list(TrajectoryAudit.objects.filter(session=session).order_by("window_index"))
    assert [(r.window_index, r.first_seq, r.last_seq) for r in rows] == [
        (0, 0, 9),
        (1, 5, 14),
        (2, 10, 19),
        (3, 13, 22),
    ]
    assert {r.engine_version for r in rows} == {engine_version()}
    assert all("검토 보조 자료" in r.explanation for r in rows)
    # The last window holds the labelled risk turns; the stored states carry the labels' risk.
    assert max(s["risk"] for s in rows[-1].states) > 0.8
    assert max(s["risk"] for s in rows[0].states) < 0.5


def test_it_is_idempotent_and_removes_stale_windows(cast, tmp_path):
    session = import_session(tmp_path, "TRJ02", 23)
    trajectory_audit_sessions(session_ids=[session.pk])
    first = dict(TrajectoryAudit.objects.filter(session=session).values_list("window_index", "id"))
    again = trajectory_audit_sessions(session_ids=[session.pk])
    assert again.removed == 0
    assert dict(TrajectoryAudit.objects.filter(session=session).values_list("window_index", "id")) == first

    session.turns.filter(seq__gte=8).delete()  # the session got shorter (e.g. re-imported)
    shorter = trajectory_audit_sessions(session_ids=[session.pk])
    assert (shorter.windows, shorter.removed) == (1, 3)
    assert list(TrajectoryAudit.objects.filter(session=session).values_list("window_index", "last_seq")) == [(0, 7)]


def test_it_reads_turns_set_based_whatever_the_number_of_sessions(cast, tmp_path, django_assert_num_queries):
    few = [import_session(tmp_path, f"TRQ{i}", 12).pk for i in range(2)]
    many = few + [import_session(tmp_path, f"TRR{i}", 16).pk for i in range(5)]
    # ids, revisions, techniques, client states, turns; savepoint, staging table, upsert from it (after the
    # COPY, which is not a query here), stale delete, revisions audited, release
    with django_assert_num_queries(11):
        trajectory_audit_sessions(session_ids=few)
    with django_assert_num_queries(11):
        trajectory_audit_sessions(session_ids=many)


def test_it_audits_every_session_when_no_ids_are_given(cast, tmp_path):
    import_session(tmp_path, "TRA1", 6)
    import_session(tmp_path, "TRA2", 14, trainee="trainee_b")
    result = trajectory_nightly(day=dt.date(2026, 11, 30))
    assert result == {"day": "2026-11-30", "sessions": 2, "windows": 3, "turns": 20, "removed": 0, "queued": 0}
    assert TrajectoryAudit.objects.count() == 3


def test_audits_for_returns_the_page_shape_in_one_query(cast, tmp_path, django_assert_num_queries):
    session = import_session(tmp_path, "TRS1", 14)
    trajectory_audit_sessions(session_ids=[session.pk])
    with django_assert_num_queries(1):
        audits = audits_for(session)
    assert [a["window_index"] for a in audits] == [0, 1]
    assert set(audits[0]) == {
        "window_index",
        "first_seq",
        "last_seq",
        "label",
        "score",
        "explanation",
        "sycophancy_turns",
        "trace",
        "risk_threshold",
    }
    assert audits[0]["label"] in {"productive", "neutral", "harmful"}
    trace = audits[1]["trace"]
    assert [t["utterance_id"] for t in trace] == [f"TRS1-K-{n:03d}" for n in range(3, 8)]
    assert set(trace[0]) == {"seq", "utterance_id", "valence", "arousal", "risk"}
    assert audits_for(session.pk) == audits


def test_it_reads_the_turns_non_verbal_cues_as_the_json_field_gives_them(cast, tmp_path):
    from supervision.models import Turn
    from supervision.trajectory.services import _read_batch

    session = import_session(tmp_path, "TRN01", 6)
    Turn.objects.filter(session=session, seq=2).update(nonverbal=["(sighs)", "(long pause)"])
    Turn.objects.filter(session=session, seq=3).update(nonverbal=["한숨"])
    _revisions, [(session_id, rows)] = _read_batch([session.pk])
    assert session_id == session.pk
    assert [row[4] for row in rows] == [turn.nonverbal for turn in Turn.objects.filter(session=session).order_by("seq")]
    assert rows[2][4] == ["(sighs)", "(long pause)"] and rows[3][4] == ["한숨"] and rows[0][4] == []
