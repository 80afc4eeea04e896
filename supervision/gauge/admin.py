"""Admin of the review gauge: target bands (admins edit), snapshots at a glance, AI suggestions to review."""

from django import forms
from django.contrib import admin, messages
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from portal.queue import QueueUnavailable
from portal.tabular import PortalExportMixin
from supervision import presentation
from supervision.admin import RoleScopedAdmin, SavedTitleAdmin, trainee_list_filter
from supervision.feedback import charts
from supervision.gauge import figures
from supervision.gauge.models import GaugeSnapshot, SuggestedComment, TargetBand
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.gauge.suggestions import suggestion_accept, suggestion_dismiss
from supervision.gauge.tasks import queue_nightly_reviews
from supervision.resources import GaugeSnapshotResource
from supervision.roles import is_supervisor, sees_everything, supervises
from supervision.services import ServiceError
from taxonomy import catalogue

# Colours are classes of static/portal_admin.css (no style attributes: the CSP allows no inline styles).
STATUS_MARK = {figures.UNDER: ("↓", "under"), figures.WITHIN: ("✓", "within"), figures.OVER: ("↑", "over")}
RQ_BANDS = {figures.GOOD, figures.FAIR, figures.BELOW_FAIR}
RQ_BAND_SHORT_KO = {figures.GOOD: _("우수"), figures.FAIR: _("적정"), figures.BELOW_FAIR: _("기준 미달")}
DEVIATION_LABELS = (
    ("dimension", _("평가 차원 (dimension)")),
    ("expected", _("권장 (expected)")),
    ("actual", _("실제 (actual)")),
    ("severity", _("심각도 (severity)")),
)


def _deviation_value(key: str, value):
    """A suggestion's deviation in Korean: severity as a word, a technique or a category band by name."""
    if key == "severity":
        return presentation.SEVERITY_KO.get(value, value)
    if key in ("expected", "actual") and isinstance(value, str):
        ko = presentation.TECHNIQUE_KO.get(value) or presentation.CATEGORY_KO.get(value)
        return f"{ko} ({value})" if ko else value
    return value


class TargetBandForm(forms.ModelForm):
    """A band's two shares, each checked as a share (0–1) first: the decimal field alone answered 150 with
    "전체 유효자리 개수가 1 개를 넘지 않도록…", and -5 with nothing of its own."""

    low = forms.DecimalField(label=_("하한 비율"))
    high = forms.DecimalField(label=_("상한 비율"))

    class Meta:
        model = TargetBand
        fields = ("low", "high", "rationale")

    def _share(self, name: str):
        value = self.cleaned_data[name]
        if not 0 <= value <= 1:
            raise forms.ValidationError(_("0에서 1 사이의 비율로 적어 주세요(예: 0.25 = 25 %)."))
        return value

    def clean_low(self):
        return self._share("low")

    def clean_high(self):
        return self._share("high")


@admin.register(TargetBand)
class TargetBandAdmin(SavedTitleAdmin):
    form = TargetBandForm
    list_display = ("category", "low", "high", "rationale", "updated_at")
    list_editable = ("low", "high")
    readonly_fields = ("updated_at",)

    def get_changelist_form(self, request, **kwargs):
        return TargetBandForm

    def has_add_permission(self, request):
        return False  # one row per catalogue category, seeded by migration 0002

    def has_delete_permission(self, request, obj=None):
        return False


class ScopeFilter(admin.SimpleListFilter):
    title = _("범위")
    parameter_name = "scope"

    def lookups(self, request, model_admin):
        return (("trainee", _("수련생 전체")), ("session", _("회기별")))

    def queryset(self, request, queryset):
        if self.value() == "trainee":
            return queryset.filter(session__isnull=True)
        if self.value() == "session":
            return queryset.filter(session__isnull=False)
        return queryset


