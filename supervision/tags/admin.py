"""Supervisors see each tag with its full history and add evidence or contradictions inline — through
the same services as the API. Querysets are narrowed to the trainees the user may see."""

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import Count
from django.utils.translation import gettext_lazy as _

from portal.tabular import PortalExportMixin
from supervision.admin import RoleScopedAdmin, WrittenElsewhereMixin, trainee_list_filter
from supervision.models import Session
from supervision.resources import TraineeTagResource
from supervision.roles import supervises, trainee_filter
from supervision.tags.models import Origin, TagContradiction, TagEvidence, TagTransition, TraineeTag
from supervision.tags.services import tag_contradiction_record, tag_evidence_add


class _NewRowsForTheTrainee(forms.BaseInlineFormSet):
    """New rows may only name a session of the tag's own trainee."""

    def clean(self):
        super().clean()
        for form in self.forms:
            if form.instance.pk or not form.has_changed() or form in self.deleted_forms:
                continue
            session = form.cleaned_data.get("session")
            if session is not None and session.trainee_id != self.instance.trainee_id:
                form.add_error("session", _("이 수련생의 회기가 아닙니다."))


class _AppendOnlyInline(admin.TabularInline):
    formset = _NewRowsForTheTrainee
    extra = 1
    # Autocomplete (searched through the role-scoped SessionAdmin) rather than a raw id: a raw-id widget
    # renders the code and title of whatever session id is posted, another trainee's included.
    autocomplete_fields = ("session",)
    readonly_fields = ("at", "origin", "recorded_by")
    # The admin's default text box (40 columns, 10 rows) made the table wider than the page.
    formfield_overrides = {models.TextField: {"widget": forms.Textarea(attrs={"rows": 3, "cols": 24})}}

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "session":
            # The widget renders a selected session only if it is in this queryset.
            kwargs["queryset"] = Session.objects.filter(trainee_filter(request.user))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request, obj=None):
        return obj is not None and supervises(request.user, obj.trainee_id) and super().has_add_permission(request, obj)


class EvidenceInline(_AppendOnlyInline):
    model = TagEvidence
    fields = ("session", "event", "at", "origin", "recorded_by")
    verbose_name = _("근거")
    verbose_name_plural = _("근거 (추가만 가능)")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("recorded_by")


class ContradictionInline(_AppendOnlyInline):
    model = TagContradiction
    fields = ("session", "event", "severity", "at", "origin", "recorded_by")
    verbose_name = _("반증")
    verbose_name_plural = _("반증 (추가만 가능)")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("recorded_by")


class TransitionInline(WrittenElsewhereMixin, admin.TabularInline):
    model = TagTransition
    fields = ("at", "from_status", "to_status", "reason", "recorded_by")
    readonly_fields = fields
    extra = 0
    verbose_name_plural = _("상태 전이 이력")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("recorded_by")


@admin.register(TraineeTag)
class TraineeTagAdmin(PortalExportMixin, RoleScopedAdmin):
    resource_classes = (TraineeTagResource,)  # the change list as filtered: a supervisor's own trainees
    # The tag's choice label is its Korean description with the code beside it: no separate description column.
    list_display = (
        "trainee",
        "tag",
        "status",
        "source",
        "evidence_count",
        "contradiction_count",
        "verified_at",
        "last_updated",
    )
    list_filter = ("status", "source", "tag", trainee_list_filter("trainee"))
    search_fields = ("trainee__username", "tag")
    list_select_related = ("trainee",)
    fields = (
        "trainee",
        "tag",
        "source",
        "status",
        "observation_since",
        "hypothesis_since",
        "verified_at",
        "last_updated",
    )
    readonly_fields = fields
    inlines = (EvidenceInline, ContradictionInline, TransitionInline)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                evidence_total=Count("evidence", distinct=True),
                contradiction_total=Count("contradictions", distinct=True),
            )
        )

    @admin.display(description=_("설명"))
    def description(self, obj):
        return obj.definition.ko

    @admin.display(description=_("근거 수"), ordering="evidence_total")
    def evidence_count(self, obj):
        return obj.evidence_total

    @admin.display(description=_("반증 수"), ordering="contradiction_total")
    def contradiction_count(self, obj):
        return obj.contradiction_total

    def has_add_permission(self, request):
        return False  # a tag begins with its first evidence (API, gauge, or the trainee's declaration)

    def has_delete_permission(self, request, obj=None):
        return False  # the history is the point; nothing is erased

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or supervises(request.user, obj.trainee_id))

    def save_model(self, request, obj, form, change):
        pass  # every field is read-only; the inlines write through the services

    def save_formset(self, request, form, formset, change):
        tag = form.instance
        for row in formset.save(commit=False):
            if isinstance(row, TagEvidence):
                tag_evidence_add(
                    trainee_id=tag.trainee_id,
                    tag=tag.tag,
                    event=row.event,
                    session_id=row.session_id,
                    origin=Origin.SUPERVISOR,
                    recorded_by=request.user,
                )
            elif isinstance(row, TagContradiction):
                tag_contradiction_record(
                    trainee_id=tag.trainee_id,
                    tag=tag.tag,
                    event=row.event,
                    severity=row.severity,
                    session_id=row.session_id,
                    origin=Origin.SUPERVISOR,
                    recorded_by=request.user,
                )
