"""Supervisors' reviews of safety events (CONTRACT §8).

The events themselves are not stored: ``selectors.safety_events`` derives them from the turns and their
labels whenever they are read, so they are right the moment an import or a label edit returns. Only
what a person adds — who reviewed an event, when, and their note — is kept, with its history.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from supervision.models import Turn
from taxonomy.models import ClientStateDef


class SafetyReview(models.Model):
    """The review of one safety event: the (client turn, safety-critical state) pair, not a label row.

    Keyed by the pair rather than by the ``TurnClientState`` row because a re-import that changes a
    turn's labels writes its label rows afresh; the review stays with the disclosure it is about.
    """

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="safety_reviews", verbose_name=_("발화"))
    state = models.ForeignKey(ClientStateDef, on_delete=models.PROTECT, related_name="+", verbose_name=_("내담자 상태"))
    note = models.TextField(_("검토 메모"), blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="safety_reviews",
        verbose_name=_("검토자"),
    )
    reviewed_at = models.DateTimeField(_("검토 시각"))
    history = HistoricalRecords()

    class Meta:
        db_table = "safety_review"
        ordering = ["-reviewed_at"]
        verbose_name = _("안전 검토")
        verbose_name_plural = _("안전 검토")
        constraints = [models.UniqueConstraint(fields=["turn", "state"], name="safety_review_once_per_event")]

    def __str__(self) -> str:
        return f"{self.turn_id}:{self.state_id}"


class SuggestedRevision(models.Model):
    """The revision of a session's rows (``gauge.SessionRevision``, kept by database triggers on turns,
    labels and accepted comments) and the ``SAFETY_RESPONSE_TURNS`` its safety suggestions were last made
    from. The nightly step looks again only at sessions whose revision is newer, so its cost follows what
    changed. (A dismissal needs no new look: a dismissed suggestion never comes back.)"""

    session = models.OneToOneField("supervision.Session", on_delete=models.CASCADE, primary_key=True, related_name="+")
    revision = models.BigIntegerField()
    response_turns = models.PositiveIntegerField()

    class Meta:
        db_table = "safety_suggested_revision"
        verbose_name = "안전 제안을 만든 회기 개정"
        verbose_name_plural = "안전 제안을 만든 회기 개정"

    def __str__(self) -> str:
        return f"{self.session_id}@{self.revision}"
