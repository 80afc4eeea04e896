"""The admin for staff and supervisors. Every queryset is narrowed to the trainees the user may see.

A session's change page reads like a transcript (turns in order, label chips, nonverbal cues, comments
with the trainee's replies, a comment form per turn); labels are edited on the turn's page through
autocomplete inlines that only offer the axis the attach rule allows.
"""

from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from portal.tabular import PortalExportMixin, PortalImportMixin
from supervision import drafts, presentation, rules, selectors
from supervision.commenting import (
    CommentForbidden,
    CommentRejected,
    comment_change_problem,
    comment_problems,
    comment_reply_answer,
    resolve_intent_deviation,
    supervisor_comment_create,
    supervisor_comment_delete,
    supervisor_comment_update,
)
from supervision.feedback import selectors as feedback_selectors
from supervision.feedback.models import CommentRead
from supervision.importing.admin import SpreadsheetImportMixin
from supervision.labelling import LabelRejected, turn_labels_update
from supervision.models import (
    CommentKind,
    LabelChange,
    Session,
    Severity,
    Speaker,
    SupervisorComment,
    TraineeAssignment,
    Turn,
    TurnClientState,
    TurnTechnique,
)
from supervision.people.services import PersonRefused, trainee_reassign
from supervision.resources import CommentResource, RosterResource
from supervision.roles import Role, sees_everything, supervises, trainee_filter, visible_trainees
from supervision.services import ServiceError, TurnRejected, turn_edit_problems, turn_update
from supervision.suggesting.admin import SuggestedOnlyFilter, decorate_transcript, suggestion_urls
from supervision.suggesting.engine.model import AUDIT_MIN_PROBABILITY
from taxonomy import catalogue
from taxonomy.models import StageDef


class WrittenElsewhereMixin:
    """Rows that only their service writes: the admin shows them and never adds, changes or deletes one."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class SavedTitleAdmin(admin.ModelAdmin):
    """A change form refused by its validation is headed by the object as saved: Django builds the heading and
    breadcrumb from the instance the form has already filled in, so a refused band read "탐색 0.6–0.1" while
    the stored one was still 0.200–0.400."""

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # ``errors``: the form's and its inlines' (an invalid inline leaves a valid form's values unsaved too)
        if change and obj is not None and obj.pk and context.get("errors"):
            saved = type(obj)._default_manager.filter(pk=obj.pk).first()
            if saved is not None:
                context.update(original=saved, subtitle=str(saved))
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)


class RoleScopedAdmin(SavedTitleAdmin):
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
            if not value:
                return queryset
            # str.isdigit() accepts '²' and other digits int() refuses; a value that is not an id matches nothing.
            trainee_id = int(value) if value.isascii() and value.isdigit() and len(value) < 10 else None
            if trainee_id is None:
                return queryset.none()
            return queryset.filter(**{f"{trainee_path}__pk": trainee_id})

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
        help_text=_("기법의 한글 이름이나 코드 (예: 홀딩, 인지재구성 (cognitive_restructuring))"),
    )
    actual = forms.CharField(
        label=_("실제(actual)"),
        required=False,
        max_length=rules.MAX_SHORT_FIELD,
        widget=TechniqueCodeInput,
        help_text=_("기법의 한글 이름이나 코드"),
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
            problems = comment_problems(
                kind=data["kind"],
                text=data["text"],
                intent_deviation=deviation,
                stored=self.instance.intent_deviation or {},
            )
            for field, messages in problems.items():
                for message in messages:
                    # Deviation problems read "expected: …"; show them under their own input.
                    key, _sep, rest = message.partition(": ")
                    if field == "intent_deviation" and key in self.fields:
                        field, message = key, rest
                    self.add_error(field if field in self.fields else None, message)
        self.instance.intent_deviation = resolve_intent_deviation(deviation)
        return data


class AttachRuleFormSet(BaseInlineFormSet):
    """Label inlines call the shared attach rule, so a crafted POST cannot put a label on the wrong speaker."""

    axis = "techniques"

    def clean(self):
        super().clean()
        codes = [
            code
            for form in self.forms
            if not form.cleaned_data.get("DELETE") and (code := self._label_code(form)) is not None
        ]
        labels = {"techniques": [], "client_states": []}
        labels[self.axis] = codes
        for _field, message in rules.attach_problems(self.instance.speaker, **labels):
            raise forms.ValidationError(message)

    @staticmethod
    def _label_code(form) -> str | None:
        # For rows the user may only view, the admin hands over ``form.initial`` (the label's id, not the
        # label) as cleaned data; the stored row's label is the one that stays.
        label = form.cleaned_data.get("label")
        if label is not None and not hasattr(label, "code"):
            label = form.instance.label if form.instance.pk else None
        return None if label is None else label.code


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

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("label")


class TurnClientStateInline(admin.TabularInline):
    model = TurnClientState
    formset = ClientStateFormSet
    extra = 0
    autocomplete_fields = ("label",)
    verbose_name = _("내담자 상태")
    verbose_name_plural = _("내담자 상태 (내담자 발화)")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("label")


class CommentFormSet(BaseInlineFormSet):
    """A turn's comments: changes and deletes of existing ones follow the comment service's author rule."""

    user = None  # set by CommentInline.get_formset

    def clean(self):
        super().clean()
        for form in self.initial_forms:
            if not (form.has_changed() or form in self.deleted_forms):
                continue
            if problem := comment_change_problem(user=self.user, comment=form.instance):
                raise forms.ValidationError(problem)


TRANSCRIPT_FILTERS = ("stage", "speaker", "label", "q")


def transcript_url(session_id: int, filters: str | None, seq: int | None = None, *, anchor: str | None = None) -> str:
    """The session's transcript in the admin with its filters (a query string the page handed on, reduced to
    the transcript's own filters), at a turn or an anchor."""
    kept = QueryDict(filters or "")
    query = urlencode([(key, kept[key]) for key in TRANSCRIPT_FILTERS if kept.get(key)])
    url = reverse("admin:supervision_session_change", args=[session_id])
    if query:
        url += f"?{query}"
    if anchor:
        return f"{url}#{anchor}"
    return f"{url}#turn-{seq}" if seq is not None else url


