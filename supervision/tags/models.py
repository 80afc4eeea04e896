"""Tendency tags per trainee (U-tag document, DESIGN.md "Tendency tags").

Rows change only through ``supervision.tags.services``: the lifecycle lives there, these are the facts
it keeps. Evidence, contradictions and transitions are append-only records; ``TraineeTag`` holds the
current state and the two moments the lifecycle measures from.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.tags import catalogue

TAG_CHOICES = [(t.name, f"{t.ko} ({t.name})") for t in catalogue.TAGS]


class Status(models.TextChoices):
    OBSERVATION = "observation", _("관찰 (observation)")
    HYPOTHESIS = "hypothesis", _("가설 (hypothesis)")
    VERIFIED = "verified", _("검증 (verified)")


# Order of the statuses, for ``min_status`` filtering.
STATUS_RANK = {Status.OBSERVATION: 0, Status.HYPOTHESIS: 1, Status.VERIFIED: 2}


class Source(models.TextChoices):
    OBSERVED = catalogue.OBSERVED, _("관찰된 경향 (observed)")
    DECLARED = catalogue.DECLARED, _("스스로 밝힌 초점 (declared)")


class Origin(models.TextChoices):
    GAUGE = "gauge", _("야간 검토 지표 (gauge)")
    SUPERVISOR = "supervisor", _("슈퍼바이저 (supervisor)")
    TRAINEE = "trainee", _("수련생 본인 (trainee)")


class ContradictionSeverity(models.TextChoices):
    LOW = "low", _("낮음 (low)")
    MEDIUM = "medium", _("보통 (medium)")
    HIGH = "high", _("높음 (high)")


class TraineeTag(models.Model):
    trainee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tendency_tags", verbose_name=_("수련생")
    )
    tag = models.CharField(_("태그"), max_length=64, choices=TAG_CHOICES)
    source = models.CharField(_("출처"), max_length=16, choices=Source.choices)
    status = models.CharField(_("상태"), max_length=16, choices=Status.choices, default=Status.OBSERVATION)
    # The current observation cycle began here (creation or the last high-severity demotion);
    # only evidence from this moment on counts towards the two-session promotion.
    observation_since = models.DateTimeField(_("관찰 시작 시각"))
    # When the tag last entered hypothesis status: the clock of UTAG_VERIFY_AFTER_DAYS.
    hypothesis_since = models.DateTimeField(_("가설 진입 시각"), null=True, blank=True)
    verified_at = models.DateTimeField(_("검증 시각"), null=True, blank=True)
    last_updated = models.DateTimeField(_("최종 갱신"))

    class Meta:
        db_table = "trainee_tag"
        ordering = ["trainee", "tag"]
        verbose_name = _("경향 태그")
        verbose_name_plural = _("경향 태그")
        constraints = [
            models.UniqueConstraint(fields=["trainee", "tag"], name="trainee_tag_once"),
            models.CheckConstraint(condition=models.Q(tag__in=catalogue.TAG_NAMES), name="trainee_tag_in_catalogue"),
            models.CheckConstraint(condition=models.Q(status__in=Status.values), name="trainee_tag_status_valid"),
            models.CheckConstraint(condition=models.Q(source__in=Source.values), name="trainee_tag_source_valid"),
            models.CheckConstraint(
                condition=models.Q(verified_at__isnull=True) | models.Q(status=Status.VERIFIED),
                name="trainee_tag_verified_at_only_when_verified",
            ),
            models.CheckConstraint(
                condition=models.Q(hypothesis_since__isnull=False) | models.Q(status=Status.OBSERVATION),
                name="trainee_tag_hypothesis_since_set",
            ),
        ]
        indexes = [models.Index(fields=["status", "hypothesis_since"], name="trainee_tag_verify_due")]

    def __str__(self) -> str:
        return f"{self.trainee} · {self.get_tag_display()} · {self.get_status_display()}"

    @property
    def definition(self) -> catalogue.TagDef:
        return catalogue.TAGS_BY_NAME[self.tag]


class _TagRecord(models.Model):
    """What a piece of evidence and a contradiction both record: where (the session, when there is one),
    the figures, when and by whom."""

    session = models.ForeignKey(
        "supervision.Session",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("회기"),
    )
    detail = models.JSONField(_("수치"), default=dict, blank=True)
    at = models.DateTimeField(_("기록 시각"))
    origin = models.CharField(_("기록 주체"), max_length=16, choices=Origin.choices)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("기록자"),
    )

    class Meta:
        abstract = True
        ordering = ["at", "id"]


class TagEvidence(_TagRecord):
    trainee_tag = models.ForeignKey(
        TraineeTag, on_delete=models.CASCADE, related_name="evidence", verbose_name=_("태그")
    )
    event = models.TextField(_("근거"))

    class Meta(_TagRecord.Meta):
        db_table = "trainee_tag_evidence"
        verbose_name = _("근거")
        verbose_name_plural = _("근거")
        constraints = [
            # Nightly re-runs must not duplicate: one row per (tag, session, event).
            models.UniqueConstraint(fields=["trainee_tag", "session", "event"], name="tag_evidence_once"),
            models.CheckConstraint(condition=models.Q(origin__in=Origin.values), name="tag_evidence_origin_valid"),
        ]

    def __str__(self) -> str:
        return self.event[:60]


class TagContradiction(_TagRecord):
    trainee_tag = models.ForeignKey(
        TraineeTag, on_delete=models.CASCADE, related_name="contradictions", verbose_name=_("태그")
    )
    event = models.TextField(_("반증"))
    severity = models.CharField(_("강도"), max_length=8, choices=ContradictionSeverity.choices)

    class Meta(_TagRecord.Meta):
        db_table = "trainee_tag_contradiction"
        verbose_name = _("반증")
        verbose_name_plural = _("반증")
        constraints = [
            models.UniqueConstraint(fields=["trainee_tag", "session", "event"], name="tag_contradiction_once"),
            models.CheckConstraint(
                condition=models.Q(severity__in=ContradictionSeverity.values), name="tag_contradiction_severity_valid"
            ),
            models.CheckConstraint(condition=models.Q(origin__in=Origin.values), name="tag_contradiction_origin_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_severity_display()} · {self.event[:60]}"


class TagTransition(models.Model):
    """Every status change of a tag, including its creation (``from_status`` empty)."""

    trainee_tag = models.ForeignKey(
        TraineeTag, on_delete=models.CASCADE, related_name="transitions", verbose_name=_("태그")
    )
    from_status = models.CharField(_("이전 상태"), max_length=16, blank=True, choices=Status.choices)
    to_status = models.CharField(_("새 상태"), max_length=16, choices=Status.choices)
    at = models.DateTimeField(_("시각"))
    reason = models.TextField(_("사유"))
    evidence = models.ForeignKey(
        TagEvidence, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("계기 근거")
    )
    contradiction = models.ForeignKey(
        TagContradiction,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("계기 반증"),
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("기록자"),
    )

    class Meta:
        db_table = "trainee_tag_transition"
        ordering = ["at", "id"]
        verbose_name = _("상태 전이")
        verbose_name_plural = _("상태 전이")

    def __str__(self) -> str:
        before = self.get_from_status_display() if self.from_status else "처음"
        return f"{before} → {self.get_to_status_display()}"


class FedSession(models.Model):
    """What the nightly tags step last read for a session: its gauge snapshot's ``figures_digest``, the
    revision of its rows (``gauge.SessionRevision``: its critiques) and a digest of the trainee's tag names
    then. A night reads a session's snapshot and critiques again only when one of them changed, so its
    cost follows what changed, not the size of the history."""

    session = models.OneToOneField("supervision.Session", on_delete=models.CASCADE, primary_key=True, related_name="+")
    figures_digest = models.CharField(max_length=40)
    revision = models.BigIntegerField()
    tags_digest = models.CharField(max_length=32)

    class Meta:
        db_table = "tags_fed_session"
        verbose_name = _("태그 단계가 읽은 회기")
        verbose_name_plural = _("태그 단계가 읽은 회기")

    def __str__(self) -> str:
        return f"{self.session_id}@{self.revision}"
