"""The agreement screens: staff and superusers upload runs (preview of errors or coverage, then save);
supervisors read the report over their own trainees' turns and adjudicate the differences on them.

Every figure comes from ``services`` (the same as the command and the API); every decision goes through
``adjudication_decide``, which writes golden labels only through the label service.
"""

from __future__ import annotations

import datetime
import tempfile
from collections import defaultdict
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from supervision.feedback.charts import wide_and_compact
from supervision.models import Turn
from supervision.roles import sees_everything, supervised_among
from supervision.services import ServiceError

from . import charts, selectors, services, tasks
from .models import AdjudicationDecision, AnnotationRun, Axis, Outcome, RaterKind, RunUpload
from .reading import RunFile, read_run

AXIS_KO = dict(Axis.choices)
PRESENCE_KO = {services.PRESENT: "있음", services.ABSENT: "없음", "none": "없음(none)"}
SHOWN_ERRORS = 2000


class RunUploadForm(forms.Form):
    file = forms.FileField(label=_("주석 실행 파일 (.jsonl)"))
    rater = forms.CharField(
        label=_("평가자 이름"), max_length=100, help_text=_("예: eval-ai (같은 이름의 버전끼리 추이를 봅니다)")
    )
    kind = forms.ChoiceField(label=_("종류"), choices=RaterKind.choices, initial=RaterKind.AI)
    note = forms.CharField(
        label=_("모델·주석자 메모"), max_length=500, required=False, help_text=_("예: v4, 2026-11 학습")
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if not upload.name.lower().endswith(".jsonl"):
            raise forms.ValidationError("주석 실행 파일은 .jsonl이어야 합니다.")
        if upload.size > settings.IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"파일이 너무 큽니다. 한도는 {settings.IMPORT_MAX_BYTES / 1_048_576:.0f} MB이며, "
                "서버 설정 IMPORT_MAX_BYTES로 늘릴 수 있습니다."
            )
        return upload


class DecisionForm(forms.Form):
    turn = forms.IntegerField(min_value=1)
    axis = forms.ChoiceField(choices=Axis.choices)
    label = forms.CharField(max_length=64)
    outcome = forms.ChoiceField(choices=Outcome.choices)
    note = forms.CharField(max_length=2000, required=False)


def _read_upload(upload: RunUpload) -> RunFile:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "run.jsonl"
        target.write_bytes(bytes(upload.data))
        return read_run(target)


def _coverage(run_file: RunFile) -> dict:
    ratings = run_file.ratings
    return {
        "turns": len(run_file.lines),
        "sessions": len(run_file.session_ids),
        "axes": [(AXIS_KO[axis], len(ratings.axis(axis))) for axis in services.AXES],
    }


