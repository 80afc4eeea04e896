"""Annotation runs (CONTRACT §7): one rater's labels for turns already in the portal, kept apart from the
golden labels, and the supervisors' decisions on where they differ.

Rows change only through ``supervision.agreement.services``. A run is a snapshot of what the rater
answered, stored as read: nothing here points the other way, so a run never changes the golden set; only
an adjudication decision does, and it goes through the label service (``supervision.labelling``).
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.models import Turn, UploadedRecord
from taxonomy import catalogue
from taxonomy.models import StageDef

# The axes of CONTRACT §7, in the order of its JSON.
TECHNIQUES, CLIENT_STATES, STAGE, DIALOG_ACT = "techniques", "client_states", "stage", "dialog_act"
AXES = (TECHNIQUES, CLIENT_STATES, STAGE, DIALOG_ACT)
MULTI_LABEL_AXES = (TECHNIQUES, CLIENT_STATES)


class RaterKind(models.TextChoices):
    AI = "ai", _("평가 AI (ai)")
    HUMAN = "human", _("사람 주석자 (human)")


class Axis(models.TextChoices):
    TECHNIQUES = TECHNIQUES, _("기법")
    CLIENT_STATES = CLIENT_STATES, _("내담자 상태")
    STAGE = STAGE, _("단계")
    DIALOG_ACT = DIALOG_ACT, _("대화행위")


class AnnotationRun(UploadedRecord):
    rater = models.CharField(_("평가자 이름"), max_length=100, db_index=True)
    kind = models.CharField(_("종류"), max_length=8, choices=RaterKind.choices, default=RaterKind.AI)
    note = models.CharField(_("모델·주석자 메모"), max_length=500, blank=True)
    taxonomy_version = models.CharField(_("분류 체계 버전"), max_length=16, default=catalogue.TAXONOMY_VERSION)

    class Meta:
        db_table = "annotation_run"
        ordering = ["-created_at", "-id"]
        verbose_name = _("주석 실행")
        verbose_name_plural = _("주석 실행")
        constraints = [
            models.CheckConstraint(condition=models.Q(kind__in=RaterKind.values), name="annotation_run_kind_valid"),
            models.CheckConstraint(condition=~models.Q(rater=""), name="annotation_run_rater_named"),
        ]

    def __str__(self) -> str:
        return f"{self.rater} #{self.pk}"

    @property
    def cache_name(self) -> str:
        """How the run is named in cache keys: a saved run never changes, and its creation time tells it from
        a run of another (test) database that reused its id."""
        return f"{self.pk}@{self.created_at.timestamp()}"


class RunTurn(models.Model):
    """What the run said about one turn, per axis; ``NULL`` (and ``dialog_act_rated`` false) = unrated.

    The multi-label axes are the lists of codes as read (validated against the catalogue by the reader):
    the run is an immutable snapshot, read whole by the scoring, never queried label by label.
    """

    # Every import writes one row per turn here (the suggester's run, CONTRACT §9), so what each row costs
    # is time off every import. ``run`` has no index of its own: the unique (run, turn) index leads with it.
    # Neither key is a foreign-key constraint: PostgreSQL checks those row by row, 40,000 checks for a
    # 20,000-turn import, most of what suggestions added to its time (``make bench-import``).
    # Statement-level triggers (migration 0004) give the same guarantees once per statement: a row names an
    # existing run and turn, locked against deletion until the writer commits, and a run or turn with rows
    # here cannot be deleted under them (the ORM deletes the rows first: ``on_delete`` below).
    run = models.ForeignKey(
        AnnotationRun, on_delete=models.CASCADE, related_name="turns", db_index=False, db_constraint=False
    )
    # A turn removed by a later re-import takes the run's rating of it along.
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    techniques = models.JSONField(null=True, blank=True)
    client_states = models.JSONField(null=True, blank=True)
    # Indexed only where rated (a partial index, in Meta): the suggester's rows never rate the stage.
    stage = models.ForeignKey(
        StageDef,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        db_column="stage",
        related_name="+",
        db_index=False,
    )
    dialog_act_rated = models.BooleanField(default=False)
    dialog_act = models.CharField(max_length=16, null=True, blank=True)
    # An AI rater's probability per label ({code: p}: the labels it gave and its runners-up), when it says
    # (the portal's own suggester does, CONTRACT §9). Shown beside the labels; the scoring never reads it.
    scores = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "annotation_run_turn"
        ordering = ["run", "turn"]
        verbose_name = _("주석 실행의 발화")
        verbose_name_plural = _("주석 실행의 발화")
        indexes = [
            models.Index(fields=["stage"], name="annotation_run_turn_stage", condition=models.Q(stage__isnull=False))
        ]
        constraints = [
            models.UniqueConstraint(fields=["run", "turn"], name="annotation_run_turn_once"),
            models.CheckConstraint(
                condition=models.Q(dialog_act__isnull=True) | models.Q(dialog_act__in=catalogue.DIALOG_ACT_CODES),
                name="annotation_run_turn_dialog_act_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(dialog_act_rated=True) | models.Q(dialog_act__isnull=True),
                name="annotation_run_turn_act_only_when_rated",
            ),
            models.CheckConstraint(
                condition=models.Q(techniques__isnull=False)
                | models.Q(client_states__isnull=False)
                | models.Q(stage__isnull=False)
                | models.Q(dialog_act_rated=True),
                name="annotation_run_turn_rates_something",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.turn_id}"


class Outcome(models.TextChoices):
    ACCEPTED = "accepted", _("평가자 라벨 채택 (accepted)")
    KEPT = "kept", _("골든 라벨 유지 (kept)")


class AdjudicationDecision(models.Model):
    """A supervisor's decision on one difference between a run and the golden set, recorded once.

    ``label`` is the label in question on a multi-label axis, and the rater's class on a single-valued
    one; ``golden``/``rater`` say what each side had when the decision was made.
    """

    run = models.ForeignKey(AnnotationRun, on_delete=models.CASCADE, related_name="decisions")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="+")
    axis = models.CharField(_("축"), max_length=16, choices=Axis.choices)
    label = models.CharField(_("라벨"), max_length=64)
    golden = models.CharField(_("골든"), max_length=64)
    rater = models.CharField(_("평가자"), max_length=64)
    outcome = models.CharField(_("결정"), max_length=16, choices=Outcome.choices)
    note = models.TextField(_("메모"), blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("결정한 사람")
    )
    decided_at = models.DateTimeField(_("결정 시각"), auto_now_add=True)

    class Meta:
        db_table = "annotation_adjudication"
        ordering = ["-decided_at", "-id"]
        verbose_name = _("판정")
        verbose_name_plural = _("판정")
        constraints = [
            models.UniqueConstraint(fields=["run", "turn", "axis", "label"], name="adjudication_once"),
            models.CheckConstraint(condition=models.Q(axis__in=AXES), name="adjudication_axis_valid"),
            models.CheckConstraint(condition=models.Q(outcome__in=Outcome.values), name="adjudication_outcome_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.turn_id}:{self.axis}:{self.label} → {self.outcome}"


class RunUpload(models.Model):
    """A run file uploaded in the admin, kept between its preview and its save (then deleted)."""

    file_name = models.CharField(_("파일 이름"), max_length=255)
    data = models.BinaryField(_("파일 내용"), editable=False)
    rater = models.CharField(_("평가자 이름"), max_length=100)
    kind = models.CharField(_("종류"), max_length=8, choices=RaterKind.choices, default=RaterKind.AI)
    note = models.CharField(_("모델·주석자 메모"), max_length=500, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_run_upload"
        verbose_name = _("주석 실행 업로드")
        verbose_name_plural = _("주석 실행 업로드")

    def __str__(self) -> str:
        return self.file_name
