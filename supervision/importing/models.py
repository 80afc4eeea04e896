"""An upload kept between preview and confirm, and the background job that validates or writes it."""

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ImportJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("대기")
        RUNNING = "running", _("진행 중")
        PREVIEWED = "previewed", _("미리보기 완료")
        INVALID = "invalid", _("오류 있음")
        DONE = "done", _("가져오기 완료")
        FAILED = "failed", _("실패")
        EXPIRED = "expired", _("보관 기간 지남")

    class Mode(models.TextChoices):
        PREVIEW = "preview", _("미리보기(검증만)")
        WRITE = "write", _("가져오기(저장)")

    filename = models.CharField(_("파일 이름"), max_length=255)
    size = models.PositiveBigIntegerField(_("크기(바이트)"))
    # The upload itself, so that preview, confirm and a worker on another machine all read the same bytes;
    # emptied once the import is written, or after IMPORT_UPLOAD_RETENTION_DAYS when it never was.
    data = models.BinaryField(_("파일 내용"), editable=False)
    trainee_username = models.CharField(_("수련생 지정"), max_length=150, blank=True)
    mode = models.CharField(_("단계"), max_length=16, choices=Mode.choices, default=Mode.PREVIEW)
    status = models.CharField(_("상태"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(_("진행 단계"), max_length=32, blank=True)
    done = models.PositiveIntegerField(_("처리한 행"), default=0)
    total = models.PositiveIntegerField(_("전체 행"), default=0)
    report = models.JSONField(_("결과"), default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+", verbose_name=_("등록자")
    )
    created_at = models.DateTimeField(_("등록 시각"), auto_now_add=True)
    finished_at = models.DateTimeField(_("완료 시각"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("가져오기 작업")
        verbose_name_plural = _("가져오기 작업")

    def __str__(self) -> str:
        return f"{self.filename} ({self.get_status_display()})"

    @property
    def percent(self) -> int:
        if self.status in (self.Status.DONE, self.Status.PREVIEWED, self.Status.INVALID):
            return 100
        return int(100 * self.done / self.total) if self.total else 0


class TableUpload(models.Model):
    """A spreadsheet previewed on one of the admin's plain-table import screens (the roster, label aliases),
    kept in the database until the person who previewed it confirms it. The confirm form names this row's
    id — never a file — and only its owner, on the same screen, can take it, once."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    screen = models.CharField(
        _("화면"), max_length=100
    )  # the admin's "app_label.model", e.g. supervision.traineeassignment
    input_format = models.PositiveSmallIntegerField(_("형식"))  # index into settings.IMPORT_FORMATS
    resource_index = models.PositiveSmallIntegerField(_("자료 종류"), default=0)  # the screen's resource classes
    filename = models.CharField(_("파일 이름"), max_length=255)
    data = models.BinaryField(_("파일 내용"), editable=False)
    created_at = models.DateTimeField(_("등록 시각"), auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = _("표 가져오기 미리보기")
        verbose_name_plural = _("표 가져오기 미리보기")

    def __str__(self) -> str:
        return self.filename
