"""``train_suggester`` (CONTRACT §9): writes portal-suggester-<n+1> with its training digest and prints the
§7-shaped leave-one-session-out summary last; each version keeps its own run, both listed; ``suggest_labels
--session`` re-suggests stored turns with the current version."""

import io
import json
import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from supervision.agreement.models import AnnotationRun, RunTurn
from supervision.importing.tests.sheets import ENGLISH_HEADER, write_csv
from supervision.suggesting.engine.model import load_model
from supervision.suggesting.loading import DEFAULT_MODEL_PATH, forget_loaded_models
from supervision.suggesting.tests.test_import_suggestions import unlabelled_rows
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db

DEMO = Path(django_settings.BASE_DIR) / "supervision" / "demo"


def _train(data: Path, output: Path, *options: str) -> dict:
    out = io.StringIO()
    call_command(
        "train_suggester",
        "--data",
        str(data),
        "--output",
        str(output),
        "--folds",
        "3",
        *options,
        stdout=out,
        stderr=io.StringIO(),
    )
    return json.loads(out.getvalue().splitlines()[-1])


def _demo_data(folder: Path) -> Path:
    folder.mkdir()
    for name in ("DEMO_01.jsonl", "DEMO_02.jsonl", "DEMO_03.jsonl", "DEMO_05.jsonl"):
        shutil.copy(DEMO / name, folder / name)
    return folder


def test_retraining_writes_the_next_version_and_both_runs_stay_listed(cast, tmp_path, settings, client):
    data = _demo_data(tmp_path / "data")
    output = tmp_path / "model" / "suggester.json"
    settings.SUGGESTER_MODEL_PATH = str(output)
    shipped = load_model(DEFAULT_MODEL_PATH).number

    summary = _train(data, output)
    first = load_model(output)
    assert first.version == f"portal-suggester-{shipped + 1}"
    assert summary["rater"] == first.version and summary["against"] == "golden"
    assert set(summary["axes"]) == {"techniques", "client_states", "stage", "dialog_act"}
    assert {"micro_f1", "macro_f1", "kappa", "labels"} <= set(summary["axes"]["techniques"])
    assert {"support", "found", "recall", "missed"} <= set(summary["safety"])
    assert summary["evaluated_on"] == "repository" and summary["sessions"] == 4
    assert len(first.meta["training_data_sha256"]) == 64

    call_command(
        "import_transcripts",
        str(write_csv(tmp_path / "a.csv", ENGLISH_HEADER, unlabelled_rows("TRN1"))),
        stdout=io.StringIO(),
    )
    summary = _train(data, output)
    second = load_model(output)
    assert second.version == f"portal-suggester-{shipped + 2}"
    assert second.meta["training_data_sha256"] == first.meta["training_data_sha256"]

    forget_loaded_models()
    out = io.StringIO()
    call_command("suggest_labels", "--session", "TRN1", stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1]) == {"model_version": second.version, "sessions": 1, "turns": 6}
    runs = {run.rater: run for run in AnnotationRun.objects.filter(kind="ai")}
    assert set(runs) == {first.version, second.version}
    for run in runs.values():
        assert RunTurn.objects.filter(run=run, turn__session__code="TRN1").count() == 6

    assert client.login(username="staff", password=PASSWORD)
    listed = client.get("/api/v1/annotation-runs/").json()["results"]
    assert {r["rater"] for r in listed} >= {first.version, second.version}
    agreement = client.get(f"/api/v1/annotation-runs/{runs[second.version].pk}/agreement/").json()
    assert agreement["rater"] == second.version


def test_suggest_labels_session_names_an_unknown_session(cast):
    err = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("suggest_labels", "--session", "NOPE", stderr=err)
    assert "row 0, column session:" in err.getvalue()


def test_folds_fitted_in_worker_processes_give_the_same_evaluation(tmp_path, settings):
    data = _demo_data(tmp_path / "data")
    settings.SUGGESTER_MODEL_PATH = str(tmp_path / "unused" / "suggester.json")

    one_at_a_time = _train(data, tmp_path / "one" / "suggester.json")
    in_workers = _train(data, tmp_path / "two" / "suggester.json", "--jobs", "2")

    assert in_workers["folds"] == 3 and in_workers["sessions"] == 4
    assert in_workers["axes"]["techniques"]["turns"] > 0
    assert in_workers == one_at_a_time