def technique_html(value):
    """A critique's expected/actual: a technique's Korean name with its code, or the free text as written."""
    if not value:
        return "—"
    technique = catalogue.TECHNIQUES_BY_CODE.get(value)
    if technique is None:
        return value
    return format_html('{} <small class="code">{}</small>', technique.ko, value)


class CritiqueFieldsMixin:
    """The critique's fields (``CommentForm``'s own, not model fields) for read-only views — another
    supervisor's comment, a staff member's view — and the change list's columns: Korean labels and values
    instead of the English field name and "None"."""

    @admin.display(description=_("심각도"))
    def severity_display(self, obj):
        return presentation.SEVERITY_KO.get(obj.severity or "", "—")

    @admin.display(description=_("권장"))
    def expected_display(self, obj):
        return technique_html((obj.intent_deviation or {}).get("expected"))

    @admin.display(description=_("실제"))
    def actual_display(self, obj):
        return technique_html((obj.intent_deviation or {}).get("actual"))

    @admin.display(description=_("평가 차원"))
    def dimension(self, obj):
        return (obj.intent_deviation or {}).get("dimension") or "—"

    @admin.display(description=_("권장 의도"))
    def expected(self, obj):
        return self.expected_display(obj)

    @admin.display(description=_("실제"))
    def actual(self, obj):
        return self.actual_display(obj)

    @admin.display(description=_("심각도"))
    def severity(self, obj):
        return self.severity_display(obj)