@admin.register(GaugeSnapshot)
class GaugeSnapshotAdmin(PortalExportMixin, RoleScopedAdmin):
    resource_classes = (GaugeSnapshotResource,)  # the change list as filtered: a supervisor's own trainees
    list_display = (
        "trainee",
        "day",
        "scope",
        "turns_display",
        "balance",
        "rq",
        "critique_counts",
        "deviation",
        "dialog_acts",
        "safety_events",
    )
    list_filter = (ScopeFilter, "date", trainee_list_filter("trainee"))
    list_select_related = ("trainee", "session")
    search_fields = ("trainee__username", "session__code")
    date_hierarchy = "date"
    actions = ("recompute",)
    ordering = ("-date", "trainee", "session")
    # The change page shows the figures as the trainee sees them (charts and tables), not their JSON.
    fieldsets = (
        (None, {"fields": ("trainee", "session", "date", "sessions", "turns", "counselor_turns", "computed_at")}),
        (_("군집별 비율"), {"fields": ("category_figure",)}),
        (_("기법별 빈도"), {"fields": ("technique_table",)}),
        (_("반영 대 질문 (MITI)"), {"fields": ("reflections", "questions", "rq")}),
        (_("논평과 의도 이탈"), {"fields": ("critique_table", "intent_deviation_turns", "deviation")}),
        (_("대화 행위"), {"fields": ("silent_close_events", "closing_acknowledged", "closed_on_resuming_client")}),
        (_("상태 전이"), {"fields": ("transition_table",)}),
        (_("안전 사건"), {"fields": ("safety_events",)}),
    )
    readonly_fields = (
        "category_figure",
        "technique_table",
        "rq",
        "critique_table",
        "deviation",
        "transition_table",
        "safety_events",
    )

    def has_add_permission(self, request):
        return False  # snapshots come from the nightly run only

    def has_change_permission(self, request, obj=None):
        return False

    def has_recompute_permission(self, request):
        return sees_everything(request.user) or is_supervisor(request.user)

    def changelist_view(self, request, extra_context=None):
        # Ten figure columns fit 1280 px only without the navigation sidebar beside them.
        return super().changelist_view(request, {"is_nav_sidebar_enabled": False, **(extra_context or {})})

    @admin.display(description=_("기준일"), ordering="date")
    def day(self, obj):
        return obj.date.isoformat()

    @admin.display(description=_("범위"), ordering="session__code")
    def scope(self, obj):
        return obj.session.code if obj.session_id else _("전체")

    @admin.display(description=_("발화 (상담자)"), ordering="turns")
    def turns_display(self, obj):
        return f"{obj.turns} ({obj.counselor_turns})"

    @admin.display(description=_("목표 범위 밖 군집"))
    def balance(self, obj):
        """Only the categories off their band, so the column stays narrow; the title carries every figure."""
        cells = []
        for code in catalogue.CATEGORY_CODES:
            figure = obj.categories.get(code, {})
            if figure.get("status") not in (figures.UNDER, figures.OVER):
                continue
            mark, colour = STATUS_MARK[figure["status"]]
            share = "—" if figure.get("share") is None else f"{figure['share']:.2f}"
            band = figure.get("band")
            band_text = f"{band[0]:.2f}–{band[1]:.2f}" if band else "—"
            name = presentation.CATEGORY_KO.get(code, code)
            cells.append((colour, f"{name} ({code})", band_text, name, share, mark))
        if not cells:
            return format_html("<span class='band-status band-within'>{}</span>", _("모두 범위 안 ✓"))
        return format_html_join(
            " ",
            "<span class='band-status band-{} nowrap' title='{} / 목표 {}'>{} {}{}</span>",
            cells,
        )

    @admin.display(description=_("반영:질문"))
    def rq(self, obj):
        ratio = "—" if obj.rq_ratio is None else f"{obj.rq_ratio:.2f}"
        band = obj.rq_band if obj.rq_band in RQ_BANDS else "none"
        return format_html(
            "<span class='rq-band rq-{} nowrap'>{} {}</span>", band, ratio, RQ_BAND_SHORT_KO.get(band, "—")
        )

    @admin.display(description=_("논평 경/보/중"))
    def critique_counts(self, obj):
        return " / ".join(str(obj.critiques.get(s, 0)) for s in catalogue.CRITIQUE_SEVERITIES)

    @admin.display(description=_("의도 이탈률"), ordering="intent_deviation_rate")
    def deviation(self, obj):
        return "—" if obj.intent_deviation_rate is None else f"{obj.intent_deviation_rate:.0%}"

    @admin.display(description=_("종결: 무응답/수긍/재개"))
    def dialog_acts(self, obj):
        return f"{obj.silent_close_events} / {obj.closing_acknowledged} / {obj.closed_on_resuming_client}"

    @admin.display(description=_("안전 응답/사건 (지연)"))
    def safety_events(self, obj):
        block = obj.safety or {}
        if not block.get("events"):
            return "—"
        median = block.get("median_latency")
        return f"{block.get('answered', 0)}/{block['events']}" + ("" if median is None else f" ({median:g})")

    @admin.display(description=_("군집별 비율"))
    def category_figure(self, obj):
        gauge = GaugeSnapshotSerializer(obj).data
        return render_to_string(
            "feedback/_gauge_categories.html", {"gauge": gauge, "gauge_rows": charts.category_rows(gauge)}
        )

    @admin.display(description=_("기법별 빈도"))
    def technique_table(self, obj):
        return render_to_string("feedback/_technique_counts.html", {"rows": charts.technique_rows(obj.techniques)})

    @admin.display(description=_("논평"))
    def critique_table(self, obj):
        return render_to_string(
            "feedback/_critique_counts.html",
            {
                "severities": charts.severity_rows(obj.critiques),
                "dimensions": sorted((obj.critique_dimensions or {}).items(), key=lambda item: (-item[1], item[0])),
            },
        )

    @admin.display(description=_("내담자 상태 전이"))
    def transition_table(self, obj):
        return render_to_string(
            "feedback/_state_transitions.html", {"rows": charts.transition_rows(obj.client_state_transitions)}
        )

    @admin.action(description=_("지금 다시 계산 (선택한 스냅숏의 날짜)"), permissions=("recompute",))
    def recompute(self, request, queryset):
        try:
            n = queue_nightly_reviews(queryset.order_by().values_list("date", flat=True).distinct())
        except QueueUnavailable as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, _("%(n)d개 날짜의 재계산을 대기열에 넣었습니다.") % {"n": n}, messages.SUCCESS)


