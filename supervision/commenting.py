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

from supervision import pagecache, rules
from supervision.models import CommentAuthor, SupervisorComment, Turn
from taxonomy import catalogue
from taxonomy.lookup import LabelIndex
from taxonomy.normalize import normalize_text, normalize_typed, normalize_value


class CommentRejected(Exception):
    """The comment breaks a rule; ``problems`` maps each field to its Korean messages."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def comment_text_problem(text: str) -> str | None:
    """Non-empty, within the cell-length limit of the importer (``IMPORT_MAX_CELL_CHARS``), no personal
    identifier."""
    if not text.strip():
        return "내용을 입력해 주세요."
    if len(text) > settings.IMPORT_MAX_CELL_CHARS:
        return f"내용은 {settings.IMPORT_MAX_CELL_CHARS:,}자 이내여야 합니다."
    return rules.character_problem(text) or rules.personal_identifier_problem(text)


def comment_problems(
    *, kind: str, text: str, intent_deviation: object, stored: Mapping | None = None
) -> dict[str, list[str]]:
    """Everything wrong with a comment, by field (Korean messages). The admin forms show these too, so
    every entry point checks the same things: kind, text (non-empty, length, privacy guard) and the
    intent deviation's shape and kind."""
    problems: dict[str, list[str]] = {}
    intent_deviation = resolve_intent_deviation(intent_deviation)

    def add(field: str, message: str | None) -> None:
        if message:
            problems.setdefault(field, []).append(message)

    add("kind", rules.comment_kind_problem(kind))
    add("text", comment_text_problem(text))
    shape = rules.intent_deviation_problems(intent_deviation)
    for key, message in shape:
        add("intent_deviation", f"{key}: {message}")
    if isinstance(intent_deviation, Mapping):
        for key, item in intent_deviation.items():
            if isinstance(item, str) and (problem := rules.character_problem(item)):
                add("intent_deviation", f"{key}: {problem}")
    if not shape:
        for key, message in _technique_problems(intent_deviation, stored or {}):
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


def _check(*, kind: str, text: str, intent_deviation: dict, stored: Mapping | None = None) -> None:
    if problems := comment_problems(kind=kind, text=text, intent_deviation=intent_deviation, stored=stored):
        raise CommentRejected(problems)


TECHNIQUE_KEYS = ("expected", "actual")
_KEY_KO = {"expected": "권장(expected)", "actual": "실제(actual)"}


def resolve_intent_deviation(value: object) -> object:
    """Empty items dropped (as in the admin form); ``expected``/``actual`` typed as a technique code, its
    Korean name or an alias (the importer's alias lookup) become the code. A non-object is left for the
    checks, and so is a name that resolves to nothing (``comment_problems`` names the closest labels)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        return value
    resolved, index = {}, None
    for key, item in value.items():
        if item in (None, ""):
            continue
        if key in TECHNIQUE_KEYS and isinstance(item, str) and item not in catalogue.TECHNIQUE_CODES:
            index = index or LabelIndex.load()
            item = index.technique(item) or item
        resolved[key] = item
    return resolved


def _technique_problems(deviation: object, stored: Mapping) -> list[tuple[str, str]]:
    if not isinstance(deviation, Mapping):
        return []
    problems = []
    for key in TECHNIQUE_KEYS:
        item = deviation.get(key)
        # A value already stored is kept as it is (an accepted AI suggestion may name a category band).
        if isinstance(item, str) and item not in catalogue.TECHNIQUE_CODES and item != stored.get(key):
            closest = LabelIndex.load().closest_techniques(item)
            hint = ", ".join(f"{catalogue.TECHNIQUES_BY_CODE[c].ko} ({c})" for c in closest)
            problems.append(
                (
                    key,
                    f"{_KEY_KO[key]} '{item}'은(는) 기법이 아닙니다. 기법 코드나 한글 이름을 적어 주세요"
                    + (f"(가까운 기법: {hint})." if hint else "."),
                )
            )
    return problems


_deviation = resolve_intent_deviation


@transaction.atomic
def supervisor_comment_create(
    *, turn: Turn, kind: str, text: str, intent_deviation: dict | None = None, written_by
) -> SupervisorComment:
    text, deviation = normalize_text(text), _deviation(normalize_value(intent_deviation))
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
    pagecache.sessions_changed([turn.session_id])
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
    text = comment.text if text is None else normalize_text(text)
    deviation = comment.intent_deviation if intent_deviation is None else _deviation(normalize_value(intent_deviation))
    _check(kind=kind, text=text, intent_deviation=deviation, stored=comment.intent_deviation or {})
    comment.kind, comment.text, comment.intent_deviation = kind, text, deviation
    comment.full_clean()
    comment._history_user = changed_by
    comment.save()
    pagecache.sessions_changed([comment.turn.session_id])
    return comment


@transaction.atomic
def supervisor_comment_delete(*, comment: SupervisorComment, deleted_by) -> None:
    _check_may_change(deleted_by, comment)
    comment._history_user = deleted_by
    session_id = comment.turn.session_id
    comment.delete()
    pagecache.sessions_changed([session_id])


MAX_ANSWER_CHARS = 2000


@transaction.atomic
def comment_reply_answer(*, comment: SupervisorComment, user, text: str):
    """The supervisor answers a trainee's reply: one more reply in the comment's thread, by the trainee's
    supervisor only (the trainee reads it on their session page)."""
    from supervision.feedback.models import CommentReply
    from supervision.roles import supervises

    if comment.is_suggestion:
        raise CommentForbidden("AI 제안에는 답할 수 없습니다. 먼저 수락해 주세요.")
    if not supervises(user, comment.turn.session.trainee_id):
        raise CommentForbidden("이 수련생의 슈퍼바이저만 답할 수 있습니다.")
    text = normalize_typed(text)
    problem = None
    if not text:
        problem = "답 내용을 입력해 주세요."
    elif len(text) > MAX_ANSWER_CHARS:
        problem = f"답은 {MAX_ANSWER_CHARS}자 이내로 적어 주세요(지금 {len(text)}자)."
    else:
        problem = rules.character_problem(text) or rules.personal_identifier_problem(text)
    if problem:
        raise CommentRejected({"text": [problem]})
    reply = CommentReply(comment=comment, author=user, text=text)
    reply.full_clean()
    reply.save()
    pagecache.trainees_changed([comment.turn.session.trainee_id])
    return reply