class CommentInline(CritiqueFieldsMixin, admin.StackedInline):
    model = SupervisorComment
    form = CommentForm
    formset = CommentFormSet
    extra = 0
    fields = ("kind", "text", "dimension", "expected", "actual", "severity", "replies_display")
    readonly_fields = ("replies_display",)

    def get_queryset(self, request):
        # AI suggestions are accepted or dismissed on their own page, never edited as plain comments.
        return super().get_queryset(request).accepted().select_related("written_by").prefetch_related("replies__author")

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.user = request.user
        return formset

    def has_add_permission(self, request, obj=None):
        allowed = super().has_add_permission(request, obj)
        return allowed and obj is not None and supervises(request.user, obj.session.trainee_id)

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
        # In PORTAL_TIME_ZONE like every page, never UTC.
        ((r.author.username, timezone.localtime(r.created_at).strftime("%Y-%m-%d %H:%M"), r.text) for r in replies),
    )


@admin.register(Session)
class SessionAdmin(SpreadsheetImportMixin, RoleScopedAdmin):
    list_display = ("code", "title", "trainee", "held_on", "turn_count", "critique_count", "source")
    list_filter = ("held_on", trainee_list_filter("trainee"), SuggestedOnlyFilter)
    search_fields = ("code", "title", "trainee__username", "turns__text")
    list_select_related = ("trainee",)
    ordering = ("-held_on", "code")  # a stable order for the paginated change list
    readonly_fields = ("taxonomy_version", "created_by", "created_at", "updated_at")
    # The transcript below is what a supervisor opens the page for: the record's bookkeeping folds away.
    fieldsets = (
        (None, {"fields": ("code", "trainee", "held_on", "title", "source")}),
        (_("등록 정보"), {"fields": readonly_fields, "classes": ("collapse",)}),
    )
    date_hierarchy = "held_on"
    change_form_template = "admin/supervision/session/change_form.html"

    def get_queryset(self, request):
        return selectors.with_session_counts(super().get_queryset(request))

    def has_add_permission(self, request):
        # Sessions arrive through the importer, which checks every row and brings the turns with them; one typed
        # in here stayed empty, with no way to add turns. The change list's 스프레드시트 가져오기 is the way in.
        return False

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "trainee":
            # The importer's rule: a session belongs to a user with the trainee role (the raw id box took any user).
            kwargs["queryset"] = visible_trainees(request.user).order_by("username")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description=_("발화 수"), ordering="turn_count")
    def turn_count(self, obj):
        return obj.turn_count

    @admin.display(description=_("논평(critique) 수"), ordering="critique_count")
    def critique_count(self, obj):
        return obj.critique_count

    def get_urls(self):
        extra = [
            path(
                "<int:object_id>/turns/<int:turn_id>/comment/",
                self.admin_site.admin_view(self.comment_add_view),
                name="supervision_session_comment",
            ),
            path(
                "<int:object_id>/comments/<int:comment_id>/answer/",
                self.admin_site.admin_view(self.reply_answer_view),
                name="supervision_session_answer",
            ),
            path(
                "<int:object_id>/suggestions/<int:comment_id>/<str:decision>/",
                self.admin_site.admin_view(self.suggestion_review_view),
                name="supervision_session_suggestion",
            ),
        ]
        return extra + suggestion_urls(self) + super().get_urls()

    def suggestion_review_view(self, request, object_id, comment_id, decision):
        """수락 / 기각 of an AI suggestion from its card on the transcript, through the suggestion services."""
        from supervision.gauge.suggestions import SESSION_WIDE_KEY_PREFIX, suggestion_accept, suggestion_dismiss

        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        review = {"accept": suggestion_accept, "dismiss": suggestion_dismiss}.get(decision)
        session = self.get_object(request, str(object_id))
        if review is None or session is None:
            raise Http404
        comment = (
            SupervisorComment.objects.filter(turn__session=session, pk=comment_id, is_suggestion=True)
            .select_related("turn__session")
            .first()
        )
        url = reverse("admin:supervision_session_change", args=[session.pk])
        back = request.POST.get("next", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            back = ""
        if comment is None:
            messages.warning(request, _("이미 처리된 제안입니다."))
            return HttpResponseRedirect(back or url)
        try:
            review(comment=comment, user=request.user)
        except ServiceError as refused:
            raise PermissionDenied(str(refused)) from refused
        done = (
            _("AI 제안을 수락했습니다. 이제 내 논평입니다.") if decision == "accept" else _("AI 제안을 기각했습니다.")
        )
        messages.success(request, done)
        if back:  # from the suggestion's own page: back to the suggestion list
            return HttpResponseRedirect(back)
        # Back where the card was: the session-wide box at the top, or the turn it is about.
        wide = (comment.suggestion_key or "").startswith(SESSION_WIDE_KEY_PREFIX)
        anchor = "session-suggestions-title" if wide else None
        return HttpResponseRedirect(
            transcript_url(session.pk, request.POST.get("_transcript"), comment.turn.seq, anchor=anchor)
        )

    def reply_answer_view(self, request, object_id, comment_id):
        """The supervisor answers a trainee's reply from the transcript, through the comment service."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        session = self.get_object(request, str(object_id))
        if session is None:
            raise Http404
        comment = (
            SupervisorComment.objects.filter(turn__session=session, pk=comment_id, is_suggestion=False)
            .select_related("turn__session")
            .first()
        )
        if comment is None:
            raise Http404
        # The outcome is also shown in the comment's card, where the page lands (the top is far above it).
        here = f"comment-{comment.pk}"
        try:
            comment_reply_answer(comment=comment, user=request.user, text=request.POST.get("text", ""))
        except CommentForbidden as refused:
            raise PermissionDenied(str(refused)) from refused
        except CommentRejected as rejected:
            drafts.keep(request, "answer", comment.pk, request.POST.get("text", ""))
            for problems in rejected.problems.values():
                for problem in problems:
                    messages.error(request, problem, extra_tags=here)
        else:
            drafts.discard(request, "answer")
            done = _("%(turn)s의 답글에 답했습니다.") % {"turn": comment.turn.utterance_id}
            messages.success(request, done, extra_tags=here)
        return HttpResponseRedirect(transcript_url(session.pk, request.POST.get("_transcript"), anchor=here))

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
        # reader: the session's trainee, so each comment carries whether (and when) the trainee read it.
        turns = list(
            feedback_selectors.transcript_turns(session, reader=session.trainee_id, include_suggestions=True, **filters)
        )
        session_suggestions = feedback_selectors.pop_session_wide_suggestions(turns)
        can_comment = supervises(request.user, session.trainee_id)
        label_suggestions = decorate_transcript(turns, can_decide=can_comment)
        all_stages = list(session.turns.order_by("seq").values_list("stage_id", flat=True))
        audits = feedback_selectors.audits_for(session)
        return {
            "transcript": turns,
            "session_suggestions": session_suggestions,
            "transcript_filters": filters,
            "transcript_filtered": any(filters.values()),
            "stage_codes": all_stages,
            "stage_choices": StageDef.objects.order_by("position").values_list("code", "ko"),
            "speaker_choices": Speaker.choices,
            "technique_choices": [(t.code, t.ko) for t in catalogue.TECHNIQUES],
            "client_state_choices": [(s.code, s.ko) for s in catalogue.CLIENT_STATES],
            "kind_choices": CommentKind.choices,
            "severity_choices": Severity.choices,
            "can_comment": can_comment,
            **label_suggestions,
            "audits": audits,
            "audit_labels": feedback_selectors.audit_labels(session) if audits else None,
            "audit_min_probability": AUDIT_MIN_PROBABILITY,
            "safety_marks": feedback_selectors.safety_marks_for(request.user, session),
            "answer_draft": drafts.take(request, "answer"),
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
                messages.success(
                    request,
                    _("%(turn)s에 논평을 남겼습니다.") % {"turn": turn.utterance_id},
                    extra_tags=f"turn-{turn.pk}",  # also shown beside the turn (the page opens there)
                )
                return HttpResponseRedirect(transcript_url(session.pk, request.POST.get("_transcript"), turn.seq))
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


class NonverbalField(forms.CharField):
    """Nonverbal cues as lines of text, one cue a line, stored as the list the golden format keeps."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 40})

    def prepare_value(self, value):
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value):
        return [line.strip() for line in super().to_python(value).splitlines() if line.strip()]


