"""Saved annotation runs for tests, made the way the admin and the command make them."""

from __future__ import annotations

from supervision.agreement.models import AnnotationRun
from supervision.agreement.reading import read_run_rows
from supervision.agreement.services import annotation_run_create


def saved_run(lines: list[dict], *, rater: str = "eval-ai-3", kind: str = "ai", uploaded_by=None) -> AnnotationRun:
    run_file = read_run_rows(enumerate(lines, start=1))
    assert run_file.ok, run_file.errors
    return annotation_run_create(
        run_file=run_file, rater=rater, kind=kind, file_name=f"{rater}.jsonl", uploaded_by=uploaded_by
    )


def rating_of(turn, **axes) -> dict:
    """A run line for a stored turn; by default it repeats the golden answer on the speaker's axis."""
    return {"utterance_id": turn.utterance_id, **axes}
