"""The suggester in the admin: each turn's suggestions on the session's transcript (accept / dismiss /
「모두 수락」, through ``services``), the session list filter 「라벨 없음 — AI 추정만」, and the dismissals."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _

from supervision.models import Turn
from supervision.roles import trainee_filter
from taxonomy import catalogue

from . import selectors
from .models import SuggestionDismissal
from .services import SuggestionForbidden, SuggestionRejected, suggestion_accept, suggestion_dismiss

# The transcript's filters, carried through a decision so the page comes back as it was.
KEPT_FILTERS = ("stage", "speaker", "label", "q")
_KO = {**{t.code: t.ko for t in catalogue.TECHNIQUES}, **{s.code: s.ko for s in catalogue.CLIENT_STATES}}


class SuggestedOnlyFilter(admin.SimpleListFilter):
    title = _("AI 라벨 제안")
    parameter_name = "suggested_only"

    def lookups(self, request, model_admin):
        return [("1", _("라벨 없음 — AI 추정만"))]

    def queryset(self, request, queryset):
        if self.value() == "1":
            return selectors.suggested_only_sessions(queryset)
        return queryset


def decorate_transcript(turns: list[Turn], *, can_decide: bool) -> dict:
    """Puts each turn's open suggestion on it (``turn.label_suggestion``: chips with Korean names and
    probabilities) for the transcript template; returns what the template needs besides."""
    found = selectors.open_suggestions([t.pk for t in turns])
    run = next(iter(found.values())).run if found else None
    for turn in turns:
        suggestion = found.get(turn.pk)
        turn.label_suggestion = (
            {
                "chips": [
                    {
                        "code": code,
                        "ko": _KO.get(code, code),
                        "p": suggestion.scores.get(code),
                        "critical": code in catalogue.SAFETY_CRITICAL_STATES,
                    }
                    for code in suggestion.labels
                ],
                "dismissed": [{"code": code, "ko": _KO.get(code, code)} for code in suggestion.dismissed],
            }
            if suggestion is not None
            else None
        )
    return {"suggestion_run": run, "can_decide_suggestions": can_decide}


def suggestion_urls(model_admin) -> list:
    return [
        path(
            "<int:object_id>/turns/<int:turn_id>/label-suggestions/<str:decision>/",
            model_admin.admin_site.admin_view(lambda request, **kw: label_suggestion_view(model_admin, request, **kw)),
            name="supervision_session_label_suggestion",
        )
    ]


def label_suggestion_view(model_admin, request, object_id, turn_id, decision):
    """수락 / 기각 / 모두 수락 of a turn's suggested labels; back to the same place of the transcript."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    session = model_admin.get_object(request, str(object_id))  # role-scoped: another's session is a 404
    if session is None or decision not in ("accept", "dismiss", "accept_all"):
        raise Http404
    turn = Turn.objects.filter(session=session, pk=turn_id).select_related("session").first()
    if turn is None:
        raise Http404
    label = request.POST.get("code", "")
    try:
        if decision == "dismiss":
            suggestion_dismiss(turn=turn, label=label, dismissed_by=request.user)
            done = _("AI 제안 %(label)s을(를) 기각했습니다.") % {"label": _KO.get(label, label)}
        else:
            labels = None if decision == "accept_all" else [label]
            suggestion_accept(turn=turn, accepted_by=request.user, labels=labels)
            done = _("AI 제안을 수락해 골든 라벨로 저장했습니다.")
    except SuggestionForbidden as refused:
        raise PermissionDenied(str(refused)) from refused
    except SuggestionRejected as refused:  # decided already (another tab), or no longer suggested
        messages.warning(request, str(refused))
    else:
        messages.success(request, done, extra_tags=f"turn-{turn.pk}")
    kept = {name: request.POST.get(name) for name in KEPT_FILTERS if request.POST.get(name)}
    url = reverse("admin:supervision_session_change", args=[session.pk])
    return HttpResponseRedirect(f"{url}{'?' + urlencode(kept) if kept else ''}#turn-{turn.seq}")


@admin.register(SuggestionDismissal)
class SuggestionDismissalAdmin(admin.ModelAdmin):
    list_display = ("turn", "label", "run", "dismissed_by", "dismissed_at")
    list_select_related = ("turn", "run", "dismissed_by")
    raw_id_fields = ("turn", "run")
    readonly_fields = ("run", "turn", "label", "dismissed_by", "dismissed_at")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(trainee_filter(request.user, "turn__session__trainee"))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