class TurnForm(forms.ModelForm):
    """A turn's stage, words, cues and act under the importer's rules (``services.turn_update``)."""

    nonverbal = NonverbalField(
        label=_("비언어 단서"), required=False, help_text=_("한 줄에 하나씩 적습니다. 예: (침묵), [한숨]")
    )

    class Meta:
        model = Turn
        fields = ("stage", "text", "nonverbal", "dialog_act")

    def clean(self):
        data = super().clean()
        if {"text", "nonverbal"} <= data.keys():
            problems = turn_edit_problems(
                text=data["text"], nonverbal=data["nonverbal"], dialog_act=data.get("dialog_act") or None
            )
            for field, messages in problems.items():
                for message in messages:
                    self.add_error(field, message)
        return data


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
    form = TurnForm

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

    def response_change(self, request, obj):
        # Labels are edited from the transcript: go back there, at this turn, unless the user asked to stay.
        if "_continue" in request.POST or "_saveasnew" in request.POST or "_addanother" in request.POST:
            return super().response_change(request, obj)
        # The message also beside the turn (the page opens there, out of sight of the top), and the transcript's
        # filter (?label=… kept on the "라벨 편집" link) as it was.
        messages.success(
            request, _("%(turn)s 발화를 저장했습니다.") % {"turn": obj.utterance_id}, extra_tags=f"turn-{obj.pk}"
        )
        return HttpResponseRedirect(transcript_url(obj.session_id, request.GET.get("_transcript"), obj.seq))

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        # Stage and dialog act are golden labels: they change through the label service (with history).
        labels = {name: data[name] for name in ("stage", "dialog_act") if name in form.changed_data}
        if labels:
            try:
                turn_labels_update(
                    turn=obj,
                    changed_by=request.user,
                    via="admin",
                    **{name: (value.code if name == "stage" else value or None) for name, value in labels.items()},
                )
            except LabelRejected as rejected:  # the form offers valid choices only; a race gets here
                raise PermissionDenied(" ".join(m for ms in rejected.problems.values() for m in ms)) from rejected
        try:
            warnings = turn_update(
                turn=obj,
                stage=data["stage"],
                text=data["text"],
                nonverbal=data["nonverbal"],
                dialog_act=data.get("dialog_act") or None,
            )
        except TurnRejected as rejected:  # the form ran the same rules; only a race gets here
            raise PermissionDenied(" ".join(m for ms in rejected.problems.values() for m in ms)) from rejected
        for warning in warnings:
            self.message_user(request, warning, messages.WARNING)

    def save_formset(self, request, form, formset, change):
        if isinstance(formset, AttachRuleFormSet):
            # The label inlines: the resulting set goes through the label service (attach rule, history).
            codes = [
                code for f in formset.forms if not f.cleaned_data.get("DELETE") and (code := formset._label_code(f))
            ]
            turn_labels_update(turn=form.instance, changed_by=request.user, via="admin", **{formset.axis: codes})
            # The admin's change message reads what a formset saved; the label history says it instead.
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
            return
        if formset.model is not SupervisorComment:
            super().save_formset(request, form, formset, change)
            return
        # Comments go through the comment service: its rules, its author rule, its history row.
        turn = form.instance
        # The admin's change message reads these three lists, as after formset.save().
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for comment_form in formset.forms:
            comment = comment_form.instance
            try:
                if comment_form in formset.deleted_forms:
                    if comment.pk:
                        supervisor_comment_delete(comment=comment, deleted_by=request.user)
                        formset.deleted_objects.append(comment)
                elif comment.pk and comment_form.has_changed():
                    data = comment_form.cleaned_data
                    supervisor_comment_update(
                        comment=comment,
                        changed_by=request.user,
                        kind=data["kind"],
                        text=data["text"],
                        intent_deviation=comment.intent_deviation,
                    )
                    formset.changed_objects.append((comment, comment_form.changed_data))
                elif not comment.pk and comment_form.has_changed():
                    data = comment_form.cleaned_data
                    created = supervisor_comment_create(
                        turn=turn,
                        kind=data["kind"],
                        text=data["text"],
                        intent_deviation=comment.intent_deviation,
                        written_by=request.user,
                    )
                    formset.new_objects.append(created)
            except (CommentRejected, CommentForbidden) as refused:  # checked in clean(); only a race gets here
                raise PermissionDenied(str(refused)) from refused