class SeverityFilter(admin.SimpleListFilter):
    title = _("심각도")
    parameter_name = "severity"

    def lookups(self, request, model_admin):
        return list(presentation.SEVERITY_KO.items())

    def queryset(self, request, queryset):
        if self.value() in presentation.SEVERITY_KO:
            return queryset.filter(intent_deviation__severity=self.value())
        return queryset


@admin.register(SuggestedComment)
class SuggestedCommentAdmin(RoleScopedAdmin):
    """Suggestions only; the supervisor accepts (the comment becomes theirs) or dismisses (deleted)."""

    trainee_path = "turn__session__trainee"
    # The suggestion key (e.g. "gauge:band:STABILIZING") is what keeps re-runs from repeating a suggestion; it
    # stays on the detail page, a person filters by severity.
    list_display = ("turn", "trainee", "short_text", "severity_display", "created_at")
    list_filter = (SeverityFilter,)
    list_select_related = ("turn__session__trainee",)
    search_fields = ("text", "turn__utterance_id", "turn__session__code")
    readonly_fields = ("turn", "kind", "text", "deviation_table", "suggestion_key_display", "created_at")
    fields = readonly_fields
    actions = ("accept", "dismiss")

    change_form_template = "admin/gauge/suggestedcomment/change_form.html"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(is_suggestion=True)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # 수락 / 기각 on the suggestion's own page too, through the transcript's review view (the same services),
        # coming back to the suggestion list.
        suggestion = self.get_object(request, object_id)
        if suggestion is not None:
            extra_context = {
                **(extra_context or {}),
                "can_review": supervises(request.user, suggestion.turn.session.trainee_id),
                "session_id": suggestion.turn.session_id,
                "back_url": reverse("admin:gauge_suggestedcomment_changelist"),
            }
        return super().change_view(request, object_id, form_url, extra_context)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # dismiss remembers the dismissal; a bare delete would not
        return actions

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_review_permission(self, request):
        return request.user.is_superuser or is_supervisor(request.user)

    @admin.display(description=_("제안 식별자"))
    def suggestion_key_display(self, obj):
        # What keeps a re-run from suggesting the same thing twice: a code, shown as one.
        return format_html("<code>{}</code>", obj.suggestion_key)

    @admin.display(description=_("의도 이탈"))
    def deviation_table(self, obj):
        deviation = obj.intent_deviation or {}
        shown = {key: _deviation_value(key, value) for key, value in deviation.items()}
        rows = [(label, shown[key]) for key, label in DEVIATION_LABELS if deviation.get(key)]
        if not rows:
            return "—"
        return format_html(
            '<table class="deviation"><tbody>{}</tbody></table>',
            format_html_join("", '<tr><th scope="row">{}</th><td>{}</td></tr>', rows),
        )

    @admin.display(description=_("수련생"))
    def trainee(self, obj):
        return obj.turn.session.trainee

    @admin.display(description=_("내용"))
    def short_text(self, obj):
        # with an ellipsis: cut bare at 80 characters, "…확인 질문)이 있" read as the whole text
        return Truncator(obj.text).chars(80)

    @admin.display(description=_("심각도"))
    def severity_display(self, obj):
        return presentation.SEVERITY_KO.get(obj.severity or "", "—")

    def _review(self, request, queryset, service, done_message):
        done, refused = 0, []
        for comment in queryset.select_related("turn__session"):
            try:
                service(comment=comment, user=request.user)
                done += 1
            except ServiceError as exc:
                refused.append(f"{comment.turn}: {exc}")
        if done:
            self.message_user(request, done_message % {"n": done}, messages.SUCCESS)
        for message in refused:
            self.message_user(request, message, messages.ERROR)

    @admin.action(description=_("승인 (내 논평으로)"), permissions=("review",))
    def accept(self, request, queryset):
        self._review(request, queryset, suggestion_accept, _("AI 제안 %(n)d개를 승인했습니다."))

    @admin.action(description=_("기각 (삭제, 다시 제안하지 않음)"), permissions=("review",))
    def dismiss(self, request, queryset):
        self._review(request, queryset, suggestion_dismiss, _("AI 제안 %(n)d개를 기각했습니다."))
