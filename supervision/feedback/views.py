"""The trainee's pages: thin views over ``selectors`` (reads) and ``services`` (writes)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from supervision.feedback import charts, selectors, services
from supervision.roles import is_trainee
from supervision.services import ServiceError

# Provided by the tendency-tags capability (supervision/tags/); shown once it is merged.


@require_GET
@login_required
def dashboard(request):
    trainee = request.user if is_trainee(request.user) else None
    gauge = selectors.latest_gauge_for(trainee) if trainee else None
    context = {
        "user_is_trainee": trainee is not None,
        "sessions": list(selectors.feedback_sessions(request.user)),
        "gauge": gauge,
        "gauge_rows": charts.category_rows(gauge) if gauge else [],
        "trend": selectors.gauge_trend_for(trainee) if trainee else [],
        "show_tags": trainee is not None,
        **(selectors.tags_for(request.user, trainee) if trainee else {}),
    }
    return render(request, "feedback/dashboard.html", context)


@require_GET
@login_required
def session_detail(request, session_id: int):
    session = selectors.feedback_session(request.user, session_id)
    turns = list(selectors.transcript_turns(session, reader=request.user))
    context = {
        "session": session,
        "turns": turns,
        "stages": [turn.stage_id for turn in turns],
        "audits": selectors.audits_for(session),
        "safety_marks": selectors.safety_marks_for(request.user, session),
        "is_owner": session.trainee_id == request.user.pk,
        # One reverse() for the page rather than two per critique: "/feedback/comments/<id>/read/" etc.
        "comments_url": reverse("feedback:comment-read", args=[0]).removesuffix("0/read/"),
    }
    return render(request, "feedback/session.html", context)


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
def comment_reply(request, comment_id: int):
    comment = selectors.feedback_comment(request.user, comment_id)
    try:
        services.comment_reply_create(comment=comment, author=request.user, text=request.POST.get("text", ""))
    except ServiceError as error:
        messages.error(request, f"답글: {error}")
    else:
        messages.success(request, "답글을 남겼습니다.")
    return redirect(_back_to(comment))
