"""Speed work must not change a verdict: every window file in benchmarks/trajectory/, audited through the
command's path (chunks of lines parsed, validated and audited), gives the labels and scores it gave before.

``expected_audits.json`` was written by the engine as it stood before the command was profiled and sped up
(commit 02a8602). A deliberate rule change regenerates it, in the same commit, with the figures of the change.
"""

import json
from pathlib import Path

import pytest

from supervision.trajectory.engine.io import BATCH, audit_lines

WINDOWS = Path(__file__).resolve().parents[3] / "benchmarks" / "trajectory"
EXPECTED = json.loads((Path(__file__).resolve().parent / "expected_audits.json").read_text(encoding="utf-8"))


def test_every_window_file_is_pinned():
    assert sorted(EXPECTED) == sorted(p.name for p in WINDOWS.glob("*.jsonl"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_labels_and_scores_are_unchanged(name):
    lines = (WINDOWS / name).read_bytes().split(b"\n")
    got = []
    for start in range(0, len(lines), BATCH):
        errors, results = audit_lines(lines[start : start + BATCH], start + 1)
        assert errors == []
        got += [[r["window_id"], r["label"], r["score"]] for r in results]
    assert got == EXPECTED[name]
