"""The trainee's tag pages: perspectives (read) and the declare form (write through the service).

The trainee dashboard includes ``tags/_perspectives.html`` and ``tags/_declare_form.html`` with the
context of ``tags_feedback_context``.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from supervision.roles import is_trainee
from supervision.tags.forms import DeclareForm
from supervision.tags.models import Origin, Source
from supervision.tags.selectors import tags_perspectives
from supervision.tags.services import TagInputError, tag_evidence_add


def tags_feedback_context(*, viewer, trainee_id: int) -> dict:
    """What the two partials need. Observations are filtered by the selector for a trainee viewer."""
    context = {"tag_perspectives": tags_perspectives(viewer=viewer, trainee_id=trainee_id)}
    if viewer.pk == trainee_id:
        context["tag_declare_form"] = DeclareForm(trainee=viewer)
    return context


def _trainee_only(request) -> None:
    if not is_trainee(request.user):
        raise PermissionDenied


@login_required
@require_GET
def tags_page(request):
    _trainee_only(request)
    return render(request, "tags/page.html", tags_feedback_context(viewer=request.user, trainee_id=request.user.pk))


@login_required
@require_POST
def tag_declare(request):
    _trainee_only(request)
    form = DeclareForm(request.POST, trainee=request.user)
    if form.is_valid():
        session = form.cleaned_data["session"]
        try:
            done = tag_evidence_add(
                trainee_id=request.user.pk,
                tag=form.cleaned_data["tag"],
                source=Source.DECLARED,
                event=form.cleaned_data["event"],
                session_id=session.pk if session else None,
                origin=Origin.TRAINEE,
                recorded_by=request.user,
            )
        except TagInputError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(
                request,
                "기록했습니다. 「두 관점」의 「내가 밝힌 초점」에 관찰로 보입니다. 서로 다른 두 회기에서 확인되면 가설이 됩니다."
                if done.created
                else "이미 같은 내용이 기록되어 있습니다.",
            )
    if form.errors:
        for name, errors in form.errors.items():
            label = form.fields[name].label if name in form.fields else "입력"
            for error in errors:
                messages.error(request, f"{label}: {error}")  # the field's Korean name only: a trainee's page
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("tags-page")
    return redirect(target)
