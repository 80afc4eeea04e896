"""Writes of supervisor comments (rationales and critiques), each one transaction and one audit row.

The audit trail is ``SupervisorComment.history`` (django-simple-history); the acting user is set on the
instance so that the history names them whether the write comes from a request, a task or a command.
Who may create is the caller's check (``roles.supervises``, through ``supervision.api.permissions`` and the
admin); who may change or delete an existing comment is decided here, once, for the admin and the API
(``comment_change_problem``); what may be written is checked here with the shared rules.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings
from django.db import transaction

from supervision import rules
from supervision.models import CommentAuthor, SupervisorComment, Turn


class CommentRejected(Exception):
    """The comment breaks a rule; ``problems`` maps each field to its Korean messages."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def comment_problems(*, kind: str, text: str, intent_deviation: object) -> dict[str, list[str]]:
    """Everything wrong with a comment, by field (Korean messages). The admin forms show these too, so
    every entry point checks the same things: kind, text (non-empty, length, privacy guard) and the
    intent deviation's shape and kind."""
    problems: dict[str, list[str]] = {}

    def add(field: str, message: str | None) -> None:
        if message:
            problems.setdefault(field, []).append(message)

    add("kind", rules.comment_kind_problem(kind))
    if not text.strip():
        add("text", "내용을 입력해 주세요.")
    elif len(text) > settings.IMPORT_MAX_CELL_CHARS:
        add("text", f"내용은 {settings.IMPORT_MAX_CELL_CHARS:,}자 이내여야 합니다.")
    else:
        add("text", rules.personal_identifier_problem(text))
    for key, message in rules.intent_deviation_problems(intent_deviation):
        add("intent_deviation", f"{key}: {message}")
    add("intent_deviation", rules.intent_deviation_kind_problem(kind, intent_deviation))
    return problems


class CommentForbidden(Exception):
    """The user may not change or delete this comment (a message for the user)."""


def comment_change_problem(*, user, comment: SupervisorComment) -> str | None:
    """The author rule (CONTRACT §5): a supervisor's comment is changed or deleted by its author only — not
    by a supervisor the trainee was reassigned to, nor by a superuser — so the byline stays true. AI
    suggestions are accepted or dismissed instead."""
    if comment.is_suggestion:
        return "AI 제안은 수정하거나 지울 수 없습니다. 승인하거나 기각해 주세요."
    if comment.written_by_id is not None and comment.written_by_id == user.pk:
        return None
    return "논평은 작성한 슈퍼바이저만 고치거나 지울 수 있습니다."


def _check_may_change(user, comment: SupervisorComment) -> None:
    if problem := comment_change_problem(user=user, comment=comment):
        raise CommentForbidden(problem)


def _check(*, kind: str, text: str, intent_deviation: dict) -> None:
    if problems := comment_problems(kind=kind, text=text, intent_deviation=intent_deviation):
        raise CommentRejected(problems)


def _deviation(value: object) -> object:
    # Empty items are the same as absent ones, as in the admin form; a non-object is left for _check.
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {key: item for key, item in value.items() if item not in (None, "")}
    return value


@transaction.atomic
def supervisor_comment_create(
    *, turn: Turn, kind: str, text: str, intent_deviation: dict | None = None, written_by
) -> SupervisorComment:
    deviation = _deviation(intent_deviation)
    _check(kind=kind, text=text, intent_deviation=deviation)
    comment = SupervisorComment(
        turn=turn,
        kind=kind,
        text=text,
        intent_deviation=deviation,
        author=CommentAuthor.SUPERVISOR,
        written_by=written_by,
    )
    comment.full_clean()
    comment._history_user = written_by
    comment.save()
    return comment


@transaction.atomic
def supervisor_comment_update(
    *,
    comment: SupervisorComment,
    changed_by,
    kind: str | None = None,
    text: str | None = None,
    intent_deviation: dict | None = None,
) -> SupervisorComment:
    """Changes the given fields (``None`` keeps a field); ``intent_deviation`` replaces the whole object."""
    _check_may_change(changed_by, comment)
    kind = comment.kind if kind is None else kind
    text = comment.text if text is None else text
    deviation = comment.intent_deviation if intent_deviation is None else _deviation(intent_deviation)
    _check(kind=kind, text=text, intent_deviation=deviation)
    comment.kind, comment.text, comment.intent_deviation = kind, text, deviation
    comment.full_clean()
    comment._history_user = changed_by
    comment.save()
    return comment


@transaction.atomic
def supervisor_comment_delete(*, comment: SupervisorComment, deleted_by) -> None:
    _check_may_change(deleted_by, comment)
    comment._history_user = deleted_by
    comment.delete()
