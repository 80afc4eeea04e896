"""Saved persona runs (CONTRACT §10): a persona engine's simulated sessions scored against the golden
transition table. Only the figures and the two sides' counts are kept: persona lines are never turns, so
they never reach the sessions list, exports, the gauge, tags or safety events.

Rows are written only by ``supervision.transitions.services.persona_run_create``.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.models import UploadedRecord

from . import counting


class MoveKind(models.TextChoices):
    CATEGORY = counting.BY_CATEGORY, _("기법 범주 (category)")
    TECHNIQUE = counting.BY_TECHNIQUE, _("기법 (technique)")


class PersonaRun(UploadedRecord):
    rater = models.CharField(_("페르소나 엔진 이름"), max_length=100, db_index=True)
    by = models.CharField(_("상담자 개입 단위"), max_length=16, choices=MoveKind.choices, default=MoveKind.CATEGORY)
    min_support = models.PositiveIntegerField(_("최소 지지도"), default=counting.DEFAULT_MIN_SUPPORT)
    sessions = models.PositiveIntegerField(_("모의 회기 수"), default=0)
    turns = models.PositiveIntegerField(_("모의 발화 수"), default=0)
    jsd = models.FloatField(_("JSD(가중 평균)"), null=True, blank=True)
    coverage = models.FloatField(_("포괄률"), null=True, blank=True)
    contexts = models.PositiveIntegerField(_("비교한 맥락 수"), default=0)
    # The score_persona JSON exactly as printed (the API's detail), and the counts behind it for the pages.
    figures = models.JSONField(_("결과"), default=dict)
    golden_counts = models.JSONField(default=list)
    persona_counts = models.JSONField(default=list)

    class Meta:
        db_table = "persona_run"
        ordering = ["-created_at", "-id"]
        verbose_name = _("페르소나 실행")
        verbose_name_plural = _("페르소나 실행")
        constraints = [
            models.CheckConstraint(condition=models.Q(by__in=MoveKind.values), name="persona_run_by_valid"),
            models.CheckConstraint(condition=~models.Q(rater=""), name="persona_run_rater_named"),
            models.CheckConstraint(condition=models.Q(min_support__gte=1), name="persona_run_min_support_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.rater} #{self.pk}"
