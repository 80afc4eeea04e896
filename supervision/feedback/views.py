"""The trainee's pages: thin views over ``selectors`` (reads) and ``services`` (writes)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.messages import get_messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from supervision import drafts, pagecache
from supervision.feedback import charts, selectors, services
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.roles import is_trainee
from supervision.services import ServiceError


@require_GET
@login_required
def dashboard(request):
    if pagecache.kept_for(request.user):
        # A trainee's own dashboard is kept rendered until one of the writes it shows (supervision/pagecache.py).
        return pagecache.render_page(request, "feedback/dashboard.html", lambda: _dashboard_context(request))
    return render(request, "feedback/dashboard.html", _dashboard_context(request))


def _dashboard_context(request) -> dict:
    trainee = request.user if is_trainee(request.user) else None
    own_snapshot = selectors.latest_gauge_for(trainee) if trainee else None
    gauge = GaugeSnapshotSerializer(own_snapshot).data if own_snapshot else None
    sessions = list(selectors.feedback_sessions(request.user))
    trainee_gauges = []
    if trainee is None:
        snapshots = selectors.latest_gauges_for_viewer(request.user)
        scopes = selectors.gauge_scopes_for(snapshots)
        for snapshot in snapshots:
            data = GaugeSnapshotSerializer(snapshot).data
            trainee_gauges.append(
                {
                    "trainee": snapshot.trainee,
                    "gauge": data,
                    "gauge_rows": charts.category_rows(data),
                    "scope": scopes[snapshot.trainee_id],
                }
            )
    return {
        "user_is_trainee": trainee is not None,
        "sessions": sessions,
        "unread_total": sum(s.unread_count for s in sessions) if trainee else 0,
        "trainee_gauges": trainee_gauges,
        "gauge": gauge,
        "gauge_scope": selectors.gauge_scopes_for([own_snapshot])[trainee.pk] if own_snapshot else None,
        "gauge_rows": charts.category_rows(gauge) if gauge else [],
        "trend": selectors.gauge_trend_for(trainee) if trainee else [],
        "show_tags": trainee is not None,
        **(selectors.tags_for(request.user, trainee) if trainee else {}),
    }


@require_GET
@login_required
def session_detail(request, session_id: int):
    if pagecache.kept_for(request.user):
        # A trainee's own session page is kept rendered until one of the writes it shows (supervision/pagecache.py).
        # Only a session the trainee may see is built and kept (else 404); a kept one is served without asking
        # again, as a session changing hands or going away changes every kept page (pagecache.session_saved).
        return pagecache.render_page(request, "feedback/session.html", lambda: _page_context(request, session_id))
    return render(request, "feedback/session.html", _page_context(request, session_id))


def _page_context(request, session_id: int) -> dict:
    return {**_session_context(request, session_id), "reply_draft": _refused_reply(request)}


def _refused_reply(request) -> dict | None:
    """The reply just refused, back in its box. Only beside the message that refused it: a page without
    messages is kept rendered for later visits (pagecache) and must never hold a draft."""
    return drafts.take(request, "reply") if len(get_messages(request)) else None


def _session_context(request, session_id: int) -> dict:
    session = selectors.feedback_session(request.user, session_id)
    turns = list(selectors.transcript_turns(session, reader=request.user))
    audits = selectors.audits_for(session)
    return {
        "session": session,
        "turns": turns,
        "stages": [turn.stage_id for turn in turns],
        "audits": audits,
        "audit_pending": selectors.audit_pending(session),
        "audit_labels": selectors.audit_labels(session) if audits else None,
        "merged_trace": charts.merged_trace(audits),
        "audits_marked": any(audit.get("label") == "harmful" for audit in audits),
        "safety_marks": selectors.safety_marks_for(request.user, session),
        "is_owner": session.trainee_id == request.user.pk,
        "unread_here": sum(
            1 for turn in turns for comment in turn.comment_list if not getattr(comment, "reads_by_reader", True)
        ),
        # One reverse() for the page rather than two per critique: "/feedback/comments/<id>/read/" etc.
        "comments_url": reverse("feedback:comment-read", args=[0]).removesuffix("0/read/"),
    }


def _back_to(comment) -> str:
    return reverse("feedback:session", args=[comment.turn.session_id]) + f"#comment-{comment.pk}"


@require_POST
@login_required
def comment_read(request, comment_id: int):
    comment = selectors.feedback_comment(request.user, comment_id)
    services.comment_mark_read(comment=comment, user=request.user)
    return redirect(_back_to(comment))


@require_POST
@login_required
def comments_read_all(request):
    """모두 읽음: every comment on the trainee's own sessions, or on the one session posted."""
    session = None
    if request.POST.get("session"):
        session = selectors.feedback_session(request.user, _int_or_404(request.POST["session"]))
    n = services.comment_mark_all_read(user=request.user, session=session)
    messages.success(request, f"논평 {n}개를 읽음으로 표시했습니다." if n else "새 논평이 없습니다.")
    return redirect(reverse("feedback:session", args=[session.pk]) if session else reverse("feedback:dashboard"))


def _int_or_404(value: str) -> int:
    if not (value.isascii() and value.isdigit() and len(value) < 10):
        raise Http404
    return int(value)


@require_POST
@login_required
def comment_reply(request, comment_id: int):
    comment = selectors.feedback_comment(request.user, comment_id)
    try:
        services.comment_reply_create(comment=comment, author=request.user, text=request.POST.get("text", ""))
    except ServiceError as error:
        drafts.keep(request, "reply", comment.pk, request.POST.get("text", ""))
        messages.error(request, f"답글: {error}", extra_tags=_at(comment))
    else:
        drafts.discard(request, "reply")
        messages.success(request, "답글을 남겼습니다.", extra_tags=_at(comment))
    return redirect(_back_to(comment))


def _at(comment) -> str:
    """A message's place: shown in the comment's card, beside its reply form, where the page lands (at the top,
    7,000 px above, a refused blank reply looked like a button that did nothing)."""
    return f"comment-{comment.pk}"