@admin.register(AnnotationRun)
class AnnotationRunAdmin(admin.ModelAdmin):
    list_display = ("rater", "kind", "note", "created_at", "turns_display", "uploaded_display", "report_link")
    list_filter = ("kind", "rater")
    search_fields = ("rater", "note", "file_name")
    readonly_fields = (
        "rater",
        "kind",
        "note",
        "uploaded_by",
        "uploaded_from",
        "created_at",
        "file_name",
        "taxonomy_version",
    )
    change_list_template = "admin/agreement/annotationrun_change_list.html"

    def get_queryset(self, request):
        return selectors.runs_visible(request.user)

    def has_add_permission(self, request):
        return False  # runs arrive through the upload screen (preview first), like transcripts

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return sees_everything(request.user) and super().has_delete_permission(request, obj)

    @admin.display(description=_("발화 수"), ordering="turn_count")
    def turns_display(self, obj):
        return obj.turn_count

    @admin.display(description=_("올린 사람"))
    def uploaded_display(self, obj):
        return obj.uploaded_by.username if obj.uploaded_by else obj.uploaded_from

    @admin.display(description=_("보고서"))
    def report_link(self, obj):
        return format_html(
            '<a href="{}">보고서</a> · <a href="{}">판정 대기열</a>',
            reverse("admin:agreement_annotationrun_report", args=[obj.pk]),
            reverse("admin:agreement_annotationrun_adjudicate", args=[obj.pk]),
        )

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("upload/", wrap(self.upload_view), name="agreement_annotationrun_upload"),
            path("upload/<int:upload_id>/", wrap(self.upload_save_view), name="agreement_annotationrun_upload_save"),
            path("<int:run_id>/report/", wrap(self.report_view), name="agreement_annotationrun_report"),
            path("<int:run_id>/adjudicate/", wrap(self.adjudicate_view), name="agreement_annotationrun_adjudicate"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_upload": sees_everything(request.user)}
        return super().changelist_view(request, extra_context)

    def _context(self, request, title: str, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, "title": title, **extra}

    def _run(self, request, run_id: int) -> AnnotationRun:
        if not self.has_view_permission(request):
            raise PermissionDenied
        run = selectors.runs_visible(request.user).filter(pk=run_id).first()
        if run is None:
            raise Http404
        return run

    # Upload → preview → save (staff and superusers) ----------------------------------------------

    def _guard_upload(self, request) -> None:
        if not sees_everything(request.user):
            raise PermissionDenied("주석 실행은 자료 담당 스태프와 관리자만 올릴 수 있습니다.")

    def upload_view(self, request):
        self._guard_upload(request)
        form = RunUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            stale = timezone.now() - datetime.timedelta(days=settings.IMPORT_UPLOAD_RETENTION_DAYS)
            RunUpload.objects.filter(created_at__lt=stale).delete()
            upload = RunUpload.objects.create(
                file_name=form.cleaned_data["file"].name[:255],
                data=form.cleaned_data["file"].read(),
                rater=form.cleaned_data["rater"].strip(),
                kind=form.cleaned_data["kind"],
                note=form.cleaned_data["note"],
                uploaded_by=request.user,
            )
            return self._preview(request, upload)
        return TemplateResponse(
            request, "admin/agreement/upload.html", self._context(request, _("주석 실행 올리기"), form=form)
        )

    def _preview(self, request, upload: RunUpload, status: int = 200):
        run_file = _read_upload(upload)
        figures = (
            services.score_ratings(run_file.ratings, run_file.session_ids, rater=upload.rater, turns=run_file.turns)
            if run_file.ok
            else None
        )
        context = self._context(
            request,
            _("미리보기: %(name)s") % {"name": upload.file_name},
            upload=upload,
            errors=run_file.errors[:SHOWN_ERRORS],
            error_total=len(run_file.errors),
            coverage=_coverage(run_file) if run_file.ok else None,
            figures=figures,
            # each axis by its Korean name with the code, as the report names them
            axis_rows=[(AXIS_KO[axis], axis, f) for axis, f in figures["axes"].items()] if figures else [],
        )
        return TemplateResponse(request, "admin/agreement/preview.html", context, status=status)

    def upload_save_view(self, request, upload_id: int):
        self._guard_upload(request)
        upload = get_object_or_404(RunUpload, pk=upload_id, uploaded_by=request.user)
        if request.method != "POST":
            return self._preview(request, upload)
        run_file = _read_upload(upload)
        try:
            run = services.annotation_run_create(
                run_file=run_file,
                rater=upload.rater,
                kind=upload.kind,
                note=upload.note,
                file_name=upload.file_name,
                uploaded_by=request.user,
            )
        except ServiceError as exc:
            messages.error(request, str(exc))
            return self._preview(request, upload, status=400)
        upload.delete()
        messages.success(request, _("주석 실행 %(rater)s을(를) 저장했습니다.") % {"rater": run.rater})
        return HttpResponseRedirect(reverse("admin:agreement_annotationrun_report", args=[run.pk]))

    # Report --------------------------------------------------------------------------------------

    def report_view(self, request, run_id: int):
        run = self._run(request, run_id)
        tasks.wait_for_keep(run.pk)  # a worker is working this report out: it is read from the cache after
        report = services.run_report(run, request.user)  # kept since the run was saved, as a rule
        figures = report.figures
        axes = figures["axes"]
        turn_links = self._turn_links(request, [m["utterance_id"] for m in figures["safety"]["missed"]])
        missed = [
            {**m, "url": turn_links.get(m["utterance_id"]), "name": charts.label_name("client_states", m["state"])}
            for m in figures["safety"]["missed"]
        ]
        multi = [
            {
                "axis": axis,
                "ko": AXIS_KO[axis],
                "figures": axes[axis],
                "rows": [
                    (code, charts.label_name(axis, code), f)
                    for code, f in charts.worst_first(axes[axis]["labels"], axis)
                ],
                "svg": mark_safe(
                    wide_and_compact(
                        charts.f1_bars_svg(axes[axis]["labels"], axis, ident=f"f1-{axis}"),
                        charts.f1_bars_svg(axes[axis]["labels"], axis, ident=f"f1-{axis}-c", compact=True),
                    )
                )
                if axes[axis]["labels"]
                else "",
            }
            for axis in services.MULTI_LABEL_AXES
        ]
        single = [
            {
                "axis": axis,
                "ko": AXIS_KO[axis],
                "figures": axes[axis],
                "svg": mark_safe(charts.confusion_svg(axes[axis]["confusion"], axis, ident=f"cm-{axis}")),
            }
            for axis in ("stage", "dialog_act")
        ]
        trend = []
        for version, version_figures in report.versions:
            va = version_figures["axes"]
            trend.append(
                {
                    "run": version,
                    "label": f"#{version.pk} {version.note}"
                    if version.note
                    else f"#{version.pk} {version.created_at:%m-%d}",
                    "values": {
                        "기법 micro-F1": va["techniques"]["micro_f1"],
                        "내담자 상태 micro-F1": va["client_states"]["micro_f1"],
                        "단계 정확도": va["stage"]["accuracy"],
                        "대화행위 κ": va["dialog_act"]["kappa"],
                    },
                    "safety": version_figures["safety"]["recall"],
                }
            )
        alpha = report.alpha
        context = self._context(
            request,
            _("일치도 보고서: %(rater)s #%(id)s") % {"rater": run.rater, "id": run.pk},
            run=run,
            figures=figures,
            axis_rows=[(AXIS_KO[axis], axis, f) for axis, f in axes.items()],
            missed=missed,
            multi=multi,
            single=single,
            trend=trend,
            trend_svg=mark_safe(
                wide_and_compact(charts.trend_svg(trend), charts.trend_svg(trend, ident="trend-c", compact=True))
            )
            if len(trend) > 1
            else "",
            alpha=[(AXIS_KO[axis], value) for axis, value in alpha["axes"].items()],
            alpha_sources=["골든 세트" if source == "golden" else source for source in alpha["sources"]],
            scoped=not sees_everything(request.user),
        )
        return TemplateResponse(request, "admin/agreement/report.html", context)

    @staticmethod
    def _turn_links(request, utterance_ids) -> dict[str, str]:
        turns = Turn.objects.filter(utterance_id__in=list(utterance_ids)).values_list(
            "utterance_id", "session_id", "seq"
        )
        return {uid: _turn_url(session_id, seq) for uid, session_id, seq in turns}

    # Adjudication --------------------------------------------------------------------------------

    # A page of the queue holds at most this many differences: a run of 100,000 turns can differ on thousands,
    # and one page with a form for each took seconds to render and scroll.
    queue_page_size = 50

    def adjudicate_view(self, request, run_id: int):
        run = self._run(request, run_id)
        if request.method == "POST":
            return self._decide(request, run)
        differences = services.run_differences(run, request.user)
        paginator = Paginator(differences, self.queue_page_size)
        page = paginator.get_page(request.GET.get("page"))
        # The utterance itself beside each difference: a supervisor judges "is this empathy?" on the words,
        # not on the id (the queue showed ids only, one click away from the text). Only this page's turns.
        turns = selectors.queue_turns({d.turn_id for d in page})
        supervised = supervised_among(request.user, (turn.trainee_id for turn in turns.values()))
        on_page: dict[tuple[str, str], list] = defaultdict(list)
        for d in page:
            turn = turns.get(d.turn_id)
            on_page[(d.axis, d.label)].append(
                {
                    "d": d,
                    "golden": PRESENCE_KO.get(d.golden) or charts.label_named(d.axis, d.golden),
                    "rater": PRESENCE_KO.get(d.rater) or charts.label_named(d.axis, d.rater),
                    "url": _turn_url(turn.session_id, turn.seq) if turn else None,
                    "text": turn.text if turn else "",
                    "can": turn is not None and (request.user.is_superuser or turn.trainee_id in supervised),
                }
            )
        index = _queue_index(differences, self.queue_page_size, page.number)
        context = self._context(
            request,
            _("판정 대기열: %(rater)s #%(id)s") % {"rater": run.rater, "id": run.pk},
            run=run,
            index=list(index.values()),
            groups=[{**index[key], "items": items} for key, items in on_page.items()],
            page=page,
            total=len(differences),
            decided=selectors.decisions(run, request.user).order_by("-decided_at")[:50],
        )
        return TemplateResponse(request, "admin/agreement/adjudicate.html", context)

    def _decide(self, request, run: AnnotationRun):
        """One decision from the queue, then back to the page and the group it was made on."""
        form = DecisionForm(request.POST)
        if not form.is_valid():
            messages.error(request, _("판정 요청이 올바르지 않습니다."))
            return HttpResponseRedirect(request.get_full_path())
        data = form.cleaned_data
        turn = Turn.objects.filter(pk=data["turn"]).select_related("session").first()
        if turn is None:
            raise Http404
        try:
            services.adjudication_decide(
                run=run,
                turn=turn,
                axis=data["axis"],
                label=data["label"],
                outcome=data["outcome"],
                note=data["note"],
                decided_by=request.user,
            )
        except services.AdjudicationRejected as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request,
                _("%(turn)s: %(outcome)s") % {"turn": turn.utterance_id, "outcome": Outcome(data["outcome"]).label},
            )
        # Back to the group just worked on (the form posts to the page's own address, its ?page= included),
        # not to the top of a queue of a hundred differences.
        return HttpResponseRedirect(f"{request.get_full_path()}#{queue_anchor(data['axis'], data['label'])}")


