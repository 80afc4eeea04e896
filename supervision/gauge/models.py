"""Review-gauge snapshots and the target bands they are measured against (README, "Review gauge").

Snapshots are recomputed from the source rows by ``services.gauge_compute``; nothing here keeps a
counter up to date. Every figure is defined in ``supervision/gauge/README.md`` and in ``figures.py``.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.models import Session, SupervisorComment, Turn
from taxonomy import catalogue

CATEGORY_CHOICES = [(c.code, f"{c.ko} ({c.code})") for c in catalogue.CATEGORIES]


class TargetBand(models.Model):
    """The share of a category's technique labels a trainee is expected to stay within.

    Edited by admins; a change applies from the next gauge run. Each snapshot stores the bands it was
    computed with, so an edit never rewrites history. Defaults: migration ``0002_seed_target_bands``.
    """

    category = models.CharField(_("기법 군집"), max_length=16, choices=CATEGORY_CHOICES, unique=True)
    low = models.DecimalField(_("하한 비율"), max_digits=4, decimal_places=3)
    high = models.DecimalField(_("상한 비율"), max_digits=4, decimal_places=3)
    rationale = models.TextField(_("근거"), blank=True)
    updated_at = models.DateTimeField(_("수정 시각"), auto_now=True)

    class Meta:
        db_table = "gauge_target_band"
        ordering = ["category"]
        verbose_name = _("목표 범위")
        verbose_name_plural = _("목표 범위")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(low__gte=0) & models.Q(high__lte=1) & models.Q(low__lte=models.F("high")),
                name="target_band_ordered_within_0_1",
                violation_error_message=_("하한이 상한보다 큽니다. 0 ≤ 하한 ≤ 상한 ≤ 1이 되게 적어 주세요."),
            ),
            models.CheckConstraint(
                condition=models.Q(category__in=catalogue.CATEGORY_CODES), name="target_band_category_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_category_display()} {self.low}–{self.high}"


class GaugeSnapshot(models.Model):
    """One day's review gauge for a trainee: trainee-wide (``session`` null: the sessions held in the
    ``GAUGE_WINDOW_DAYS`` days ending ``date``) or for one session. Shape of the API: CONTRACT.md §6."""

    trainee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="gauge_snapshots", verbose_name=_("수련생")
    )
    session = models.ForeignKey(
        Session,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="gauge_snapshots",
        verbose_name=_("회기(비면 수련생 전체)"),
    )
    date = models.DateField(_("기준일"))
    sessions = models.PositiveIntegerField(_("회기 수"), default=0)
    turns = models.PositiveIntegerField(_("발화 수"), default=0)
    counselor_turns = models.PositiveIntegerField(_("상담자 발화 수"), default=0)
    technique_labels = models.PositiveIntegerField(_("기법 라벨 수"), default=0)
    categories = models.JSONField(_("군집별 비율"), default=dict)
    techniques = models.JSONField(_("기법별 빈도"), default=dict)
    reflections = models.PositiveIntegerField(_("반영 수"), default=0)
    questions = models.PositiveIntegerField(_("질문 수"), default=0)
    rq_ratio = models.FloatField(_("반영/질문 비"), null=True, blank=True)
    rq_band = models.CharField(_("MITI 구간"), max_length=16, blank=True, default="")
    critiques = models.JSONField(_("심각도별 논평"), default=dict)
    critique_dimensions = models.JSONField(_("차원별 논평"), default=dict)
    intent_deviation_turns = models.PositiveIntegerField(_("의도 이탈 발화 수"), default=0)
    intent_deviation_rate = models.FloatField(_("의도 이탈률"), null=True, blank=True)
    silent_close_events = models.PositiveIntegerField(_("연속 무응답 종료"), default=0)
    closing_acknowledged = models.PositiveIntegerField(_("종결 수긍"), default=0)
    closed_on_resuming_client = models.PositiveIntegerField(_("재개 중 종결"), default=0)
    client_state_transitions = models.JSONField(_("내담자 상태 전이"), default=dict)
    safety = models.JSONField(_("안전 사건"), default=dict)
    bands = models.JSONField(_("적용된 목표 범위"), default=dict)
    # A digest of every figure above (bands included): a re-run rewrites only rows whose figures changed.
    figures_digest = models.CharField(max_length=40, blank=True, default="", editable=False)
    computed_at = models.DateTimeField(_("계산 시각"))

    class Meta:
        db_table = "gauge_snapshot"
        ordering = ["-date", "trainee", "session"]
        verbose_name = _("검토 지표 스냅숏")
        verbose_name_plural = _("검토 지표 스냅숏")
        constraints = [
            # Two partial indexes because NULL session rows never collide in an ordinary unique index;
            # the upserts in services.py name these exact predicates as their ON CONFLICT targets.
            models.UniqueConstraint(
                fields=["trainee", "date"], condition=models.Q(session__isnull=True), name="gauge_trainee_day_once"
            ),
            models.UniqueConstraint(
                fields=["trainee", "session", "date"],
                condition=models.Q(session__isnull=False),
                name="gauge_session_day_once",
            ),
        ]
        indexes = [models.Index(fields=["trainee", "-date"], name="gauge_trainee_newest")]

    def __str__(self) -> str:
        scope = self.session.code if self.session_id and self.session else _("전체")
        return f"{self.trainee} {self.date} {scope}"


class SessionRevision(models.Model):
    """The newest revision of a session's rows, set by database triggers (migration ``0003_session_tally``).

    Any statement that writes a session's turns, technique or client-state links, or accepted comments —
    importer, admin, API or plain SQL — gives the session a new value from one sequence. No Python code
    writes this table.

    A plain id, not a foreign key: deleting a session deletes its turns first, whose trigger writes a
    revision the deferred foreign-key check would then refuse. A trigger on ``sessions`` removes the row
    when the session goes.
    """

    session_id = models.BigIntegerField(primary_key=True)
    revision = models.BigIntegerField()

    class Meta:
        db_table = "gauge_session_revision"

    def __str__(self) -> str:
        return f"{self.session_id}@{self.revision}"


class SessionTally(models.Model):
    """One session's additive counts as the gauge's aggregate statement last computed them from its rows.

    Not a counter kept up to date: nothing increments it. The nightly run recomputes, from the source
    rows, every session in scope whose tally is missing, older than its ``SessionRevision`` or written by
    another version of the aggregate statement (``sql_digest``), and reads the others;
    ``compute_gauges --full`` recomputes every session in scope.
    """

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="+")
    # the session's revision read in the same statement as the rows aggregated (0: never written to)
    revision = models.BigIntegerField()
    sql_digest = models.CharField(max_length=40)
    # figures.Tally as JSON, and the turns the session's events happened on (where suggestions go)
    tally = models.JSONField()
    events = models.JSONField()
    # digest of the suggestions last written for this session (empty: not since it was recomputed)
    suggestions_digest = models.CharField(max_length=40, blank=True, default="")
    computed_at = models.DateTimeField()

    class Meta:
        db_table = "gauge_session_tally"
        verbose_name = _("회기 집계")
        verbose_name_plural = _("회기 집계")

    def __str__(self) -> str:
        return f"{self.session_id}@{self.revision}"


class DismissedSuggestion(models.Model):
    """A suggestion a supervisor dismissed; the nightly run never suggests it on that turn again."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="+")
    suggestion_key = models.CharField(max_length=100)
    dismissed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    dismissed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "gauge_dismissed_suggestion"
        verbose_name = _("기각된 제안")
        verbose_name_plural = _("기각된 제안")
        constraints = [models.UniqueConstraint(fields=["turn", "suggestion_key"], name="dismissed_suggestion_once")]

    def __str__(self) -> str:
        return f"{self.turn_id}:{self.suggestion_key}"


class SuggestedComment(SupervisorComment):
    """The admin's view of the AI suggestions awaiting a supervisor (accept or dismiss)."""

    class Meta:
        proxy = True
        verbose_name = _("AI 제안 논평")
        verbose_name_plural = _("AI 제안 논평")
