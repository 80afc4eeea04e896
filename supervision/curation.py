"""Supervisor writes from the admin transcript: a comment on one turn."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from supervision import rules
from supervision.models import CommentAuthor, SupervisorComment, Turn
from supervision.roles import supervises
from supervision.services import ServiceError


@transaction.atomic
def supervisor_comment_create(
    *, turn: Turn, written_by, kind: str, text: str, intent_deviation: dict | None = None
) -> SupervisorComment:
    """A rationale or critique by the trainee's own supervisor, checked by the shared rules."""
    if not supervises(written_by, turn.session.trainee_id):
        raise PermissionDenied("이 수련생의 담당 슈퍼바이저만 논평을 쓸 수 있습니다.")
    deviation = {key: value for key, value in (intent_deviation or {}).items() if value not in (None, "")}
    problems = []
    if problem := rules.comment_kind_problem(kind):
        problems.append(problem)
    if not (text or "").strip():
        problems.append("내용(text)이 비어 있습니다.")
    problems += [message for _, message in rules.intent_deviation_problems(deviation)]
    if problems:
        raise ServiceError(" ".join(problems))
    comment = SupervisorComment(
        turn=turn,
        kind=kind,
        text=text.strip(),
        intent_deviation=deviation,
        author=CommentAuthor.SUPERVISOR,
        written_by=written_by,
    )
    comment.full_clean()
    comment.save()
    return comment