def _turn_url(session_id: int, seq: int) -> str:
    """The turn on its session's admin transcript."""
    return reverse("admin:supervision_session_change", args=[session_id]) + f"#turn-{seq}"


def _queue_group(axis: str, label: str) -> dict:
    """How a group (axis, label) of the queue is named, in the index and over its table."""
    safety = services.is_safety_critical(axis, label)
    return {
        "axis": AXIS_KO[axis],
        "axis_code": axis,
        "label": label,
        "name": charts.label_name(axis, label),
        "short": charts.label_ko(axis, label),
        "anchor": queue_anchor(axis, label),
        "safety": safety,
        # the index's rows: the safety states lead on a row of their own
        "section": _("자살·자해") if safety else AXIS_KO[axis],
    }


def _queue_index(differences: list, page_size: int, current: int) -> dict[tuple[str, str], dict]:
    """Every group of the whole queue, in queue order: its size, the page its first difference is on, a link
    there, and (for a group cut by a page break) which of its differences the current page shows."""
    index: dict[tuple[str, str], dict] = {}
    for position, d in enumerate(differences):
        page = position // page_size + 1
        entry = index.get((d.axis, d.label))
        if entry is None:
            entry = index[(d.axis, d.label)] = {
                **_queue_group(d.axis, d.label),
                "count": 0,
                "page": page,
                "first_shown": 0,
                "last_shown": 0,
            }
        entry["count"] += 1
        if page == current:
            entry["first_shown"] = entry["first_shown"] or entry["count"]
            entry["last_shown"] = entry["count"]
    for entry in index.values():
        anchor = "#" + entry["anchor"]
        entry["href"] = anchor if entry["page"] == current else f"?page={entry['page']}{anchor}"
        entry["split"] = entry["last_shown"] - entry["first_shown"] + 1 < entry["count"]
    return index


