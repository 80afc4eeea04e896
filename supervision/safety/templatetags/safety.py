"""Template helpers of the safety events: the admin index link and the transcript marks."""

from __future__ import annotations

from django import template

from supervision.presentation import CLIENT_STATE_KO, TECHNIQUE_KO
from supervision.safety import selectors

register = template.Library()


@register.inclusion_tag("admin/safety/index_link.html", takes_context=True)
def safety_review_link(context):
    """The "안전 검토" entry at the top of the admin index, with how many events wait: as many as the page's
    default view lists, the label suggester's among them (a count query and the suggested events' few)."""
    request = context["request"]
    if not request.user.has_perm("safety.view_safetyreview"):
        return {"shown": False}
    pending, suggested = selectors.pending_counts(request.user)
    return {"shown": True, "pending": pending, "suggested": suggested}


@register.filter
def marks_for(marks: dict, turn_id: int):
    """``safety_marks|marks_for:turn.pk`` → the turn's ``TurnMarks`` (or None)."""
    return (marks or {}).get(turn_id)


@register.filter
def state_ko(code: str) -> str:
    return CLIENT_STATE_KO.get(code, code)


@register.filter
def technique_name(code: str) -> str:
    return TECHNIQUE_KO.get(code, code)


@register.simple_tag
def safety_window() -> int:
    """``SAFETY_RESPONSE_TURNS``: how many following counselor turns may answer a disclosure."""
    return selectors.response_window()
