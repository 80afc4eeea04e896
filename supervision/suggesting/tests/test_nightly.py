"""A retrained model, once deployed, is a new version whose run starts empty. The night after, every session
it has not rated is suggested with it (step and chunk part alike): supervisors see suggestions again, the
suggested safety events come back to the queue and sessions nobody labelled are audited on the new version's
labels. The earlier version's run stays as it was; an ordinary night suggests nothing."""

import datetime
import io
import json
import shutil

import pytest
from django.core.management import call_command

from supervision.agreement.models import AnnotationRun, RunTurn
from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
from supervision.models import Session
from supervision.nightly import nightly_review, pending_work, plan, prepare_chunk
from supervision.suggesting.engine.model import _self_digest, version_number, weights_path
from supervision.suggesting.loading import DEFAULT_MODEL_PATH, current_model, forget_loaded_models
from supervision.suggesting.nightly import suggestions_nightly
from supervision.suggesting.selectors import open_suggestions, sessions_without_suggestions, suggested_safety_events
from supervision.suggesting.tests.test_decisions import _force
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows
from supervision.trajectory.models import AuditedRevision, TrajectoryAudit
from supervision.trajectory.services import trajectory_audit_sessions

pytestmark = pytest.mark.django_db
DAY = datetime.date(2026, 12, 6)


def _import(tmp_path, code):
    path = write_csv(tmp_path / f"{code}.csv", ENGLISH_HEADER, unlabelled_rows(code))
    call_command("import_transcripts", str(path), "--trainee", "trainee_a", stdout=io.StringIO())
    return Session.objects.get(code=code)


@pytest.fixture
def deployed_next_version(tmp_path, settings):
    """Deploys the shipped model again as the next version (a retraining's file, as far as the portal can tell)."""

    def deploy() -> str:
        target = tmp_path / "next" / "suggester.json"
        target.parent.mkdir()
        shutil.copy(weights_path(DEFAULT_MODEL_PATH), weights_path(target))
        meta = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))
        meta["model_version"] = f"portal-suggester-{version_number(meta['model_version']) + 1}"
        meta["digest"] = _self_digest(meta)
        target.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        settings.SUGGESTER_MODEL_PATH = str(target)
        forget_loaded_models()
        assert current_model().version == meta["model_version"]
        return meta["model_version"]

    return deploy


def test_the_night_after_a_new_version_suggests_what_it_has_not_rated(
    cast, tmp_path, deployed_next_version, django_capture_on_commit_callbacks
):
    session = _import(tmp_path, "NGT1")
    turns = list(session.turns.order_by("seq"))
    _force(turns[1], ["self_harm_disclosure"])  # what the earlier version said, pinned
    earlier = AnnotationRun.objects.get(rater=current_model().version)
    assert sessions_without_suggestions() == []
    assert suggested_safety_events(cast.supervisor_a)

    trajectory_audit_sessions(session_ids=[session.pk])  # what the import's queued job does
    audited_before = TrajectoryAudit.objects.get(session=session).computed_at
    version = deployed_next_version()
    # until the night: nothing of the new version
    assert sessions_without_suggestions() == [session.pk]
    assert open_suggestions([t.pk for t in turns]) == {}
    assert suggested_safety_events(cast.supervisor_a) == []

    with django_capture_on_commit_callbacks(execute=True):
        result = nightly_review(day=DAY)
    step = result["supervision.suggesting.nightly.suggestions_nightly"]
    assert (step["model_version"], step["sessions"], step["turns"]) == (version, 1, len(turns))
    run = AnnotationRun.objects.get(rater=version)
    assert set(RunTurn.objects.filter(run=run).values_list("turn_id", flat=True)) == {t.pk for t in turns}
    assert RunTurn.objects.filter(run=earlier).count() == len(turns)  # the earlier version's run is kept
    assert set(open_suggestions([t.pk for t in turns])) == {t.pk for t in turns if t.speaker in ("counselor", "client")}
    # the session nobody labelled is audited again, on the new version's labels
    assert AuditedRevision.objects.get(session=session).labels == "suggested"
    assert TrajectoryAudit.objects.get(session=session).computed_at > audited_before

    # an ordinary night: nothing left to suggest, found without reading every turn
    assert sessions_without_suggestions() == []
    assert suggestions_nightly(day=DAY) == {"day": "2026-12-06", "model_version": version, "sessions": 0, "turns": 0}


def test_a_big_nights_chunks_suggest_a_session_before_its_other_parts(cast, tmp_path, deployed_next_version):
    sessions = [_import(tmp_path, f"NGC{n}") for n in range(3)]
    version = deployed_next_version()
    work = pending_work(day=DAY)
    prepare = "supervision.suggesting.nightly.suggestions_prepare"
    assert work[prepare] == [s.pk for s in sessions]
    chunks = plan(work, size=2)
    assert [next(iter(chunk)) for chunk in chunks] == [prepare, prepare]  # first in each chunk
    for chunk in chunks:
        done = prepare_chunk(day=DAY, work=chunk)
        assert done[prepare]["model_version"] == version
    assert sessions_without_suggestions() == []
    assert RunTurn.objects.filter(run__rater=version).count() == sum(s.turns.count() for s in sessions)


def test_finding_the_sessions_to_suggest_costs_two_queries_however_many_there_are(
    cast, tmp_path, deployed_next_version, django_assert_num_queries
):
    sessions = [_import(tmp_path, f"NGQ{n}") for n in range(4)]
    deployed_next_version()
    with django_assert_num_queries(2):  # the version's run, then one probe per session's first turn
        assert sessions_without_suggestions() == [s.pk for s in sessions]
    suggestions_nightly(day=DAY)
    with django_assert_num_queries(2):
        assert sessions_without_suggestions() == []


def test_without_a_usable_model_the_night_suggests_nothing(cast, tmp_path, settings):
    _import(tmp_path, "NGN1")
    settings.SUGGESTER_MODEL_PATH = str(tmp_path / "missing.json")
    forget_loaded_models()
    assert sessions_without_suggestions() == []
    assert suggestions_nightly(day=DAY) == {"day": "2026-12-06", "model_version": None, "sessions": 0, "turns": 0}
