"""Code tables of the taxonomy document §7, seeded from ``taxonomy.catalogue``.

Codes are immutable: the admin offers no rename and no delete, label rows are protected from
deletion by every foreign key that points at them, and on PostgreSQL a trigger refuses any UPDATE
of a code and any DELETE (migration 0003).
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from taxonomy import catalogue


class StageDef(models.Model):
    code = models.CharField(_("코드"), max_length=8, primary_key=True)
    ko = models.CharField(_("단계"), max_length=32)
    definition = models.TextField(_("정의"))
    position = models.PositiveSmallIntegerField(_("순서"), unique=True)

    class Meta:
        db_table = "stage_def"
        ordering = ["position"]
        verbose_name = _("회기 단계")
        verbose_name_plural = _("회기 단계")

    def __str__(self) -> str:
        return self.code


class LabelDef(models.Model):
    """Fields shared by the two label axes."""

    id = models.SmallAutoField(primary_key=True)
    code = models.CharField(_("코드"), max_length=64, unique=True)
    ko = models.CharField(_("한글명"), max_length=64)
    definition = models.TextField(_("조작적 정의"))
    surface_labels = models.JSONField(_("표면 라벨 예시"), default=list, blank=True)
    example = models.TextField(_("예시 발화(합성)"), blank=True)
    source_family = models.JSONField(_("출처 계열"), default=list, blank=True)
    since = models.CharField(_("추가 버전"), max_length=16)
    position = models.PositiveSmallIntegerField(_("문서 순서"), unique=True)

    class Meta:
        abstract = True
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.ko} ({self.code})"


class TechniqueLabelDef(LabelDef):
    category = models.CharField(
        _("군집"), max_length=16, choices=[(c.code, f"{c.ko} ({c.code})") for c in catalogue.CATEGORIES]
    )

    class Meta(LabelDef.Meta):
        db_table = "technique_label_def"
        verbose_name = _("기법 라벨")
        verbose_name_plural = _("기법 라벨")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(category__in=catalogue.CATEGORY_CODES), name="technique_category_valid"
            ),
        ]


class ClientStateDef(LabelDef):
    safety_critical = models.BooleanField(_("안전 핵심"), default=False)

    class Meta(LabelDef.Meta):
        db_table = "client_state_def"
        verbose_name = _("내담자 상태 라벨")
        verbose_name_plural = _("내담자 상태 라벨")


class LabelAxis(models.TextChoices):
    TECHNIQUE = "technique", _("기법")
    CLIENT_STATE = "client_state", _("내담자 상태")


class LabelAlias(models.Model):
    """A surface label or Korean name that stands for a code (curated by staff in the admin)."""

    axis = models.CharField(_("축"), max_length=16, choices=LabelAxis.choices)
    alias = models.CharField(_("표기"), max_length=200)
    normalized = models.CharField(_("정규화 표기"), max_length=200, editable=False)
    technique = models.ForeignKey(
        TechniqueLabelDef, on_delete=models.PROTECT, null=True, blank=True, verbose_name=_("기법")
    )
    client_state = models.ForeignKey(
        ClientStateDef, on_delete=models.PROTECT, null=True, blank=True, verbose_name=_("내담자 상태")
    )
    seeded = models.BooleanField(_("문서에서 적재"), default=False, editable=False)

    class Meta:
        db_table = "label_alias"
        ordering = ["axis", "normalized"]
        verbose_name = _("라벨 별칭")
        verbose_name_plural = _("라벨 별칭")
        constraints = [
            models.UniqueConstraint(fields=["axis", "normalized"], name="label_alias_unique_per_axis"),
            models.CheckConstraint(
                condition=(
                    models.Q(axis=LabelAxis.TECHNIQUE, technique__isnull=False, client_state__isnull=True)
                    | models.Q(axis=LabelAxis.CLIENT_STATE, technique__isnull=True, client_state__isnull=False)
                ),
                name="label_alias_points_at_its_axis",
            ),
        ]

    def __str__(self) -> str:
        label = self.technique if self.axis == LabelAxis.TECHNIQUE else self.client_state
        if label is None:
            return self.alias
        named = f"{label.ko} ({self.code})"
        return named if self.alias == self.code else f"{self.alias} → {named}"

    @property
    def code(self) -> str:
        label = self.technique if self.axis == LabelAxis.TECHNIQUE else self.client_state
        return label.code if label else ""
