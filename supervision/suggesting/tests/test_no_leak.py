"""Suggestions are not golden: until a supervisor accepts them they are absent from the golden export, the
review gauge, the tendency tags and the curated safety events."""

import io
import json

import pytest
from django.core.management import call_command

from supervision.gauge.models import GaugeSnapshot
from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
from supervision.models import Session
from supervision.safety.selectors import safety_events
from supervision.suggesting.tests.test_decisions import _force
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows
from supervision.tags.models import TraineeTag

pytestmark = pytest.mark.django_db


def test_suggestions_stay_out_of_export_gauge_tags_and_curated_safety_events(cast, tmp_path):
    path = write_csv(tmp_path / "leak.csv", ENGLISH_HEADER, unlabelled_rows("LEAK1"))
    call_command("import_transcripts", str(path), "--trainee", "trainee_a", stdout=io.StringIO())
    session = Session.objects.get(code="LEAK1")
    turns = list(session.turns.order_by("seq"))
    _force(turns[3], ["self_harm_disclosure", "affect_contact"])
    _force(turns[0], ["facilitative_question", "empathy"])

    exported = tmp_path / "golden.jsonl"
    call_command("export_golden", "--session", "LEAK1", "--output", str(exported), stdout=io.StringIO())
    lines = [json.loads(line) for line in exported.read_text().splitlines() if line.strip()]
    assert len(lines) == len(turns)
    assert all(line["techniques"] == [] and line["client_states"] == [] for line in lines)

    call_command("compute_gauges", stdout=io.StringIO())
    snapshot = GaugeSnapshot.objects.get(session=session)
    assert snapshot.technique_labels == 0
    assert not any(snapshot.techniques.values())
    assert not TraineeTag.objects.filter(trainee=cast.trainee_a).exists()

    assert list(safety_events(cast.supervisor_a)) == []