def label_chips_html(turn):
    # Colours come from the palette's classes (/palette.css), as on the trainee pages.
    chips = [(presentation.technique_chip_class(t.code), t.ko, t.code) for t in turn.techniques.all()] + [
        (presentation.client_state_chip_class(c.code), c.ko, c.code) for c in turn.client_states.all()
    ]
    return format_html_join(
        " ", '<span class="{}">{} <small class="code">{}</small></span>', ((css, ko, code) for css, ko, code in chips)
    )


@admin.register(SupervisorComment)
class SupervisorCommentAdmin(CritiqueFieldsMixin, PortalExportMixin, RoleScopedAdmin, SimpleHistoryAdmin):
    trainee_path = "turn__session__trainee"
    # the export is the change list as filtered, so a supervisor exports only their trainees' comments
    resource_classes = (CommentResource,)
    form = CommentForm
    list_display = (
        "turn",
        "kind",
        "short_text",
        "severity_display",
        "expected_display",
        "actual_display",
        "author",
        "written_by",
        "read_by_trainee",
        "reply_count",
        "updated_at",
    )
    # Suggestions are not listed here (their own admin), so no is_suggestion column or filter.
    list_filter = ("kind", "author", trainee_list_filter("turn__session__trainee"))
    search_fields = ("text", "turn__utterance_id")
    list_select_related = ("turn", "written_by")
    autocomplete_fields = ("turn",)
    fields = ("turn", "kind", "text", "dimension", "expected", "actual", "severity", "replies_display")
    readonly_fields = ("replies_display",)

    def get_queryset(self, request):
        # AI suggestions have their own admin (accept / dismiss); here only comments people wrote.
        return (
            super()
            .get_queryset(request)
            .accepted()
            .annotate(
                reply_total=Count("replies"),
                trainee_read_at=Subquery(
                    CommentRead.objects.filter(comment=OuterRef("pk"), user=OuterRef("turn__session__trainee"))
                    .order_by()
                    .values("read_at")[:1]
                ),
            )
            .prefetch_related("replies__author")
        )

    def changelist_view(self, request, extra_context=None):
        # The comment text needs the width; the navigation sidebar would squeeze it to a letter a line.
        return super().changelist_view(request, {"is_nav_sidebar_enabled": False, **(extra_context or {})})

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or comment_change_problem(user=request.user, comment=obj) is None)

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or comment_change_problem(user=request.user, comment=obj) is None)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "turn":
            kwargs["queryset"] = Turn.objects.filter(trainee_filter(request.user, "session__trainee"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description=_("내용"))
    def short_text(self, obj):
        return obj.text[:60]

    @admin.display(description=_("심각도"))
    def severity_display(self, obj):
        return presentation.SEVERITY_KO.get(obj.severity or "", "—")

    @admin.display(description=_("수련생 읽음"), ordering="trainee_read_at")
    def read_by_trainee(self, obj):
        read_at = getattr(obj, "trainee_read_at", None)
        return timezone.localtime(read_at).strftime("%Y-%m-%d %H:%M") if read_at else _("안 읽음")

    @admin.display(description=_("답글"), ordering="reply_total")
    def reply_count(self, obj):
        return obj.reply_total

    @admin.display(description=_("수련생 답글"))
    def replies_display(self, obj):
        return replies_html(obj)

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["fields"] = ("turn", "kind", "text")
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request, obj, form, change):
        # Through the comment service (rules, author rule, history); the admin then reads ``obj``'s pk.
        data = form.cleaned_data
        try:
            if change:
                supervisor_comment_update(
                    comment=obj,
                    changed_by=request.user,
                    kind=data["kind"],
                    text=data["text"],
                    intent_deviation=obj.intent_deviation,
                )
            else:
                if not supervises(request.user, data["turn"].session.trainee_id):
                    raise CommentForbidden("이 수련생의 슈퍼바이저만 논평을 쓸 수 있습니다.")
                created = supervisor_comment_create(
                    turn=data["turn"],
                    kind=data["kind"],
                    text=data["text"],
                    intent_deviation=obj.intent_deviation,
                    written_by=request.user,
                )
                obj.pk, obj.written_by, obj.author = created.pk, created.written_by, created.author
                obj._state.adding = False
        except (CommentRejected, CommentForbidden) as refused:
            raise PermissionDenied(str(refused)) from refused

    def delete_model(self, request, obj):
        try:
            supervisor_comment_delete(comment=obj, deleted_by=request.user)
        except CommentForbidden as refused:
            raise PermissionDenied(str(refused)) from refused
        request.deleted_comment_place = (obj.turn.session_id, obj.turn.seq)  # for response_delete

    @transaction.atomic
    def delete_queryset(self, request, queryset):
        for comment in queryset.select_related("turn__session"):
            self.delete_model(request, comment)

    # A comment opened from the transcript (「열기」, ?_from_transcript=1) goes back there, at its turn, once saved;
    # a deleted one always does (its own page is gone). The comment list was where both ended before.
    def response_change(self, request, obj):
        if request.GET.get("_from_transcript") and not {"_continue", "_addanother", "_saveasnew"} & set(request.POST):
            messages.success(request, _("논평을 저장했습니다."), extra_tags=f"turn-{obj.turn_id}")
            return HttpResponseRedirect(
                transcript_url(obj.turn.session_id, request.GET.get("_transcript"), obj.turn.seq)
            )
        return super().response_change(request, obj)

    def response_delete(self, request, obj_display, obj_id):
        place = getattr(request, "deleted_comment_place", None)
        if place is None:
            return super().response_delete(request, obj_display, obj_id)
        messages.success(request, _("논평을 지웠습니다."))
        return HttpResponseRedirect(transcript_url(place[0], None, place[1]))

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


