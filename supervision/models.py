"""Transcripts and their annotations (taxonomy document §6–§7).

Integrity rules the database can hold are constraints here; the rules it cannot (the attach rule,
seq 0..N-1, the silence correction, the privacy guard) live once in ``supervision.rules`` and every
entry point (importer, admin forms, API) calls them.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from supervision.rules import SESSION_CODE_PATTERN
from taxonomy import catalogue
from taxonomy.models import ClientStateDef, StageDef, TechniqueLabelDef


class Speaker(models.TextChoices):
    COUNSELOR = catalogue.COUNSELOR, _("상담자")
    CLIENT = catalogue.CLIENT, _("내담자")


# The Korean name first, the code beside it (issue 33: the pages are Korean, codes stay visible underneath).
DIALOG_ACT_CHOICES = [(act.code, f"{act.ko} ({act.code})") for act in catalogue.DIALOG_ACTS]


class CommentKind(models.TextChoices):
    RATIONALE = "rationale", _("근거 (rationale)")
    CRITIQUE = "critique", _("논평 (critique)")


class CommentAuthor(models.TextChoices):
    AI = "ai", _("AI 제안 (ai)")
    SUPERVISOR = "supervisor", _("슈퍼바이저 (supervisor)")


class Severity(models.TextChoices):
    MINOR = "minor", _("경미 (minor)")
    MODERATE = "moderate", _("보통 (moderate)")
    MAJOR = "major", _("중대 (major)")


class UploadedRecord(models.Model):
    """Who brought a file into the portal and when: a saved annotation run, a saved persona run. The
    operating-system user stands in (``uploaded_from``) when a command line saved it, not a portal user."""

    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("올린 사람"),
    )
    uploaded_from = models.CharField(_("올린 경로"), max_length=150, blank=True)
    created_at = models.DateTimeField(_("올린 시각"), auto_now_add=True, db_index=True)
    file_name = models.CharField(_("파일 이름"), max_length=255)

    class Meta:
        abstract = True


class TraineeAssignment(models.Model):
    """Which supervisor looks after which trainee (one supervisor per trainee)."""

    trainee = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignment", verbose_name=_("수련생")
    )
    supervisor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="supervised_assignments",
        verbose_name=_("슈퍼바이저"),
    )
    assigned_at = models.DateTimeField(_("배정 시각"), auto_now_add=True)
    # who moved a trainee to which supervisor, when and why (supervision.people.services.trainee_reassign)
    history = HistoricalRecords()

    class Meta:
        verbose_name = _("수련생 배정")
        verbose_name_plural = _("수련생 배정")
        constraints = [
            models.CheckConstraint(condition=~models.Q(trainee=models.F("supervisor")), name="assignment_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.trainee} ← {self.supervisor}"


class Session(models.Model):
    code = models.CharField(_("회기 코드"), max_length=64, unique=True)
    title = models.CharField(_("제목"), max_length=200, blank=True)
    trainee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="practice_sessions",
        verbose_name=_("수련생"),
    )
    held_on = models.DateField(_("회기 일자"), null=True, blank=True)
    source = models.CharField(_("출처(합성 표기)"), max_length=100)
    taxonomy_version = models.CharField(_("분류 체계 버전"), max_length=16, default=catalogue.TAXONOMY_VERSION)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("등록자"),
    )
    created_at = models.DateTimeField(_("등록 시각"), auto_now_add=True)
    updated_at = models.DateTimeField(_("수정 시각"), auto_now=True)

    class Meta:
        db_table = "sessions"
        ordering = ["code"]
        verbose_name = _("회기")
        verbose_name_plural = _("회기")
        constraints = [
            models.CheckConstraint(condition=models.Q(code__regex=SESSION_CODE_PATTERN), name="session_code_format"),
            models.CheckConstraint(condition=models.Q(source__endswith="_synthetic"), name="session_source_synthetic"),
        ]
        indexes = [models.Index(fields=["trainee", "held_on"], name="session_trainee_day")]

    def __str__(self) -> str:
        return f"{self.code} {self.title}".strip()


class Turn(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="turns", verbose_name=_("회기"))
    seq = models.PositiveIntegerField(_("순서"))
    utterance_id = models.CharField(_("발화 ID"), max_length=100, unique=True)
    speaker = models.CharField(_("화자"), max_length=16, choices=Speaker.choices)
    stage = models.ForeignKey(
        StageDef, on_delete=models.PROTECT, db_column="stage", related_name="+", verbose_name=_("단계")
    )
    text = models.TextField(_("발화"), blank=True)
    nonverbal = models.JSONField(_("비언어 단서"), default=list, blank=True)
    dialog_act = models.CharField(_("대화행위"), max_length=16, choices=DIALOG_ACT_CHOICES, null=True, blank=True)
    techniques = models.ManyToManyField(
        TechniqueLabelDef, through="TurnTechnique", related_name="turns", blank=True, verbose_name=_("기법")
    )
    client_states = models.ManyToManyField(
        ClientStateDef, through="TurnClientState", related_name="turns", blank=True, verbose_name=_("내담자 상태")
    )

    class Meta:
        db_table = "turns"
        ordering = ["session", "seq"]
        verbose_name = _("발화")
        verbose_name_plural = _("발화")
        constraints = [
            # Deferred so that an import can renumber a session's turns inside one transaction.
            models.UniqueConstraint(
                fields=["session", "seq"], name="turn_seq_unique_in_session", deferrable=models.Deferrable.DEFERRED
            ),
            models.CheckConstraint(condition=models.Q(speaker__in=catalogue.SPEAKER_CODES), name="turn_speaker_valid"),
            models.CheckConstraint(
                condition=models.Q(dialog_act__isnull=True) | models.Q(dialog_act__in=catalogue.DIALOG_ACT_CODES),
                name="turn_dialog_act_valid",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(speaker=catalogue.COUNSELOR, utterance_id__regex=r"-C-[0-9]{3,}$")
                    | models.Q(speaker=catalogue.CLIENT, utterance_id__regex=r"-K-[0-9]{3,}$")
                ),
                name="turn_utterance_letter_matches_speaker",
            ),
        ]

    def __str__(self) -> str:
        return self.utterance_id


class TurnTechnique(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="technique_links")
    label = models.ForeignKey(TechniqueLabelDef, on_delete=models.PROTECT, related_name="+", verbose_name=_("기법"))

    class Meta:
        db_table = "turn_technique"
        ordering = ["id"]
        verbose_name = _("발화 기법")
        verbose_name_plural = _("발화 기법")
        constraints = [models.UniqueConstraint(fields=["turn", "label"], name="turn_technique_unique")]

    def __str__(self) -> str:
        return f"{self.label.ko} ({self.label.code})"


class TurnClientState(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="client_state_links")
    label = models.ForeignKey(ClientStateDef, on_delete=models.PROTECT, related_name="+", verbose_name=_("내담자 상태"))

    class Meta:
        db_table = "turn_client_state"
        ordering = ["id"]
        verbose_name = _("발화 내담자 상태")
        verbose_name_plural = _("발화 내담자 상태")
        constraints = [models.UniqueConstraint(fields=["turn", "label"], name="turn_client_state_unique")]

    def __str__(self) -> str:
        return f"{self.label.ko} ({self.label.code})"


class SupervisorCommentQuerySet(models.QuerySet):
    def accepted(self) -> "SupervisorCommentQuerySet":
        """What counts, is exported and is shown to trainees: every comment but a pending AI suggestion."""
        return self.filter(ACCEPTED)

    def accepted_critiques(self) -> "SupervisorCommentQuerySet":
        return self.filter(accepted_critique_q())


# The one definition of an accepted comment, also for annotations across relations (``accepted_critique_q``).
ACCEPTED = models.Q(is_suggestion=False)


def accepted_critique_q(prefix: str = "") -> models.Q:
    """Accepted critiques, reached through ``prefix`` (e.g. ``"turns__comments__"``) in a filter or a
    conditional aggregate."""
    return models.Q(**{f"{prefix}kind": CommentKind.CRITIQUE, f"{prefix}is_suggestion": False})


class SupervisorComment(models.Model):
    """A rationale or critique on one turn. Critiques carry ``intent_deviation``
    ``{"dimension", "expected", "actual", "severity"}`` (each optional; shape checked by
    ``supervision.rules.validate_intent_deviation``).

    A comment the nightly job suggests has ``author=ai`` and ``is_suggestion=True``; it is not counted,
    exported or shown to trainees until a supervisor accepts it (then it is theirs: ``author=supervisor``,
    ``is_suggestion=False``). ``suggestion_key`` keeps re-runs from suggesting the same thing twice.
    """

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="comments", verbose_name=_("발화"))
    kind = models.CharField(_("종류"), max_length=16, choices=CommentKind.choices)
    text = models.TextField(_("내용"))
    intent_deviation = models.JSONField(_("의도 이탈"), default=dict, blank=True)
    author = models.CharField(
        _("작성 주체"), max_length=16, choices=CommentAuthor.choices, default=CommentAuthor.SUPERVISOR
    )
    written_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="supervisor_comments",
        verbose_name=_("작성자"),
    )
    is_suggestion = models.BooleanField(_("AI 제안(미승인)"), default=False)
    suggestion_key = models.CharField(_("제안 식별자"), max_length=100, blank=True, default="")
    created_at = models.DateTimeField(_("작성 시각"), auto_now_add=True)
    updated_at = models.DateTimeField(_("수정 시각"), auto_now=True)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    objects = SupervisorCommentQuerySet.as_manager()

    class Meta:
        db_table = "supervisor_comment"
        ordering = ["turn", "id"]
        verbose_name = _("슈퍼바이저 논평")
        verbose_name_plural = _("슈퍼바이저 논평")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=catalogue.COMMENT_KIND_CODES), name="comment_kind_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(author__in=catalogue.COMMENT_AUTHORS), name="comment_author_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(intent_deviation__severity__isnull=True)
                | models.Q(intent_deviation__severity__in=catalogue.CRITIQUE_SEVERITIES),
                name="comment_severity_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(is_suggestion=False) | models.Q(author=CommentAuthor.AI),
                name="comment_suggestion_is_ai",
            ),
            models.UniqueConstraint(
                fields=["turn", "suggestion_key"],
                condition=~models.Q(suggestion_key=""),
                name="comment_suggestion_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.text[:40]}"

    @property
    def severity(self) -> str | None:
        return (self.intent_deviation or {}).get("severity")


class LabelChange(models.Model):
    """The history of a turn's golden labels: one row per axis a write changed, written by
    ``supervision.labelling`` (the admin's label forms and adjudication alike; imports are the file's)."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="label_changes", verbose_name=_("발화"))
    axis = models.CharField(_("축"), max_length=16)
    before = models.JSONField(_("이전"), null=True)
    after = models.JSONField(_("이후"), null=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+", verbose_name=_("변경한 사람")
    )
    changed_at = models.DateTimeField(_("변경 시각"), auto_now_add=True)
    via = models.CharField(_("경로"), max_length=32)
    note = models.TextField(_("메모"), blank=True)

    class Meta:
        db_table = "label_change"
        ordering = ["turn", "changed_at", "id"]
        verbose_name = _("라벨 변경 이력")
        verbose_name_plural = _("라벨 변경 이력")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(axis__in=("techniques", "client_states", "stage", "dialog_act")),
                name="label_change_axis_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.turn_id}:{self.axis} {self.before} → {self.after}"
