"""Saved persona runs for tests, made the way the command and the admin make them."""

from __future__ import annotations

from supervision.transitions.models import PersonaRun
from supervision.transitions.reading import read_persona_rows
from supervision.transitions.services import persona_run_create


def saved_persona_run(lines: list[dict], *, rater: str = "persona-7", min_support: int = 1, **extra) -> PersonaRun:
    persona = read_persona_rows(enumerate(lines, start=1))
    assert persona.ok, persona.errors
    return persona_run_create(
        persona=persona, rater=rater, min_support=min_support, file_name=f"{rater}.jsonl", **extra
    )
