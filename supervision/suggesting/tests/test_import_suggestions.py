"""Suggestions follow imports (CONTRACT §9): every imported turn has its suggestion when the import returns,
whichever way it came in (command line, admin upload, background job, a real Celery worker); a re-import
replaces the session's suggestions; they never reach the golden labels until accepted."""

import io
import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from supervision.agreement.models import AnnotationRun, RunTurn
from supervision.importing import jobs
from supervision.importing.models import ImportJob
from supervision.importing.tests.sheets import ENGLISH_HEADER, session_rows, write_csv, write_xlsx
from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.suggesting.engine.features import TurnInput, session_inputs
from supervision.suggesting.loading import current_model
from supervision.testing import PASSWORD

TEXTS = [
    "오늘 어떤 이야기를 하고 싶은지 편하게 말해 줄래요?",
    "잘 모르겠어요. 요즘은 그냥 다 귀찮고 사라지고 싶다는 생각만 들어요.",
    "사라지고 싶다는 생각이 들 만큼 힘들었군요. 혹시 스스로를 해칠 생각도 해 봤어요?",
    "(침묵) …가끔요. 팔에 상처를 낸 적도 있어요.",
    "말해 줘서 고마워요. 지금 그 마음이 0에서 10 중에 어느 정도인지 말해 볼 수 있을까요?",
    "음… 한 7 정도요.",
]


def unlabelled_rows(code: str, turns: int = len(TEXTS)) -> list[list]:
    """A session of ``turns`` unlabelled turns, its words ``TEXTS`` over again."""
    rows = session_rows(code, turns)
    for seq, row in enumerate(rows):
        row[5], row[6], row[7] = TEXTS[seq % len(TEXTS)], "", ""
    return rows


def read_in_order(turns: list[Turn], model) -> list[TurnInput]:
    """What the model reads of a stored session's turns (given in order), each with the turns before it."""
    return session_inputs(((t.text, t.stage_id, t.nonverbal or ()) for t in turns), model.turns_before)


def assert_every_turn_suggested(code: str) -> AnnotationRun:
    model = current_model()
    run = AnnotationRun.objects.get(rater=model.version, kind="ai")
    turns = list(Turn.objects.filter(session__code=code).order_by("seq"))
    rows = {r.turn_id: r for r in RunTurn.objects.filter(run=run, turn__in=turns)}
    assert len(turns) > 0 and set(rows) == {t.pk for t in turns}
    for turn in turns:
        row = rows[turn.pk]
        if turn.speaker == "counselor":
            assert row.techniques is not None and row.client_states is None
        else:
            assert row.client_states is not None and row.techniques is None
        assert set(row.techniques or row.client_states or []) <= set(row.scores)
    return run


@pytest.mark.django_db
def test_it_suggests_every_turn_of_a_command_line_import_and_writes_no_golden_label(cast, tmp_path):
    path = write_csv(tmp_path / "cli.csv", ENGLISH_HEADER, unlabelled_rows("SGI1"))
    out = io.StringIO()
    call_command("import_transcripts", str(path), stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1])["turns"] == len(TEXTS)
    run = assert_every_turn_suggested("SGI1")
    assert run.kind == "ai" and run.rater == current_model().version
    assert not TurnTechnique.objects.filter(turn__session__code="SGI1").exists()
    assert not TurnClientState.objects.filter(turn__session__code="SGI1").exists()


@pytest.mark.django_db
def test_a_reimport_replaces_the_sessions_suggestions(cast, tmp_path):
    rows = unlabelled_rows("SGI2")
    call_command("import_transcripts", str(write_csv(tmp_path / "a.csv", ENGLISH_HEADER, rows)), stdout=io.StringIO())
    run = assert_every_turn_suggested("SGI2")
    first = RunTurn.objects.get(run=run, turn__utterance_id="SGI2-C-001")
    rows[0][5] = "지금 마음이 어떤지 0부터 10까지 숫자로 말해 볼래요?"
    call_command(
        "import_transcripts", str(write_csv(tmp_path / "b.csv", ENGLISH_HEADER, rows[:4])), stdout=io.StringIO()
    )
    assert_every_turn_suggested("SGI2")
    assert RunTurn.objects.filter(run=run, turn__session__code="SGI2").count() == 4
    again = RunTurn.objects.get(run=run, turn__utterance_id="SGI2-C-001")
    assert again.pk != first.pk
    assert again.scores != first.scores


@pytest.mark.django_db
def test_an_admin_upload_is_suggested_when_confirmed(client, cast, tmp_path):
    assert client.login(username="staff", password=PASSWORD)
    path = write_xlsx(tmp_path / "adm.xlsx", ENGLISH_HEADER, unlabelled_rows("SGI3"))
    url = reverse("admin:supervision_session_import")
    response = client.post(url, {"file": SimpleUploadedFile("adm.xlsx", path.read_bytes()), "trainee": "trainee_a"})
    assert not RunTurn.objects.filter(turn__session__code="SGI3").exists()  # the preview writes nothing
    client.post(response["Location"])
    assert_every_turn_suggested("SGI3")


@pytest.mark.django_db
def test_a_background_job_is_suggested_when_it_ends(
    client, cast, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_ASYNC_THRESHOLD_BYTES = 100  # the upload runs as a job (in-process here: tasks are eager)
    path = write_csv(tmp_path / "job.csv", ENGLISH_HEADER, unlabelled_rows("SGI4"))
    assert client.login(username="staff", password=PASSWORD)
    url = reverse("admin:supervision_session_import")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"file": SimpleUploadedFile("job.csv", path.read_bytes())})
    with django_capture_on_commit_callbacks(execute=True):
        client.post(response["Location"])
    assert ImportJob.objects.get().status == ImportJob.Status.DONE
    assert_every_turn_suggested("SGI4")


