"""What the portal's pages call the feedback pages: "내 피드백" for a trainee, whose own they are, and
"수련생 피드백" for a supervisor or staff member, who reads their trainees' there."""

from django.utils.functional import SimpleLazyObject

from supervision.roles import is_trainee


def feedback_heading(request):
    # Lazy: the admin renders with this context too and never shows it, so it costs no role query there.
    return {"feedback_heading": SimpleLazyObject(lambda: "내 피드백" if is_trainee(request.user) else "수련생 피드백")}
