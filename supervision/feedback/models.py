"""What trainees do with their critiques: mark them read and reply to them.

Kept in their own app (own migrations) so the transcript model in ``supervision`` stays untouched.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.models import SupervisorComment


class CommentRead(models.Model):
    """One row per (critique, reader): the read marker survives edits of the critique."""

    comment = models.ForeignKey(
        SupervisorComment, on_delete=models.CASCADE, related_name="reads", verbose_name=_("논평")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comment_reads", verbose_name=_("읽은 사람")
    )
    read_at = models.DateTimeField(_("읽은 시각"), auto_now_add=True)

    class Meta:
        db_table = "comment_read"
        verbose_name = _("논평 읽음 표시")
        verbose_name_plural = _("논평 읽음 표시")
        constraints = [models.UniqueConstraint(fields=["comment", "user"], name="comment_read_once_per_user")]

    def __str__(self) -> str:
        return f"{self.user} ✓ {self.comment_id}"


class CommentReply(models.Model):
    comment = models.ForeignKey(
        SupervisorComment, on_delete=models.CASCADE, related_name="replies", verbose_name=_("논평")
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="comment_replies", verbose_name=_("작성자")
    )
    text = models.TextField(_("답글"))
    created_at = models.DateTimeField(_("작성 시각"), auto_now_add=True)

    class Meta:
        db_table = "comment_reply"
        ordering = ["comment", "created_at", "id"]
        verbose_name = _("수련생 답글")
        verbose_name_plural = _("수련생 답글")
        constraints = [
            models.CheckConstraint(condition=~models.Q(text=""), name="comment_reply_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.author}: {self.text[:40]}"