class AssignmentForm(forms.ModelForm):
    reason = forms.CharField(
        label=_("변경 사유"), max_length=100, required=False, help_text=_("기록에 남습니다(예: 슈퍼바이저 휴직).")
    )

    class Meta:
        model = TraineeAssignment
        fields = ("trainee", "supervisor")


@admin.register(TraineeAssignment)
class TraineeAssignmentAdmin(PortalImportMixin, RoleScopedAdmin, SimpleHistoryAdmin):
    """Assignments. Moving a trainee to another supervisor is an explicit change here (staff), written by
    ``trainee_reassign`` and kept in the history; the roster import (명단 가져오기) only creates new people."""

    resource_classes = (RosterResource,)
    form = AssignmentForm
    list_display = ("trainee", "supervisor", "assigned_at")
    list_select_related = ("trainee", "supervisor")
    search_fields = ("trainee__username", "supervisor__username")

    def has_import_permission(self, request):
        # creating users is the staff role's (and superusers'), whatever the assignment permissions say
        return sees_everything(request.user) and request.user.is_staff

    def has_add_permission(self, request):
        return sees_everything(request.user) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return sees_everything(request.user) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False  # a trainee always has a supervisor once assigned; move them instead

    def get_readonly_fields(self, request, obj=None):
        return ("trainee",) if obj is not None else ()

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        people = get_user_model().objects.order_by("username")
        if db_field.name == "supervisor":
            kwargs["queryset"] = people.filter(groups__name=Role.SUPERVISOR)
        elif db_field.name == "trainee":
            kwargs["queryset"] = people.filter(groups__name=Role.TRAINEE, assignment__isnull=True)
            # Only trainees without a supervisor are offered: when there are none, the empty list says why.
            kwargs["help_text"] = _(
                "아직 슈퍼바이저가 없는 수련생만 고를 수 있습니다. 목록이 비어 있으면 모든 수련생이 이미 배정된 것입니다. "
                "새 수련생은 「가져오기」(명단 파일)나 create_portal_user 명령으로 만듭니다."
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        try:
            trainee_reassign(
                trainee=obj.trainee,
                supervisor=obj.supervisor,
                by=request.user,
                reason=form.cleaned_data.get("reason") or ("관리 화면에서 변경" if change else "관리 화면에서 배정"),
            )
        except PersonRefused as exc:
            raise PermissionDenied(str(exc)) from None

    def history_view(self, request, object_id, extra_context=None):
        if not self.get_queryset(request).filter(pk=object_id).exists():
            raise Http404
        return super().history_view(request, object_id, extra_context)

    object_history_list_template = "admin/supervision/traineeassignment/object_history_list.html"

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        raise Http404  # the history table says it all; a past assignment is never restored

    def get_fields(self, request, obj=None):
        # the reason belongs to a change; a supervisor only views the assignment
        fields = super().get_fields(request, obj)
        return fields if self.has_change_permission(request, obj) else [f for f in fields if f != "reason"]


# The label history in Korean (the stored axis and route stay codes).
LABEL_AXIS_KO = {"techniques": "기법", "client_states": "내담자 상태", "stage": "단계", "dialog_act": "대화행위"}
LABEL_ROUTE_KO = {
    "admin": "관리 화면에서 수정",
    "adjudication": "판정 대기열에서 결정",
    "suggestion": "AI 추정 라벨 수락",  # supervision/suggesting/services.py
}


def label_values_html(axis: str, value):
    """A history value as chips' words: each label's Korean name with its code beside it."""
    if value in (None, "", []):
        return "—"
    values = value if isinstance(value, list) else [value]
    names = []
    for code in values:
        if axis == "techniques":
            ko = presentation.TECHNIQUE_KO.get(code, code)
        elif axis == "client_states":
            ko = presentation.CLIENT_STATE_KO.get(code, code)
        elif axis == "stage":
            ko = presentation.STAGE_KO.get(code, code)
        else:
            ko = next((act.ko for act in catalogue.DIALOG_ACTS if act.code == code), code)
        names.append((ko, code))
    return format_html_join(", ", '{} <small class="code">{}</small>', names)


class LabelAxisFilter(admin.SimpleListFilter):
    title = _("축")
    parameter_name = "axis"

    def lookups(self, request, model_admin):
        return list(LABEL_AXIS_KO.items())

    def queryset(self, request, queryset):
        return queryset.filter(axis=self.value()) if self.value() in LABEL_AXIS_KO else queryset


class LabelRouteFilter(admin.SimpleListFilter):
    title = _("경로")
    parameter_name = "via"

    def lookups(self, request, model_admin):
        return list(LABEL_ROUTE_KO.items())

    def queryset(self, request, queryset):
        return queryset.filter(via=self.value()) if self.value() in LABEL_ROUTE_KO else queryset


@admin.register(LabelChange)
class LabelChangeAdmin(WrittenElsewhereMixin, RoleScopedAdmin):
    """The golden labels' history (written by ``supervision.labelling``); read-only."""

    trainee_path = "turn__session__trainee"
    list_display = (
        "turn",
        "axis_display",
        "before_display",
        "after_display",
        "changed_by",
        "via_display",
        "changed_at",
        "note",
    )
    list_filter = (LabelAxisFilter, LabelRouteFilter, trainee_list_filter("turn__session__trainee"))
    search_fields = ("turn__utterance_id", "note")
    list_select_related = ("turn", "changed_by")
    readonly_fields = list_display

    @admin.display(description=_("축"), ordering="axis")
    def axis_display(self, obj):
        return LABEL_AXIS_KO.get(obj.axis, obj.axis)

    @admin.display(description=_("이전"))
    def before_display(self, obj):
        return label_values_html(obj.axis, obj.before)

    @admin.display(description=_("이후"))
    def after_display(self, obj):
        return label_values_html(obj.axis, obj.after)

    @admin.display(description=_("경로"), ordering="via")
    def via_display(self, obj):
        return LABEL_ROUTE_KO.get(obj.via, obj.via)
