"""The persona answer key in the admin: 「상태 전이표」 (the golden table as a heatmap, over the sessions the
viewer may see), the saved persona runs and their pages, and the staff's upload form. Every figure comes
from ``services`` — the same as the commands and the API."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from supervision.roles import is_supervisor, sees_everything
from supervision.services import ServiceError

from . import counting, heatmap, selectors, services
from .models import MoveKind, PersonaRun
from .reading import read_persona

SHOWN_ERRORS = 2000


class TableForm(forms.Form):
    by = forms.ChoiceField(
        label=_("상담자 개입 단위"), choices=MoveKind.choices, initial=counting.BY_CATEGORY, required=False
    )
    min_support = forms.IntegerField(
        label=_("최소 지지도"),
        min_value=1,
        max_value=100_000,
        initial=counting.DEFAULT_MIN_SUPPORT,
        required=False,
        help_text=_("이보다 지지도가 낮은 맥락은 흐리게 표시합니다(불확실)."),
    )
    hide_weak = forms.BooleanField(label=_("지지도가 낮은 맥락 숨기기"), required=False)


class PersonaUploadForm(forms.Form):
    file = forms.FileField(label=_("페르소나 파일 (.jsonl)"))
    rater = forms.CharField(label=_("페르소나 엔진 이름"), max_length=100, help_text=_("예: persona-7"))
    by = forms.ChoiceField(label=_("상담자 개입 단위"), choices=MoveKind.choices, initial=counting.BY_CATEGORY)
    min_support = forms.IntegerField(
        label=_("최소 지지도"), min_value=1, max_value=100_000, initial=counting.DEFAULT_MIN_SUPPORT
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if not upload.name.lower().endswith(".jsonl"):
            raise forms.ValidationError("페르소나 파일은 .jsonl이어야 합니다.")
        if upload.size > settings.IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"파일이 너무 큽니다. 한도는 {settings.IMPORT_MAX_BYTES / 1_048_576:.0f} MB이며, "
                "서버 설정 IMPORT_MAX_BYTES로 늘릴 수 있습니다."
            )
        return upload


@admin.register(PersonaRun)
class PersonaRunAdmin(admin.ModelAdmin):
    list_display = (
        "rater",
        "by",
        "min_support",
        "jsd",
        "coverage",
        "contexts",
        "turns",
        "created_at",
        "uploaded_display",
        "report_link",
    )
    list_filter = ("by", "rater")
    search_fields = ("rater", "file_name")
    readonly_fields = (
        "rater",
        "by",
        "min_support",
        "jsd",
        "coverage",
        "contexts",
        "sessions",
        "turns",
        "uploaded_by",
        "uploaded_from",
        "created_at",
        "file_name",
    )
    exclude = ("figures", "golden_counts", "persona_counts")
    change_list_template = "admin/transitions/personarun_change_list.html"

    def get_queryset(self, request):
        runs = selectors.persona_runs_visible(request.user)
        return runs.defer("figures", "golden_counts", "persona_counts")

    def has_add_permission(self, request):
        return False  # runs arrive through the upload form, scored by the same service as the command

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return sees_everything(request.user) and super().has_delete_permission(request, obj)

    @admin.display(description=_("올린 사람"))
    def uploaded_display(self, obj):
        return obj.uploaded_by.username if obj.uploaded_by else obj.uploaded_from

    @admin.display(description=_("결과"))
    def report_link(self, obj):
        return format_html('<a href="{}">결과 보기</a>', reverse("admin:transitions_personarun_report", args=[obj.pk]))

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("table/", wrap(self.table_view), name="transitions_personarun_table"),
            path("upload/", wrap(self.upload_view), name="transitions_personarun_upload"),
            path("<int:run_id>/report/", wrap(self.report_view), name="transitions_personarun_report"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_upload": sees_everything(request.user)}
        return super().changelist_view(request, extra_context)

    def _context(self, request, title: str, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, "title": title, **extra}

    def _guard_read(self, request) -> None:
        if not (self.has_view_permission(request) and (sees_everything(request.user) or is_supervisor(request.user))):
            raise PermissionDenied

    # 상태 전이표 -------------------------------------------------------------------------------------

    def table_view(self, request):
        self._guard_read(request)
        form = TableForm(request.GET or None)
        choice = form.cleaned_data if form.is_valid() else {}
        by = choice.get("by") or counting.BY_CATEGORY
        min_support = choice.get("min_support") or counting.DEFAULT_MIN_SUPPORT
        hide_weak = bool(choice.get("hide_weak"))
        if not form.is_bound or not form.is_valid():
            form = TableForm(initial={"by": by, "min_support": min_support})
        counts, sessions = selectors.golden_counts(by=by, user=request.user)
        columns = heatmap.columns_of(counts)
        rows = heatmap.rows_of(counts, columns, min_support=min_support)
        weak = sum(row.weak for row in rows)
        if hide_weak:
            rows = [row for row in rows if not row.weak]
        other = counting.BY_TECHNIQUE if by == counting.BY_CATEGORY else counting.BY_CATEGORY
        context = self._context(
            request,
            _("상태 전이표"),
            form=form,
            by=by,
            by_label=MoveKind(by).label,
            other_by=other,
            other_label=MoveKind(other).label,
            min_support=min_support,
            hide_weak=hide_weak,
            columns=[(code, heatmap.state_ko(code)) for code in columns],
            rows=rows,
            weak=weak,
            sessions=sessions,
            transitions=sum(counts.values()),
            scoped=not sees_everything(request.user),
        )
        return TemplateResponse(request, "admin/transitions/table.html", context)

    # A persona run -------------------------------------------------------------------------------

    def report_view(self, request, run_id: int):
        self._guard_read(request)
        run = selectors.persona_runs_visible(request.user).filter(pk=run_id).first()
        if run is None:
            raise Http404
        figures = run.figures
        golden = counting.counts_from_json(run.golden_counts)
        persona = counting.counts_from_json(run.persona_counts)
        contexts = [(row["state"], row["move"]) for row in figures["compared"]]
        # Columns: the next states of the compared contexts only (what the JSD was computed over).
        columns = heatmap.columns_of(*(_only(counts, contexts) for counts in (golden, persona)))
        golden_rows = heatmap.rows_of(golden, columns, min_support=run.min_support, contexts=contexts)
        persona_rows = heatmap.rows_of(persona, columns, min_support=run.min_support, contexts=contexts)
        golden_table = counting.by_context(golden)
        context = self._context(
            request,
            _("페르소나 실행: %(rater)s #%(id)s") % {"rater": run.rater, "id": run.pk},
            run=run,
            figures=figures,
            by_label=MoveKind(run.by).label,
            compared=[
                {**row, "state_ko": heatmap.state_ko(row["state"]), "move_ko": heatmap.move_ko(row["move"])}
                for row in figures["compared"]
            ],
            columns=[(code, heatmap.state_ko(code)) for code in columns],
            # One table, one row per context: golden | persona | difference side by side on the same row.
            side_by_side=list(
                zip(golden_rows, persona_rows, heatmap.difference_rows(golden_rows, persona_rows, columns), strict=True)
            ),
            unrealistic=[heatmap.unrealistic_sentence(item) for item in figures["unrealistic"]],
            missing=[
                heatmap.missing_sentence(item, golden_table[(item["state"], item["move"])][item["next"]])
                for item in figures["missing"]
            ],
        )
        return TemplateResponse(request, "admin/transitions/report.html", context)

    # Upload (staff) --------------------------------------------------------------------------------

    def upload_view(self, request):
        if not sees_everything(request.user):
            raise PermissionDenied("페르소나 파일은 자료 담당 스태프와 관리자만 올릴 수 있습니다.")
        form = PersonaUploadForm(request.POST or None, request.FILES or None)
        errors, error_total = [], 0
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            with tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / "persona.jsonl"
                with target.open("wb") as handle:
                    for chunk in upload.chunks():
                        handle.write(chunk)
                persona = read_persona(target)
            if persona.ok:
                try:
                    run = services.persona_run_create(
                        persona=persona,
                        rater=form.cleaned_data["rater"],
                        by=form.cleaned_data["by"],
                        min_support=form.cleaned_data["min_support"],
                        file_name=upload.name,
                        uploaded_by=request.user,
                    )
                except ServiceError as exc:
                    messages.error(request, str(exc))
                else:
                    messages.success(
                        request, _("페르소나 실행 %(rater)s을(를) 채점해 저장했습니다.") % {"rater": run.rater}
                    )
                    return HttpResponseRedirect(reverse("admin:transitions_personarun_report", args=[run.pk]))
            errors, error_total = persona.errors[:SHOWN_ERRORS], len(persona.errors)
        context = self._context(request, _("페르소나 파일 올리기"), form=form, errors=errors, error_total=error_total)
        return TemplateResponse(request, "admin/transitions/upload.html", context, status=400 if errors else 200)


def _only(counts: Counter, contexts: list[tuple[str, str]]) -> Counter:
    wanted = set(contexts)
    return Counter({key: n for key, n in counts.items() if (key[0], key[1]) in wanted})
