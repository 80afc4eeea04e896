"""The per-session audit (each turn extracted once, shared by its overlapping windows) gives exactly what
audit_windows() gives on each window's dict turns; audit_rows() stores exactly that."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from supervision.trajectory.engine.audit import audit_sessions, audit_windows
from supervision.trajectory.models import TRACE_FIELDS
from supervision.trajectory.services import audit_rows, window_bounds

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "trajectory"
FIELDS = ("seq", "utterance_id", "speaker", "text", "nonverbal", "techniques", "client_states")


def as_rows(turns: list[dict]) -> list[tuple]:
    """Turns as the tuples _read_batch gives, numbered 0, 1, ... in order."""
    return [
        (seq, turn["utterance_id"], turn["speaker"], turn.get("text") or "", turn.get("nonverbal") or [],
         turn.get("techniques") or [], turn.get("client_states") or [])
        for seq, turn in enumerate(turns)
    ]  # fmt: skip


def stored_sessions() -> list[tuple[int, list[tuple]]]:
    """The window files' windows joined end to end into sessions of 1 to 7 windows (10 to 70 turns), and one
    of 4 turns: sessions shorter than one window, exactly one, and many overlapping ones."""
    windows = []
    for name in ("development-1.jsonl", "development-7.jsonl", "generated-tune.jsonl"):
        windows += [json.loads(line)["turns"] for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
    sessions = [(1, as_rows(windows[0][:4]))]
    start, size = 1, 1
    while start < len(windows):
        sessions.append((len(sessions) + 1, as_rows([t for window in windows[start : start + size] for t in window])))
        start, size = start + size, size % 7 + 1
    return sessions


def as_dicts(rows: list[tuple]) -> list[dict]:
    return [dict(zip(FIELDS, row, strict=True)) for row in rows]


def test_audit_sessions_gives_what_audit_windows_gives_window_by_window():
    sessions = stored_sessions()
    assert len(sessions) > 40 and max(len(rows) for _, rows in sessions) >= 60
    per_session = audit_sessions([(rows, window_bounds(len(rows))) for _, rows in sessions])
    windows = [as_dicts(rows[a:b]) for _, rows in sessions for a, b in window_bounds(len(rows))]
    one_by_one = audit_windows(windows)
    got = [audit for audits in per_session for audit in audits]
    assert len(got) == len(one_by_one) > 150
    for mine, theirs in zip(got, one_by_one, strict=True):
        assert mine.label == theirs.label
        assert mine.score == theirs.score
        assert mine.explanation == theirs.explanation
        assert mine.states == theirs.states
        assert mine.sycophancy_turns == theirs.sycophancy_turns
        assert mine.nearest_template == theirs.nearest_template
        assert mine.components == theirs.components
        assert mine.clinical_states == theirs.clinical_states
    assert {audit.label for audit in got} == {"productive", "neutral", "harmful"}
    assert any(audit.sycophancy_turns for audit in got)


def test_audit_rows_stores_the_window_by_window_audits_byte_for_byte():
    sessions = stored_sessions()
    now = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    batch = audit_rows(sessions, "v-test", now)
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    expected = []
    for session_id, rows in sessions:
        bounds = window_bounds(len(rows))
        audits = audit_windows([as_dicts(rows[a:b]) for a, b in bounds])
        expected += [
            (session_id, index, rows[a][0], rows[b - 1][0], audit.label, audit.score, audit.explanation,
             dumps([{key: state[key] for key in TRACE_FIELDS} for state in audit.states]),
             dumps(audit.sycophancy_turns), "v-test", now)
            for index, ((a, b), audit) in enumerate(zip(bounds, audits, strict=True))
        ]  # fmt: skip
    assert batch.rows == expected
    assert batch.kept == {session_id: len(window_bounds(len(rows))) for session_id, rows in sessions}
    assert batch.turns == sum(len(rows) for _, rows in sessions)


def test_audit_sessions_wants_turns_in_seq_order():
    rows = [(1, "A-K-001", "client", "힘들어요", [], [], []), (0, "A-C-001", "counselor", "네", [], [], [])]
    with pytest.raises(ValueError, match="seq order"):
        audit_sessions([(rows, [(0, 2)])])


def test_stored_states_are_the_encoders_text_for_awkward_values():
    """The stored trace of each state (TRACE_FIELDS of the engine's rounded values); its template gives the
    encoder's text where spelling is easy to get wrong: quotes, backslashes,
    control characters and Hangul in an utterance id, negative zero, 4-decimal rounding, and (by falling
    back to the encoder) values that are not finite."""
    from supervision.trajectory.engine.extractor import ClinicalState
    from supervision.trajectory.engine.resources import load_resources
    from supervision.trajectory.services import _StatesJson, stored_state

    classes = load_resources().classes
    even = (1.0 / len(classes),) * len(classes)
    states = [
        ClinicalState(3, 'X-"따옴표"\\\t-K-001', -0.00001, 0.123456, 1.0, even, 0.99995, classes[0], 2),
        ClinicalState(5, "X-K-002", -0.5, 0.0, 1e-9, (0.0,) * (len(classes) - 1) + (1.0,), -0.0, classes[-1], 0),
        ClinicalState(7, "X-K-003", float("nan"), float("inf"), 0.25, even, 0.1, classes[1], 1),
    ]
    encode = json.JSONEncoder(ensure_ascii=False).encode
    as_text = _StatesJson(classes)
    for window in (states[:1], states[:2], states, states[1:]):
        assert as_text(window) == encode([stored_state(s, classes) for s in window])
        assert [list(state) for state in json.loads(as_text(window))] == [list(TRACE_FIELDS)] * len(window)
