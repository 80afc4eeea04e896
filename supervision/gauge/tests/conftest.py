"""Fixture sessions for the gauge tests, imported through the real importer.

Hand-counted expectations for them are written out next to each test (see test_gauge_compute.py).
"""

from __future__ import annotations

import datetime
import importlib

import pytest

from supervision.gauge.models import TargetBand
from supervision.importing.services import import_transcripts
from supervision.importing.sources import rows_from_path
from supervision.testing import golden_line, write_jsonl

DAY = datetime.date(2026, 11, 30)
DEFAULT_BANDS = importlib.import_module("supervision.gauge.migrations.0002_seed_target_bands").DEFAULT_BANDS


@pytest.fixture
def target_bands(db):
    """The migration's default bands (transactional tests flush the migration's seed)."""
    for category, (low, high) in DEFAULT_BANDS.items():
        TargetBand.objects.update_or_create(category=category, defaults={"low": low, "high": high})


def line(session, seq, speaker, stage, *, labels=(), text=None, act=None, comments=(), **extra):
    fields = {
        "stage": stage,
        "text": text if text is not None else f"합성 발화 {session} {seq}",
        "comments": list(comments),
    }
    if speaker == "counselor":
        fields.update(techniques=list(labels), client_states=[])
    else:
        fields.update(techniques=[], client_states=list(labels))
    if act is not None:
        fields["dialog_act"] = act
    fields.update(extra)
    return golden_line(session, seq, speaker, **fields)


def critique(severity=None, text="합성 논평", **deviation):
    item = {"kind": "critique", "text": text, "author": "supervisor", **deviation}
    if severity:
        item["severity"] = severity
    return item


def session_s1(trainee="trainee_a", held_on=DAY):
    """14 turns. Silent-close run at client seqs 3, 5, 7 (seq 7 completes it); client seq 9 has words;
    seq 11 is a lone silence; the last client turn (13) is in 정리 with act ``question`` (resuming)."""
    c, k = "counselor", "client"
    extra = {"trainee": trainee, "held_on": held_on.isoformat()}
    return [
        line(
            "S1",
            0,
            c,
            "라포",
            labels=["empathy", "reflection"],
            comments=[{"kind": "rationale", "text": "근거"}],
            **extra,
        ),
        line("S1", 1, k, "라포", labels=["defensive"], act="inform", **extra),
        line(
            "S1",
            2,
            c,
            "탐색",
            labels=["exploration"],
            comments=[critique("minor", dimension="질문 유형", expected="reflection", actual="exploration")],
            **extra,
        ),
        line("S1", 3, k, "탐색", labels=["defensive"], text="(침묵)", act="silence", **extra),
        line("S1", 4, c, "탐색", labels=["facilitative_question", "holding"], comments=[critique()], **extra),
        line("S1", 5, k, "탐색", text="(한숨)", **extra),
        line("S1", 6, c, "탐색", labels=["reflection"], **extra),
        line("S1", 7, k, "탐색", labels=["defense_loosening"], text="(침묵)", act="silence", **extra),
        line("S1", 8, c, "개입", labels=["interpretation"], **extra),
        line("S1", 9, k, "개입", labels=["defense_loosening", "affect_contact"], act="inform", **extra),
        line(
            "S1",
            10,
            c,
            "개입",
            labels=["restatement", "validation"],
            comments=[critique("major", dimension="공감"), critique("major", "두 번째 논평", dimension="공감")],
            **extra,
        ),
        line("S1", 11, k, "개입", labels=["thought_organizing"], text="(침묵)", act="silence", **extra),
        line("S1", 12, c, "정리", labels=["homework"], **extra),
        line("S1", 13, k, "정리", labels=["expresses_plan"], text="잠깐만요, 하나 더 있어요", act="question", **extra),
    ]


def session_s2(trainee="trainee_a", held_on=DAY - datetime.timedelta(days=3)):
    """6 turns. Client seqs 1, 3, 5 are all no-input (one run of 3); the last (5) is in 정리 with
    ``silence``, which acknowledges the closing."""
    c, k = "counselor", "client"
    extra = {"trainee": trainee, "held_on": held_on.isoformat()}
    return [
        line("S2", 0, c, "라포", labels=["principle_explanation"], **extra),
        line("S2", 1, k, "라포", labels=["involuntary"], text="(침묵)", act="silence", **extra),
        line("S2", 2, c, "라포", labels=["empathy"], **extra),
        line("S2", 3, k, "라포", labels=["involuntary"], text="(고개를 숙임)", **extra),
        line("S2", 4, c, "정리", labels=["psychoeducation"], **extra),
        line("S2", 5, k, "정리", text="(침묵)", act="silence", **extra),
    ]


def session_s3_outside_window(trainee="trainee_a"):
    extra = {"trainee": trainee, "held_on": (DAY - datetime.timedelta(days=40)).isoformat()}
    return [
        line("S3", 0, "counselor", "탐색", labels=["confrontation"], **extra),
        line("S3", 1, "client", "탐색", labels=["defensive"], **extra),
    ]


def session_s4(trainee="trainee_b", held_on=DAY):
    """4 turns, two reflections, no question, the last client turn in 탐색 (no closing figure)."""
    extra = {"trainee": trainee, "held_on": held_on.isoformat()}
    return [
        line("S4", 0, "counselor", "탐색", labels=["reflection"], **extra),
        line("S4", 1, "client", "탐색", labels=["affect_contact"], **extra),
        line("S4", 2, "counselor", "탐색", labels=["reflection"], **extra),
        line("S4", 3, "client", "탐색", labels=["affect_contact"], **extra),
    ]


def import_lines(tmp_path, lines, name="fixture.jsonl"):
    report = import_transcripts(rows=rows_from_path(write_jsonl(tmp_path / name, lines)))
    assert not report.errors, report.errors
    return report


@pytest.fixture
def fixture_sessions(cast, target_bands, tmp_path):
    import_lines(tmp_path, session_s1() + session_s2() + session_s3_outside_window() + session_s4())
    return cast
