"""Read-only admin for stored trajectory audits, scoped to the trainees the user may see."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from supervision.admin import RoleScopedAdmin, WrittenElsewhereMixin, trainee_list_filter
from supervision.feedback import charts
from supervision.roles import is_supervisor, sees_everything
from supervision.trajectory.display import supervisor_explanation
from supervision.trajectory.models import AuditLabels, TrajectoryAudit, TrajectoryLabel
from supervision.trajectory.selectors import risk_threshold, trace_of, with_label_basis

# Colours of the labels: .trajectory-<label> in static/portal_admin.css.
_LABELS = frozenset(TrajectoryLabel.values)


class LabelBasisFilter(admin.SimpleListFilter):
    """Audits read from the labels people gave, or from the AI's where a session has none (CONTRACT §9)."""

    title = _("라벨")  # the admin shows "라벨 기준" (its "By %(filter_title)s")
    parameter_name = "labels"

    def lookups(self, request, model_admin):
        return AuditLabels.choices

    def queryset(self, request, queryset):
        if self.value() in AuditLabels.values:
            return queryset.filter(label_basis=self.value())
        return queryset


@admin.register(TrajectoryAudit)
class TrajectoryAuditAdmin(WrittenElsewhereMixin, RoleScopedAdmin):
    trainee_path = "session__trainee"
    list_display = ("session", "window_index", "seq_range", "label_display", "basis_display", "score", "computed_at")
    list_filter = ("label", LabelBasisFilter, trainee_list_filter("session__trainee"))
    search_fields = ("session__code",)
    list_select_related = ("session", "session__trainee")
    ordering = ("session__code", "window_index")
    fields = (
        "session",
        "window_index",
        "seq_range",
        "label_display",
        "basis_display",
        "score",
        "explanation_display",
        "sycophancy_display",
        "trace_display",
        "engine_version",
        "computed_at",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return with_label_basis(super().get_queryset(request))

    # Audits are written only by the service; supervisors and staff read them (trainees never use the admin).
    def _may_read(self, request) -> bool:
        return is_supervisor(request.user) or sees_everything(request.user)

    def has_module_permission(self, request):
        return self._may_read(request) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return self._may_read(request) or super().has_view_permission(request, obj)

    @admin.display(description=_("발화 순서"))
    def seq_range(self, obj):
        return f"{obj.first_seq}–{obj.last_seq}"

    @admin.display(description=_("판정"), ordering="label")
    def label_display(self, obj):
        return format_html(
            '<strong class="trajectory-label trajectory-{}">{}</strong>',
            obj.label if obj.label in _LABELS else "none",
            obj.get_label_display(),
        )

    @admin.display(description=_("라벨 기준"), ordering="label_basis")
    def basis_display(self, obj):
        if obj.label_basis == AuditLabels.SUGGESTED:
            return format_html('<span class="badge-suggested">{}</span>', _("AI 추정 라벨 기준"))
        return AuditLabels(obj.label_basis).label

    @admin.display(description=_("설명"))
    def explanation_display(self, obj):
        # The engine's terms in Korean, less the verdict and score (fields of their own above); its own text
        # (audit_trajectories' output) in the tooltip.
        return format_html(
            '<span title="{}">{}</span>', obj.explanation, supervisor_explanation(obj.explanation, verdict=False)
        )

    @admin.display(description=_("은밀한 아첨 발화"))
    def sycophancy_display(self, obj):
        return ", ".join(obj.sycophancy_turns or ()) or "—"

    @admin.display(description=_("상태 궤적"))
    def trace_display(self, obj):
        # The same chart as on the session page (wide, and compact on a phone), then its numbers.
        trace = trace_of(obj.states)
        threshold = risk_threshold()
        chart = charts.wide_and_compact(
            charts.trajectory_svg(trace, threshold, ident="trajectory"),
            charts.trajectory_svg(trace, threshold, ident="trajectory-c", compact=True),
        )
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    s["seq"],
                    s["utterance_id"],
                    f"{s['valence'] or 0.0:+.2f}",
                    f"{s['arousal'] or 0.0:.2f}",
                    f"{s['risk'] or 0.0:.2f}",
                )
                for s in trace
            ),
        )
        table = format_html(
            '<div class="table-scroll"><table class="trajectory-trace-table"><thead><tr><th>{}</th><th>{}</th>'
            "<th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table></div>",
            _("순서 (seq)"),
            _("발화 ID"),
            _("정서가 (valence)"),
            _("각성 (arousal)"),
            _("위험 (risk)"),
            rows,
        )
        return format_html('<div class="trajectory-admin-trace">{}{}</div>', mark_safe(chart), table)
