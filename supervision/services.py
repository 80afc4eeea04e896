"""Writes outside the importer: a turn's words in the admin (accounts: ``supervision.people.services``)."""

from __future__ import annotations

from django.db import transaction

from supervision import pagecache, rules
from supervision.models import Turn
from supervision.signals import turns_rewritten_in
from taxonomy.models import StageDef
from taxonomy.normalize import normalize_text, normalize_value


class ServiceError(Exception):
    """A write refused for a reason the caller should show to the user; ``field`` names the input at fault
    when there is one (the roster import puts the message on that column)."""

    def __init__(self, message="", *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class TurnRejected(ServiceError):
    """The edit breaks a rule; ``problems`` maps each field to its Korean messages."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def turn_edit_problems(*, text: str, nonverbal: object, dialog_act: str | None) -> dict[str, list[str]]:
    """Everything wrong with a turn's new words, cues and act, by field (the importer's rules)."""
    problems: dict[str, list[str]] = {}
    for field, value in (("text", text), ("nonverbal", " ".join(nonverbal) if isinstance(nonverbal, list) else "")):
        if isinstance(value, str) and (problem := rules.character_problem(value)):
            problems.setdefault(field, []).append(problem)
    if problem := rules.nonverbal_problem(nonverbal):
        problems["nonverbal"] = [problem]
        nonverbal = []
    act, _correction = rules.corrected_dialog_act(text, dialog_act)
    for field, message in rules.turn_content_problems(text=text, nonverbal=nonverbal, dialog_act=act):
        problems.setdefault(field, []).append(message)
    return problems


@transaction.atomic
def turn_update(*, turn: Turn, stage: StageDef, text: str, nonverbal: list[str], dialog_act: str | None) -> list[str]:
    """Changes a turn's stage, words, cues and act under the importer's rules; returns the warnings
    (the silence correction). Speaker, seq and utterance id never change after import."""
    text, nonverbal = normalize_text(text), normalize_value(nonverbal)
    if problems := turn_edit_problems(text=text, nonverbal=nonverbal, dialog_act=dialog_act):
        raise TurnRejected(problems)
    act, correction = rules.corrected_dialog_act(text, dialog_act)
    # as stored (a model form has already put the new values on ``turn``)
    stored = Turn.objects.filter(pk=turn.pk).values_list("stage_id", "text", "nonverbal").get()
    rewritten = stored != (stage.pk, text, nonverbal)
    turn.stage, turn.text, turn.nonverbal, turn.dialog_act = stage, text, nonverbal, act
    turn.full_clean(exclude=["session"])
    turn.save(update_fields=["stage", "text", "nonverbal", "dialog_act"])
    pagecache.sessions_changed([turn.session_id])
    if rewritten:  # what was read from the old words (the suggester's suggestions) is read again
        turns_rewritten_in(sender=turn_update, session_ids=[turn.session_id], turn_ids=[turn.pk])
    return [correction] if correction else []