def wait_for(job, status) -> None:
    deadline = time.monotonic() + 90
    while ImportJob.objects.get(pk=job.pk).status != status:
        assert time.monotonic() < deadline, "the worker did not finish in time"
        time.sleep(0.5)


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_suggests_the_turns_it_imports(cast, tmp_path, settings, worker):
    settings.IMPORT_ASYNC_THRESHOLD_BYTES = 100
    path = write_csv(tmp_path / "wrk.csv", ENGLISH_HEADER, unlabelled_rows("SGI5"))
    job = jobs.import_job_create(name="wrk.csv", data=path.read_bytes(), created_by=cast.staff)
    jobs.import_job_start(job=job, mode=ImportJob.Mode.PREVIEW)
    wait_for(job, ImportJob.Status.PREVIEWED)
    jobs.import_job_start(job=ImportJob.objects.get(pk=job.pk), mode=ImportJob.Mode.WRITE)
    wait_for(job, ImportJob.Status.DONE)
    assert Session.objects.get(code="SGI5").turns.count() == len(TEXTS)
    assert_every_turn_suggested("SGI5")


@pytest.mark.django_db
def test_a_failed_import_leaves_no_suggestion(cast, tmp_path):
    rows = unlabelled_rows("SGI6")
    rows[3][3] = "누군가"  # not a speaker
    with pytest.raises(SystemExit):
        call_command(
            "import_transcripts",
            str(write_csv(tmp_path / "bad.csv", ENGLISH_HEADER, rows)),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    assert not RunTurn.objects.exists()


@pytest.mark.django_db
def test_chunks_suggested_alongside_the_import_match_the_model_turn_for_turn(cast, tmp_path, monkeypatch):
    """The import runs the model on a chunk in a thread while it writes that chunk and reads the next; with
    a chunk of two rows, three chunks overlap, and each stored row is exactly the model's answer for its
    turn (labels and their probabilities) read with the turns before it — across chunks too — written in the
    import's transaction."""
    monkeypatch.setattr("supervision.importing.services.CHUNK_ROWS", 2)
    call_command(
        "import_transcripts",
        str(write_csv(tmp_path / "c.csv", ENGLISH_HEADER, unlabelled_rows("SGI7"))),
        stdout=io.StringIO(),
    )
    run = assert_every_turn_suggested("SGI7")
    turns = list(Turn.objects.filter(session__code="SGI7").order_by("seq"))
    model = current_model()
    expected = model.suggest(read_in_order(turns, model), [t.speaker for t in turns])
    rows = {r.turn_id: r for r in RunTurn.objects.filter(run=run)}
    for turn, suggestion in zip(turns, expected, strict=True):
        row = rows[turn.pk]
        assert (row.techniques if turn.speaker == "counselor" else row.client_states) == suggestion.labels
        assert (row.scores or {}) == {code: suggestion.scores[code] for code in suggestion.labels}


@pytest.mark.django_db
def test_a_model_that_fails_in_its_thread_fails_the_import_and_writes_nothing(cast, tmp_path, monkeypatch):
    monkeypatch.setattr("supervision.importing.services.CHUNK_ROWS", 2)

    def broken(model, turns, inputs):
        raise RuntimeError("model broke")

    monkeypatch.setattr("supervision.suggesting.services._predict", broken)
    with pytest.raises(RuntimeError, match="model broke"):
        call_command(
            "import_transcripts",
            str(write_csv(tmp_path / "f.csv", ENGLISH_HEADER, unlabelled_rows("SGI8"))),
            stdout=io.StringIO(),
        )
    assert not Session.objects.filter(code="SGI8").exists()
    assert not RunTurn.objects.exists()


@pytest.mark.django_db
def test_a_turn_whose_neighbour_was_written_chunks_before_is_read_with_it(cast, tmp_path, monkeypatch):
    """The model starts on a chunk before its turns are written; a turn whose neighbours are neither in its
    chunk nor in the one before (the file interleaves sessions) waits for its id, and its neighbours' texts
    are read back from the database."""
    monkeypatch.setattr("supervision.importing.services.CHUNK_ROWS", 2)
    first, second = unlabelled_rows("SGI9"), unlabelled_rows("SGIA")
    rows = first[:3] + second[:3] + first[3:] + second[3:]  # chunks f0 f1 | f2 s0 | s1 s2 | f3 f4 | f5 s3 | …
    call_command("import_transcripts", str(write_csv(tmp_path / "i.csv", ENGLISH_HEADER, rows)), stdout=io.StringIO())
    model = current_model()
    run = assert_every_turn_suggested("SGI9")
    stored = {r.turn_id: r for r in RunTurn.objects.filter(run=run)}
    for code in ("SGI9", "SGIA"):
        turns = list(Turn.objects.filter(session__code=code).order_by("seq"))
        expected = model.predict(read_in_order(turns, model), [t.speaker for t in turns], runners_up=0)
        for turn, (labels, scores) in zip(turns, expected, strict=True):
            row = stored[turn.pk]
            assert (row.techniques if turn.speaker == "counselor" else row.client_states) == labels
            assert (row.scores or {}) == dict(scores)
    # the client turn that follows a risk question two chunks later is read with that question
    answer = Turn.objects.get(session__code="SGI9", seq=3)
    alone = model.predict([TurnInput(answer.text, answer.stage_id, answer.nonverbal, "")], ["client"], runners_up=0)
    assert stored[answer.pk].client_states != alone[0][0] or stored[answer.pk].scores != (dict(alone[0][1]) or None)