def queue_anchor(axis: str, label: str) -> str:
    """The id of a group (axis, label) on the adjudication queue (labels are codes: no spaces)."""
    return f"q-{axis}-{label}"


def _answer(axis: str, value: str) -> str:
    """One side's answer in a decision: 있음/없음 for a label, the stage or act (Korean name, code) otherwise."""
    return PRESENCE_KO.get(value) or charts.label_named(axis, value)


@admin.register(AdjudicationDecision)
class AdjudicationDecisionAdmin(admin.ModelAdmin):
    # In Korean as the queue shows them: the run and the turn by name, a label with its Korean name, a side's
    # answer as 있음/없음 (or the stage or act it gave), not "Run", "present", "empathy".
    list_display = (
        "run_display",
        "turn_display",
        "axis",
        "label_display",
        "golden_display",
        "rater_display",
        "outcome",
        "decided_by",
        "decided_at",
    )
    list_filter = ("outcome", "axis")
    list_select_related = ("run", "turn", "decided_by")
    readonly_fields = (*list_display, "note")

    @admin.display(description=_("실행"), ordering="run")
    def run_display(self, obj):
        return str(obj.run)

    @admin.display(description=_("발화"), ordering="turn__utterance_id")
    def turn_display(self, obj):
        return obj.turn.utterance_id

    @admin.display(description=_("라벨"), ordering="label")
    def label_display(self, obj):
        return charts.label_named(obj.axis, obj.label)

    @admin.display(description=_("골든"))
    def golden_display(self, obj):
        return _answer(obj.axis, obj.golden)

    @admin.display(description=_("평가자"))
    def rater_display(self, obj):
        return _answer(obj.axis, obj.rater)

    def get_queryset(self, request):
        return super().get_queryset(request).filter(pk__in=selectors.decisions_visible(request.user).values("pk"))

    def has_add_permission(self, request):
        return False  # decisions are made on the queue, through the service

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
