"""The admin for staff and supervisors. Every queryset is narrowed to the trainees the user may see."""

from django import forms
from django.contrib import admin
from django.db.models import Count
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from supervision import rules
from supervision.importing.admin import SpreadsheetImportMixin
from supervision.models import (
    CommentKind,
    Session,
    Severity,
    SupervisorComment,
    TraineeAssignment,
    Turn,
    TurnClientState,
    TurnTechnique,
)
from supervision.roles import trainee_filter
from taxonomy import catalogue


class RoleScopedAdmin(admin.ModelAdmin):
    """Limits rows to the trainees the user may see; ``trainee_path`` leads from the row to the trainee."""

    trainee_path = "trainee"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(trainee_filter(request.user, self.trainee_path))


class CommentForm(forms.ModelForm):
    """Critique fields as real inputs; stored as ``intent_deviation`` and checked by the shared rules."""

    dimension = forms.CharField(label=_("평가 차원"), required=False, max_length=rules.MAX_SHORT_FIELD)
    expected = forms.CharField(
        label=_("권장 의도(expected)"),
        required=False,
        max_length=rules.MAX_SHORT_FIELD,
        help_text=_("기법 코드(예: cognitive_restructuring) 또는 자유 서술"),
    )
    actual = forms.CharField(
        label=_("실제(actual)"),
        required=False,
        max_length=rules.MAX_SHORT_FIELD,
        help_text=_("기법 코드 또는 자유 서술"),
    )
    severity = forms.ChoiceField(label=_("심각도"), required=False, choices=[("", "—"), *Severity.choices])

    class Meta:
        model = SupervisorComment
        fields = ("kind", "text")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        deviation = self.instance.intent_deviation or {}
        for key in rules.INTENT_DEVIATION_KEYS:
            self.fields[key].initial = deviation.get(key, "")

    def clean(self):
        data = super().clean()
        deviation = {key: data[key] for key in rules.INTENT_DEVIATION_KEYS if data.get(key)}
        if deviation and data.get("kind") != CommentKind.CRITIQUE:
            raise forms.ValidationError(_("평가 차원·권장·실제·심각도는 논평(critique)에만 적을 수 있습니다."))
        for key, message in rules.intent_deviation_problems(deviation):
            self.add_error(key if key in self.fields else None, message)
        self.instance.intent_deviation = deviation
        return data


class TurnTechniqueInline(admin.TabularInline):
    model = TurnTechnique
    extra = 0
    autocomplete_fields = ("label",)
    verbose_name = _("기법")


class TurnClientStateInline(admin.TabularInline):
    model = TurnClientState
    extra = 0
    autocomplete_fields = ("label",)
    verbose_name = _("내담자 상태")


class CommentInline(admin.StackedInline):
    model = SupervisorComment
    form = CommentForm
    extra = 0
    fields = ("kind", "text", "dimension", "expected", "actual", "severity")


@admin.register(Session)
class SessionAdmin(SpreadsheetImportMixin, RoleScopedAdmin):
    list_display = ("code", "title", "trainee", "held_on", "turn_count", "source", "taxonomy_version")
    list_filter = ("held_on", "trainee")
    search_fields = ("code", "title", "trainee__username")
    list_select_related = ("trainee",)
    raw_id_fields = ("trainee", "created_by")
    readonly_fields = ("taxonomy_version", "created_by", "created_at", "updated_at")
    date_hierarchy = "held_on"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(turn_total=Count("turns"))

    @admin.display(description=_("발화 수"), ordering="turn_total")
    def turn_count(self, obj):
        return obj.turn_total


@admin.register(Turn)
class TurnAdmin(RoleScopedAdmin):
    trainee_path = "session__trainee"
    list_display = ("utterance_id", "session", "seq", "speaker", "stage", "short_text", "dialog_act")
    list_filter = ("stage", "speaker", "dialog_act", "session__trainee", "techniques", "client_states")
    search_fields = ("text", "utterance_id", "session__code")
    list_select_related = ("session", "stage")
    raw_id_fields = ("session",)
    readonly_fields = ("session", "seq", "utterance_id", "speaker")
    fields = ("session", "seq", "utterance_id", "speaker", "stage", "text", "nonverbal", "dialog_act")

    @admin.display(description=_("발화"))
    def short_text(self, obj):
        return obj.text[:60]

    def get_inlines(self, request, obj):
        # The attach rule: techniques only on counselor turns, client states only on client turns.
        if obj is None:
            return []
        labels = TurnTechniqueInline if obj.speaker == catalogue.COUNSELOR else TurnClientStateInline
        return [labels, CommentInline]

    def has_add_permission(self, request):
        return False  # turns arrive through the importer, which keeps seq 0..N-1

    def save_formset(self, request, form, formset, change):
        instances = formset.save(commit=False)
        for obj in formset.deleted_objects:
            obj.delete()
        for instance in instances:
            if isinstance(instance, SupervisorComment) and instance.pk is None:
                instance.written_by = request.user
            instance.save()
        formset.save_m2m()


@admin.register(SupervisorComment)
class SupervisorCommentAdmin(RoleScopedAdmin, SimpleHistoryAdmin):
    trainee_path = "turn__session__trainee"
    form = CommentForm
    list_display = (
        "turn",
        "kind",
        "short_text",
        "severity_display",
        "author",
        "written_by",
        "is_suggestion",
        "updated_at",
    )
    list_filter = ("kind", "author", "is_suggestion")
    search_fields = ("text", "turn__utterance_id")
    list_select_related = ("turn", "written_by")
    raw_id_fields = ("turn",)
    fields = ("turn", "kind", "text", "dimension", "expected", "actual", "severity")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "turn":
            kwargs["queryset"] = Turn.objects.filter(trainee_filter(request.user, "session__trainee"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["fields"] = ("turn", "kind", "text")
        return super().get_form(request, obj, change, **kwargs)

    @admin.display(description=_("내용"))
    def short_text(self, obj):
        return obj.text[:60]

    @admin.display(description=_("심각도"))
    def severity_display(self, obj):
        return obj.severity or "—"

    def save_model(self, request, obj, form, change):
        if not change:
            obj.written_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(TraineeAssignment)
class TraineeAssignmentAdmin(RoleScopedAdmin):
    list_display = ("trainee", "supervisor", "assigned_at")
    list_select_related = ("trainee", "supervisor")
    raw_id_fields = ("trainee", "supervisor")
