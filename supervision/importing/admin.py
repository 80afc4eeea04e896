"""Spreadsheet import/export screens on the Session admin (staff and superusers import).

Equivalent to django-import-export's ImportMixin/ExportMixin screens — upload, preview with every row's
errors, confirm — but persistence goes through our own ``import_file`` service (validated in Python,
written set-based in one transaction), never through import-export's row-by-row or bulk paths.
"""

from __future__ import annotations

import io

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseNotAllowed, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from supervision import presentation, selectors
from supervision.importing import jobs, spreadsheet_export
from supervision.importing.columns import KOREAN
from supervision.importing.models import ImportJob
from supervision.roles import is_supervisor, sees_everything

XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SHOWN_ERRORS = 5000


class ImportForm(forms.Form):
    file = forms.FileField(label=_("파일 (.xlsx, .csv, .jsonl)"))
    trainee = forms.CharField(
        label=_("수련생 아이디(선택)"),
        required=False,
        max_length=150,
        help_text=_("모든 회기를 이 수련생에게 배정합니다. 비우면 파일의 수련생(trainee) 열을 따릅니다."),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        try:
            # Type and size are checked before a byte of content is parsed.
            jobs.check_upload(name=upload.name, size=upload.size)
        except jobs.UploadRefused as exc:
            raise forms.ValidationError(str(exc)) from None
        return upload


def _preview_for_page(preview: dict) -> dict:
    labels = [
        (code, presentation.TECHNIQUE_KO.get(code) or presentation.CLIENT_STATE_KO.get(code, ""), n)
        for code, n in preview.get("labels", [])
    ]
    return {**preview, "labels": labels}


class SpreadsheetImportMixin:
    """Mixed into the Session ModelAdmin: import screens, template download and export actions."""

    change_list_template = "admin/importing/session_change_list.html"
    actions = ["export_xlsx", "export_csv", "export_xlsx_ko", "export_csv_ko"]

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view
        return [
            path("import/", wrap(self.import_view), name="{}_{}_import".format(*info)),
            path("import/template/", wrap(self.import_template_view), name="{}_{}_import_template".format(*info)),
            path("import/<int:job_id>/", wrap(self.import_job_view), name="{}_{}_import_job".format(*info)),
            path(
                "import/<int:job_id>/recompute/",
                wrap(self.import_recompute_view),
                name="{}_{}_import_recompute".format(*info),
            ),
            path(
                "import/<int:job_id>/progress/",
                wrap(self.import_progress_view),
                name="{}_{}_import_progress".format(*info),
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        # ?headers=ko asks the export actions for Korean headers; it is not a change-list filter, so it is
        # taken off the query before the change list reads it (an unknown parameter would be refused).
        if "headers" in request.GET:
            request.GET = request.GET.copy()
            request.export_headers = request.GET.pop("headers")[-1]
        extra_context = {**(extra_context or {}), "can_import": sees_everything(request.user)}
        return super().changelist_view(request, extra_context)

    def _guard(self, request) -> None:
        if not sees_everything(request.user):
            raise PermissionDenied("가져오기는 자료 담당 스태프와 관리자만 할 수 있습니다.")

    def _url(self, name: str, *args) -> str:
        return reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_{name}", args=args)

    def import_view(self, request):
        self._guard(request)
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            job = jobs.import_job_create(
                name=upload.name,
                data=upload.read(),
                trainee_username=form.cleaned_data["trainee"],
                created_by=request.user,
            )
            jobs.import_job_start(job=job, mode=ImportJob.Mode.PREVIEW)
            return redirect(self._url("import_job", job.pk))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("스프레드시트 가져오기"),
            "form": form,
            "recent_jobs": ImportJob.objects.select_related("created_by").defer("data")[:10],
            "template_url": self._url("import_template"),
            "columns": [(name, korean) for name, korean in KOREAN.items()],
        }
        return TemplateResponse(request, "admin/importing/import.html", context)

    def import_job_view(self, request, job_id: int):
        self._guard(request)
        job = get_object_or_404(ImportJob.objects.defer("data"), pk=job_id)
        if request.method == "POST":
            try:
                jobs.import_job_start(job=job, mode=ImportJob.Mode.WRITE)
            except jobs.UploadRefused as exc:
                messages.error(request, str(exc))
            return redirect(self._url("import_job", job.pk))
        errors = job.report.get("errors", [])
        session_ids = job.report.get("session_ids") or []
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("가져오기: %(name)s") % {"name": job.filename},
            "job": job,
            "report": job.report,
            "errors": [{**e, "header": KOREAN.get(e["column"], "")} for e in errors[:SHOWN_ERRORS]],
            "more_errors": max(len(errors) - SHOWN_ERRORS, 0),
            "running": job.status in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING),
            "progress_url": self._url("import_progress", job.pk),
            "import_url": self._url("import"),
            "changelist_url": self._url("changelist"),
            "previews": [_preview_for_page(p) for p in job.report.get("previews", [])],
            # The imported sessions in the change list (a plain id__in lookup on the primary key).
            "sessions_url": self._url("changelist") + "?id__in=" + ",".join(str(pk) for pk in session_ids)
            if session_ids
            else "",
            "recompute_url": self._url("import_recompute", job.pk),
        }
        return TemplateResponse(request, "admin/importing/job.html", context)

    def import_recompute_view(self, request, job_id: int):
        """지금 다시 계산 from the done page: today's nightly review queued, as the snapshot admin's action."""
        from portal.queue import QueueUnavailable
        from supervision.gauge.tasks import queue_nightly_reviews

        self._guard(request)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        job = get_object_or_404(ImportJob.objects.only("pk"), pk=job_id)
        try:
            queue_nightly_reviews([timezone.localdate()])
        except QueueUnavailable as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("검토 지표 재계산을 대기열에 넣었습니다. 몇 분 안에 갱신됩니다."))
        return redirect(self._url("import_job", job.pk))

    def import_progress_view(self, request, job_id: int):
        self._guard(request)
        job = get_object_or_404(ImportJob.objects.only("status", "phase", "done", "total", "mode"), pk=job_id)
        return JsonResponse(
            {
                "status": job.status,
                "mode": job.mode,
                "phase": job.phase,
                "done": job.done,
                "total": job.total,
                "percent": job.percent,
            }
        )

    def import_template_view(self, request):
        self._guard(request)
        buffer = io.BytesIO()
        spreadsheet_export.write_template(buffer)
        response = HttpResponse(buffer.getvalue(), content_type=XLSX_TYPE)
        response["Content-Disposition"] = 'attachment; filename="transcript_template.xlsx"'
        return response

    def has_export_permission(self, request) -> bool:
        # Supervisors export their own trainees' sessions, staff and superusers every session; the rows
        # themselves are narrowed again by role in ``_selected``.
        return self.has_view_permission(request) and (sees_everything(request.user) or is_supervisor(request.user))

    def _selected(self, request, queryset):
        """The selected sessions the user may read, joined for the export; ``None`` when that is none.

        An empty selection (a foreign or nonexistent id, or nothing ticked) exports nothing: never "all".
        """
        sessions = selectors.golden_sessions(request.user).filter(pk__in=queryset.values("pk"))
        if not sessions.exists():
            self.message_user(request, _("내보낼 회기가 없습니다. 볼 수 있는 회기를 선택해 주세요."), messages.WARNING)
            return None
        return sessions

    def _export_xlsx(self, request, queryset, korean: bool):
        sessions = self._selected(request, queryset)
        if sessions is None:
            return None
        buffer = io.BytesIO()
        spreadsheet_export.write_xlsx(sessions, buffer, korean_headers=korean, like_template=True)
        response = HttpResponse(buffer.getvalue(), content_type=XLSX_TYPE)
        response["Content-Disposition"] = f'attachment; filename="sessions_{timezone.localdate():%Y%m%d}.xlsx"'
        return response

    def _export_csv(self, request, queryset, korean: bool):
        sessions = self._selected(request, queryset)
        if sessions is None:
            return None
        lines = spreadsheet_export.csv_lines(sessions, korean_headers=korean)
        response = StreamingHttpResponse(
            (chunk.encode("utf-8") for chunk in lines), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="sessions_{timezone.localdate():%Y%m%d}.csv"'
        return response

    @staticmethod
    def _korean_asked(request) -> bool:
        return getattr(request, "export_headers", "") == "ko"

    @admin.action(description=_("선택한 회기를 xlsx로 내보내기"), permissions=("export",))
    def export_xlsx(self, request, queryset):
        return self._export_xlsx(request, queryset, self._korean_asked(request))

    @admin.action(description=_("선택한 회기를 csv로 내보내기"), permissions=("export",))
    def export_csv(self, request, queryset):
        return self._export_csv(request, queryset, self._korean_asked(request))

    @admin.action(description=_("선택한 회기를 xlsx로 내보내기 (한글 머리글)"), permissions=("export",))
    def export_xlsx_ko(self, request, queryset):
        return self._export_xlsx(request, queryset, True)

    @admin.action(description=_("선택한 회기를 csv로 내보내기 (한글 머리글)"), permissions=("export",))
    def export_csv_ko(self, request, queryset):
        return self._export_csv(request, queryset, True)


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    # The file name opens the job's own screen (preview → 확인하고 가져오기, errors, or the done page), not
    # the read-only record; the list fits beside the navigation sidebar at 1280 px.
    list_display = ("step_link", "status", "mode", "created_by", "created")
    list_display_links = None
    # The way to start an import from here too (it lives on the session change list).
    change_list_template = "admin/importing/importjob_change_list.html"
    list_filter = ("status",)
    list_select_related = ("created_by",)
    readonly_fields = [f.name for f in ImportJob._meta.fields if f.name != "data"]
    exclude = ("data",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("data")

    @admin.display(description=_("파일 (작업 화면)"), ordering="filename")
    def step_link(self, obj):
        label = {
            ImportJob.Status.PREVIEWED: _("확인하고 가져오기 →"),
            ImportJob.Status.INVALID: _("오류 보기 →"),
        }.get(obj.status, _("열기 →"))
        url = reverse("admin:supervision_session_import_job", args=[obj.pk])
        return format_html('<a href="{}">{}</a><br><a href="{}">{}</a>', url, obj.filename, url, label)

    @admin.display(description=_("등록 시각"), ordering="created_at")
    def created(self, obj):
        return timezone.localtime(obj.created_at).strftime("%Y-%m-%d %H:%M")

    def has_module_permission(self, request):
        return sees_everything(request.user)

    def has_view_permission(self, request, obj=None):
        return sees_everything(request.user)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return bool(request.user.is_superuser)
