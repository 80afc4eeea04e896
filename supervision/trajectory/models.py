"""Stored trajectory audits: one row per window of a session (see services.trajectory_audit_sessions)."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from supervision.models import Session
from supervision.trajectory.engine.audit import HARMFUL, NEUTRAL, PRODUCTIVE

# What ``TrajectoryAudit.states`` keeps of each client state: the trace that the session pages and the admin
# draw and the safety list reads. The distortion distribution and the high-risk mass shape the label and
# the explanation inside the engine; kept per window they were four fifths of the stored text.
TRACE_FIELDS = ("seq", "utterance_id", "valence", "arousal", "risk")


class TrajectoryLabel(models.TextChoices):
    PRODUCTIVE = PRODUCTIVE, _("생산적 (productive)")
    NEUTRAL = NEUTRAL, _("중립적 (neutral)")
    HARMFUL = HARMFUL, _("해로운 (harmful)")


class AuditLabels(models.TextChoices):
    """What a session's audits read (CONTRACT §9): the labels people gave, or — in a session none of whose
    turns carries a technique or client state — the label suggester's (the pages say 「AI 추정 라벨 기준」)."""

    GIVEN = "given", _("입력된 라벨")
    SUGGESTED = "suggested", _("AI 추정 라벨")


class TrajectoryAudit(models.Model):
    """The engine's verdict on one window of turns. A review aid, not a clinical judgement.

    ``states`` is the engine's per-client-turn state trace (``TRACE_FIELDS``); ``sycophancy_turns`` the counselor utterance ids
    flagged as stealth sycophancy. Rows are recomputed (upserted) by the service, never edited by hand.
    """

    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="trajectory_audits", verbose_name=_("회기")
    )
    window_index = models.PositiveIntegerField(_("창 번호"))
    first_seq = models.PositiveIntegerField(_("첫 순서"))
    last_seq = models.PositiveIntegerField(_("끝 순서"))
    label = models.CharField(_("판정"), max_length=16, choices=TrajectoryLabel.choices)
    score = models.FloatField(_("점수"))
    explanation = models.TextField(_("설명"))
    states = models.JSONField(_("상태 궤적"), default=list)
    sycophancy_turns = models.JSONField(_("은밀한 아첨 발화"), default=list)
    engine_version = models.CharField(_("엔진 버전"), max_length=40)
    computed_at = models.DateTimeField(_("계산 시각"))

    class Meta:
        db_table = "trajectory_audit"
        ordering = ["session", "window_index"]
        verbose_name = _("궤적 감사")
        verbose_name_plural = _("궤적 감사")
        constraints = [
            models.UniqueConstraint(fields=["session", "window_index"], name="trajectory_audit_window_unique"),
            models.CheckConstraint(
                condition=models.Q(label__in=TrajectoryLabel.values), name="trajectory_audit_label_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(last_seq__gte=models.F("first_seq")), name="trajectory_audit_seq_order"
            ),
        ]

    def __str__(self) -> str:
        # Read where the admin names one audit (its title and breadcrumbs); the session is one query there.
        return f"{self.session.code} · 창 {self.window_index} (발화 {self.first_seq}–{self.last_seq})"


class AuditedRevision(models.Model):
    """The revision of a session's rows (``gauge.SessionRevision``, kept by database triggers) and the engine
    version its stored audits were computed from. The nightly step re-audits a session only when its
    revision is newer or the engine changed, so a night's cost follows what changed, not the history.

    The revision is read before the session's turns, in the same transaction as the audits are written: a
    write that commits in between leaves a newer revision, so the next night audits the session again.
    """

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="+")
    revision = models.BigIntegerField()
    engine_version = models.CharField(max_length=40)
    # One basis for all of a session's windows: a session is labelled or it is not.
    labels = models.CharField(max_length=16, choices=AuditLabels.choices, default=AuditLabels.GIVEN)

    class Meta:
        db_table = "trajectory_audited_revision"
        verbose_name = _("감사한 회기 개정")
        verbose_name_plural = _("감사한 회기 개정")

    def __str__(self) -> str:
        return f"{self.session_id}@{self.revision}"
