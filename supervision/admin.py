"""The admin for staff and supervisors. Every queryset is narrowed to the trainees the user may see.

A session's change page reads like a transcript (turns in order, label chips, nonverbal cues, comments
with the trainee's replies, a comment form per turn); labels are edited on the turn's page through
autocomplete inlines that only offer the axis the attach rule allows.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from supervision import presentation, rules
from supervision.commenting import CommentRejected, comment_problems, supervisor_comment_create
from supervision.feedback import selectors as feedback_selectors
from supervision.importing.admin import SpreadsheetImportMixin
from supervision.models import (
    CommentKind,
    Session,
    Severity,
    Speaker,
    SupervisorComment,
    TraineeAssignment,
    Turn,
    TurnClientState,
    TurnTechnique,
)
from supervision.roles import supervises, trainee_filter, visible_trainees
from taxonomy import catalogue
from taxonomy.models import StageDef


class RoleScopedAdmin(admin.ModelAdmin):
    """Limits rows to the trainees the user may see; ``trainee_path`` leads from the row to the trainee."""

    trainee_path = "trainee"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(trainee_filter(request.user, self.trainee_path))


def trainee_list_filter(trainee_path: str):
    """A trainee filter that offers only the trainees the user may see (the stock one lists every user)."""

    class TraineeFilter(admin.SimpleListFilter):
        parameter_name = "trainee_id"

        def lookups(self, request, model_admin):
            return [(str(pk), name) for pk, name in visible_trainees(request.user).values_list("pk", "username")]

        def queryset(self, request, queryset):
            value = self.value()
            if value and value.isdigit():
                return queryset.filter(**{f"{trainee_path}__pk": int(value)})
            return queryset

    TraineeFilter.title = _("수련생")
    return TraineeFilter


class TechniqueCodeInput(forms.TextInput):
    """Free text with the technique codes offered as suggestions (a picker that still allows prose)."""

    # In the app directory: the default form renderer reads app templates, not the project DIRS.
    template_name = "supervision/widgets/technique_code_input.html"

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        context["widget"]["attrs"]["list"] = f"{context['widget']['attrs'].get('id', name)}-codes"
        context["techniques"] = catalogue.TECHNIQUES
        return context


class CommentForm(forms.ModelForm):
    """Critique fields as real inputs; stored as ``intent_deviation`` and checked by the shared rules."""

    dimension = forms.CharField(label=_("평가 차원"), required=False, max_length=rules.MAX_SHORT_FIELD)
    expected = forms.CharField(
        label=_("권장 의도(expected)"),
        required=False,
        max_length=rules.MAX_SHORT_FIELD,
        widget=TechniqueCodeInput,
        help_text=_("기법 코드(예: cognitive_restructuring) 또는 자유 서술"),
    )
    actual = forms.CharField(
        label=_("실제(actual)"),
        required=False,
        max_length=rules.MAX_SHORT_FIELD,
        widget=TechniqueCodeInput,
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
        if "kind" in data and "text" in data:
            # The same checks as supervision.commenting (API, transcript form): one rule, one place.
            problems = comment_problems(kind=data["kind"], text=data["text"], intent_deviation=deviation)
            for field, messages in problems.items():
                for message in messages:
                    self.add_error(field if field in self.fields else None, message)
        self.instance.intent_deviation = deviation
        return data


class AttachRuleFormSet(BaseInlineFormSet):
    """Label inlines call the shared attach rule, so a crafted POST cannot put a label on the wrong speaker."""

    axis = "techniques"

    def clean(self):
        super().clean()
        codes = [
            form.cleaned_data["label"].code
            for form in self.forms
            if form.cleaned_data.get("label") and not form.cleaned_data.get("DELETE")
        ]
        labels = {"techniques": [], "client_states": []}
        labels[self.axis] = codes
        for _field, message in rules.attach_problems(self.instance.speaker, **labels):
            raise forms.ValidationError(message)


class TechniqueFormSet(AttachRuleFormSet):
    axis = "techniques"


class ClientStateFormSet(AttachRuleFormSet):
    axis = "client_states"


class TurnTechniqueInline(admin.TabularInline):
    model = TurnTechnique
    formset = TechniqueFormSet
    extra = 0
    autocomplete_fields = ("label",)
    verbose_name = _("기법")
    verbose_name_plural = _("기법 (상담자 발화)")


class TurnClientStateInline(admin.TabularInline):
    model = TurnClientState
    formset = ClientStateFormSet
    extra = 0
    autocomplete_fields = ("label",)
    verbose_name = _("내담자 상태")
    verbose_name_plural = _("내담자 상태 (내담자 발화)")


class CommentInline(admin.StackedInline):
    model = SupervisorComment
    form = CommentForm
    extra = 0
    fields = ("kind", "text", "dimension", "expected", "actual", "severity", "replies_display")
    readonly_fields = ("replies_display",)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("written_by").prefetch_related("replies__author")

    @admin.display(description=_("수련생 답글"))
    def replies_display(self, obj):
        return replies_html(obj)


def replies_html(comment):
    replies = list(comment.replies.all()) if comment.pk else []
    if not replies:
        return "—"
    return format_html_join(
        "",
        '<p class="reply"><strong>{}</strong> <span class="code">{}</span><br>{}</p>',
        ((r.author.username, r.created_at.strftime("%Y-%m-%d %H:%M"), r.text) for r in replies),
    )


@admin.register(Session)
class SessionAdmin(SpreadsheetImportMixin, RoleScopedAdmin):
    list_display = ("code", "title", "trainee", "held_on", "turn_count", "critique_count", "source")
    list_filter = ("held_on", trainee_list_filter("trainee"))
    search_fields = ("code", "title", "trainee__username", "turns__text")
    list_select_related = ("trainee",)
    raw_id_fields = ("trainee", "created_by")
    readonly_fields = ("taxonomy_version", "created_by", "created_at", "updated_at")
    date_hierarchy = "held_on"
    change_form_template = "admin/supervision/session/change_form.html"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                turn_total=Count("turns", distinct=True),
                critique_total=Count("turns__comments", filter=_accepted_critique("turns__comments__"), distinct=True),
            )
        )

    @admin.display(description=_("발화 수"), ordering="turn_total")
    def turn_count(self, obj):
        return obj.turn_total

    @admin.display(description=_("논평 수"), ordering="critique_total")
    def critique_count(self, obj):
        return obj.critique_total

    def get_urls(self):
        extra = [
            path(
                "<int:object_id>/turns/<int:turn_id>/comment/",
                self.admin_site.admin_view(self.comment_add_view),
                name="supervision_session_comment",
            )
        ]
        return extra + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        session = self.get_object(request, object_id)
        if session is not None:
            extra_context = {**(extra_context or {}), **self._transcript_context(request, session)}
        return super().change_view(request, object_id, form_url, extra_context)

    def _transcript_context(self, request, session):
        filters = {
            "stage": request.GET.get("stage", ""),
            "speaker": request.GET.get("speaker", ""),
            "label": request.GET.get("label", ""),
            "query": request.GET.get("q", "").strip(),
        }
        turns = list(feedback_selectors.transcript_turns(session, reader=None, include_suggestions=True, **filters))
        all_stages = list(session.turns.order_by("seq").values_list("stage_id", flat=True))
        return {
            "transcript": turns,
            "transcript_filters": filters,
            "transcript_filtered": any(filters.values()),
            "stage_codes": all_stages,
            "stage_choices": StageDef.objects.order_by("position").values_list("code", "ko"),
            "speaker_choices": Speaker.choices,
            "technique_choices": [(t.code, t.ko) for t in catalogue.TECHNIQUES],
            "client_state_choices": [(s.code, s.ko) for s in catalogue.CLIENT_STATES],
            "kind_choices": CommentKind.choices,
            "severity_choices": Severity.choices,
            "can_comment": supervises(request.user, session.trainee_id),
            "audits": feedback_selectors.audits_for(session),
        }

    def comment_add_view(self, request, object_id, turn_id):
        session = self.get_object(request, str(object_id))
        if session is None or not self.has_view_permission(request, session):
            raise Http404
        turn = Turn.objects.filter(session=session, pk=turn_id).select_related("session").first()
        if turn is None:
            raise Http404
        if not supervises(request.user, session.trainee_id):
            raise PermissionDenied
        form = CommentForm(request.POST or None, prefix=f"turn{turn.pk}")
        if request.method == "POST" and form.is_valid():
            try:
                supervisor_comment_create(
                    turn=turn,
                    written_by=request.user,
                    kind=form.cleaned_data["kind"],
                    text=form.cleaned_data["text"],
                    intent_deviation=form.instance.intent_deviation,
                )
            except CommentRejected as rejected:
                for field, problems in rejected.problems.items():
                    for problem in problems:
                        form.add_error(field if field in form.fields else None, problem)
            else:
                messages.success(request, _("%(turn)s에 논평을 남겼습니다.") % {"turn": turn.utterance_id})
                url = reverse("admin:supervision_session_change", args=[session.pk])
                return HttpResponseRedirect(f"{url}#turn-{turn.seq}")
        context = {
            **self.admin_site.each_context(request),
            "title": _("논평 쓰기: %(turn)s") % {"turn": turn.utterance_id},
            "opts": self.model._meta,
            "session": session,
            "turn": turn,
            "form": form,
        }
        return render(
            request, "admin/supervision/session/comment_form.html", context, status=400 if form.errors else 200
        )


def _accepted_critique(prefix: str):
    return Q(**{f"{prefix}kind": CommentKind.CRITIQUE, f"{prefix}is_suggestion": False})


@admin.register(Turn)
class TurnAdmin(RoleScopedAdmin):
    trainee_path = "session__trainee"
    list_display = ("utterance_id", "session", "seq", "speaker", "stage", "short_text", "label_chips", "dialog_act")
    list_filter = (
        "stage",
        "speaker",
        "dialog_act",
        trainee_list_filter("session__trainee"),
        "techniques",
        "client_states",
    )
    search_fields = ("text", "utterance_id", "session__code")
    list_select_related = ("session", "stage")
    raw_id_fields = ("session",)
    readonly_fields = ("session", "seq", "utterance_id", "speaker")
    fields = ("session", "seq", "utterance_id", "speaker", "stage", "text", "nonverbal", "dialog_act")

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("techniques", "client_states")

    @admin.display(description=_("발화"))
    def short_text(self, obj):
        return obj.text[:60]

    @admin.display(description=_("라벨"))
    def label_chips(self, obj):
        return label_chips_html(obj)

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


def label_chips_html(turn):
    # Colours come from the palette's classes (/palette.css), as on the trainee pages.
    chips = [(presentation.technique_chip_class(t.code), t.ko, t.code) for t in turn.techniques.all()] + [
        (presentation.client_state_chip_class(c.code), c.ko, c.code) for c in turn.client_states.all()
    ]
    return format_html_join(
        " ", '<span class="{}">{} <small>{}</small></span>', ((css, ko, code) for css, ko, code in chips)
    )


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
        "reply_count",
        "updated_at",
    )
    list_filter = ("kind", "author", "is_suggestion", trainee_list_filter("turn__session__trainee"))
    search_fields = ("text", "turn__utterance_id")
    list_select_related = ("turn", "written_by")
    autocomplete_fields = ("turn",)
    fields = ("turn", "kind", "text", "dimension", "expected", "actual", "severity", "replies_display")
    readonly_fields = ("replies_display",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(reply_total=Count("replies")).prefetch_related("replies__author")

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

    @admin.display(description=_("답글"), ordering="reply_total")
    def reply_count(self, obj):
        return obj.reply_total

    @admin.display(description=_("수련생 답글"))
    def replies_display(self, obj):
        return replies_html(obj)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.written_by = request.user
        super().save_model(request, obj, form, change)

    def _history_visible(self, request, object_id) -> bool:
        # simple_history falls back to the historical rows when the object is not in get_queryset, which
        # would show another trainee's (or a deleted) comment; scope its history by the turn it was on.
        try:
            comment_id = int(unquote(object_id))
        except (TypeError, ValueError):
            return False
        ever_on = SupervisorComment.history.filter(id=comment_id).values("turn_id")
        return Turn.objects.filter(trainee_filter(request.user, "session__trainee"), pk__in=ever_on).exists()

    def history_view(self, request, object_id, extra_context=None):
        if not self._history_visible(request, object_id):
            raise Http404
        return super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        if not self._history_visible(request, object_id):
            raise Http404
        return super().history_form_view(request, object_id, version_id, extra_context)


@admin.register(TraineeAssignment)
class TraineeAssignmentAdmin(RoleScopedAdmin):
    list_display = ("trainee", "supervisor", "assigned_at")
    list_select_related = ("trainee", "supervisor")
    raw_id_fields = ("trainee", "supervisor")
