"""The supervisor's "안전 검토" page: safety events of their trainees, the turns that followed, a review form.

It is the change list of ``SafetyReview`` so that it sits in the admin with the model's permissions
(supervisors review, staff read), but it lists *events*, which are derived from the turns when read
(``selectors.safety_events``); a review is written only through ``services.safety_event_review``.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _

from supervision import drafts
from supervision.admin import WrittenElsewhereMixin
from supervision.roles import supervises
from supervision.safety import selectors
from supervision.safety.models import SafetyReview
from supervision.safety.services import ReviewForbidden, ReviewRejected, safety_event_review

PAGE_SIZE = 25

# ?show=… → (answered, reviewed) filters of the selector, and the tab's title
VIEWS = {
    "pending": ((False, False), _("검토 대기 (응답 없음)")),
    "reviewed": ((None, True), _("검토 완료")),
    "all": ((None, None), _("모든 안전 사건")),
}


@admin.register(SafetyReview)
class SafetyReviewAdmin(WrittenElsewhereMixin, admin.ModelAdmin):
    """Reviews are written by the review form only (through the service), never edited or deleted here."""

    def get_urls(self):
        return [
            path(
                "<int:event_id>/review/",
                self.admin_site.admin_view(self.review_view),
                name="safety_safetyreview_review",
            ),
            *super().get_urls(),
        ]

    def get_queryset(self, request):
        return selectors.reviews_visible(request.user)

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_permission(request):
            raise Http404
        show = request.GET.get("show", "pending")
        if show not in VIEWS:
            show = "pending"
        (answered, reviewed), _title = VIEWS[show]
        events = selectors.queue_events(request.user, answered=answered, reviewed=reviewed)
        page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
        queue = selectors.review_queue(request.user, list(page.object_list))
        context = {
            **self.admin_site.each_context(request),
            "title": _("안전 검토"),
            "opts": self.model._meta,
            "queue": queue,
            "page": page,
            "show": show,
            "views": [(key, title) for key, (_filters, title) in VIEWS.items()],
            "window": selectors.response_window(),
            "review_aid": selectors.risk_windows(request.user) if show == "pending" else [],
            "review_draft": drafts.take(request, "review"),
            **(extra_context or {}),
        }
        return render(request, "admin/safety/queue.html", context)

    def review_view(self, request, event_id):
        if request.method != "POST":
            return HttpResponseRedirect(reverse("admin:safety_safetyreview_changelist"))
        event = selectors.safety_event(request.user, event_id)
        if event is None or not self.has_view_permission(request):
            raise Http404
        back = request.POST.get("next") or reverse("admin:safety_safetyreview_changelist")
        if not back.startswith("/admin/"):
            back = reverse("admin:safety_safetyreview_changelist")
        if not supervises(request.user, event.turn.session.trainee_id):
            messages.error(request, _("안전 사건을 검토할 수 있는 사람은 이 수련생의 담당 슈퍼바이저뿐입니다."))
            return HttpResponseRedirect(back)
        try:
            safety_event_review(event=event, note=request.POST.get("note", ""), reviewed_by=request.user)
        except (ReviewRejected, ReviewForbidden) as error:
            drafts.keep(request, "review", event.pk, request.POST.get("note", ""))
            messages.error(
                request, _("%(turn)s 검토를 저장하지 못했습니다: %(why)s") % {"turn": event.utterance_id, "why": error}
            )
        else:
            drafts.discard(request, "review")
            messages.success(request, _("%(turn)s 안전 사건을 검토했습니다.") % {"turn": event.utterance_id})
        return HttpResponseRedirect(back)
