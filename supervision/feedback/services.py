"""Writes of the trainee pages: marking a critique read and replying to it."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from supervision import pagecache, rules
from supervision.feedback.models import CommentRead, CommentReply
from supervision.models import SupervisorComment
from supervision.services import ServiceError
from taxonomy.normalize import normalize_typed

MAX_REPLY_CHARS = 2000


def _require_own_session(comment: SupervisorComment, user) -> None:
    # Only the trainee whose session it is reads and answers critiques; supervisors write theirs in the admin.
    if comment.is_suggestion or comment.turn.session.trainee_id != user.pk:
        raise PermissionDenied("이 논평에는 해당 수련생만 읽음 표시와 답글을 남길 수 있습니다.")


@transaction.atomic
def comment_mark_read(*, comment: SupervisorComment, user) -> CommentRead:
    """Marks the comment read by ``user`` (idempotent: the first read time is kept)."""
    _require_own_session(comment, user)
    read, created = CommentRead.objects.get_or_create(comment=comment, user=user)
    if created:
        pagecache.trainees_changed([user.pk])
    return read


@transaction.atomic
def comment_mark_all_read(*, user, session=None) -> int:
    """Marks every shown comment on ``user``'s own sessions (or on one of them) read; returns how many
    were new. Other people's sessions are left alone whatever ``session`` names."""
    comments = SupervisorComment.objects.filter(is_suggestion=False, turn__session__trainee=user).exclude(
        reads__user=user
    )
    if session is not None:
        comments = comments.filter(turn__session=session)
    rows = [CommentRead(comment_id=pk, user=user) for pk in comments.values_list("pk", flat=True)]
    # ignore_conflicts: a read marked in another tab meanwhile is already what we want.
    CommentRead.objects.bulk_create(rows, ignore_conflicts=True)
    if rows:
        pagecache.trainees_changed([user.pk])
    return len(rows)


@transaction.atomic
def comment_reply_create(*, comment: SupervisorComment, author, text: str) -> CommentReply:
    """Adds the trainee's reply; replying also marks the comment read."""
    _require_own_session(comment, author)
    text = normalize_typed(text)
    if not text:
        raise ServiceError("답글 내용이 비어 있습니다. 내용을 적어 주세요.")
    if len(text) > MAX_REPLY_CHARS:
        raise ServiceError(f"답글은 {MAX_REPLY_CHARS}자 이내로 적어 주세요(지금 {len(text)}자).")
    if problem := rules.character_problem(text) or rules.personal_identifier_problem(text):
        raise ServiceError(problem)
    reply = CommentReply(comment=comment, author=author, text=text)
    reply.full_clean()
    reply.save()
    CommentRead.objects.get_or_create(comment=comment, user=author)
    pagecache.trainees_changed([author.pk])
    return reply
