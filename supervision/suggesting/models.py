"""What supervisors did with the suggester's labels that is not a golden label: dismissals.

The suggestions themselves are rows of the annotation run of the model version (``agreement.RunTurn``,
with ``scores``): the model's answer as given, scored like any rater's. An accepted suggestion becomes a
golden label through the label service (``supervision.labelling``) and needs no row here; a dismissed one
is remembered per model version (the run) so it is not offered again by that version.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.agreement.models import AnnotationRun
from supervision.models import Turn


class SuggestionDismissal(models.Model):
    run = models.ForeignKey(AnnotationRun, on_delete=models.CASCADE, related_name="+", verbose_name=_("모델 버전"))
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="+", verbose_name=_("발화"))
    label = models.CharField(_("라벨"), max_length=64)
    dismissed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("기각한 사람")
    )
    dismissed_at = models.DateTimeField(_("기각 시각"), auto_now_add=True)

    class Meta:
        db_table = "suggestion_dismissal"
        ordering = ["-dismissed_at", "-id"]
        verbose_name = _("기각한 AI 제안")
        verbose_name_plural = _("기각한 AI 제안")
        constraints = [models.UniqueConstraint(fields=["run", "turn", "label"], name="suggestion_dismissed_once")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.turn_id}:{self.label}"
