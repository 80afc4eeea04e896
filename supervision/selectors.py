"""Reads for pages and the API: querysets already narrowed to what the user may see, and already joined.

Every function takes the requesting user first; nothing here returns a row of a trainee the user may
not see, and nothing here hands a trainee an unaccepted AI suggestion.
"""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from supervision.models import ACCEPTED, Session, SupervisorComment, Turn, TurnClientState, TurnTechnique
from supervision.roles import trainee_filter


def _visible_comment_filter(user) -> Q:
    """Comments of visible trainees, minus the suggestions on the viewer's own sessions.

    A suggestion is hidden from the trainee it is about until a supervisor accepts it (DESIGN.md).
    """
    return trainee_filter(user, "turn__session__trainee") & ~Q(is_suggestion=True, turn__session__trainee=user.pk)


def count_per_session(queryset: QuerySet, session: str = "turn__session_id") -> Coalesce:
    """The number of rows of ``queryset`` (already narrowed with ``OuterRef("pk")``) in each session.

    Correlated subqueries keep several counts from multiplying each other, as joins would (joined, two
    comment counts ran once per turn)."""
    counted = queryset.order_by().values(session).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def with_session_counts(sessions: QuerySet[Session]) -> QuerySet[Session]:
    """``sessions`` with ``turn_count`` and ``critique_count`` (accepted critiques): the one definition the
    API, the trainee pages and the admin list show."""
    return sessions.annotate(
        turn_count=count_per_session(Turn.objects.filter(session_id=OuterRef("pk")), "session_id"),
        critique_count=count_per_session(
            SupervisorComment.objects.accepted_critiques().filter(turn__session_id=OuterRef("pk"))
        ),
    )


def session_list(user) -> QuerySet[Session]:
    """Sessions of the trainees ``user`` may see, with their turn and (accepted) critique counts."""
    sessions = Session.objects.filter(trainee_filter(user)).select_related("trainee")
    return with_session_counts(sessions).order_by("-held_on", "code")


def _links(model) -> QuerySet:
    # Only the code of each label: the definitions are long texts a transcript does not show.
    return model.objects.select_related("label").only("turn_id", "label__code").order_by("id")


def session_detail(user) -> QuerySet[Session]:
    """``session_list`` with the turns, their label codes and the comments the user may see."""
    turns = Turn.objects.order_by("seq").prefetch_related(
        Prefetch("technique_links", queryset=_links(TurnTechnique)),
        Prefetch("client_state_links", queryset=_links(TurnClientState)),
        Prefetch("comments", queryset=comment_list(user)),
    )
    return session_list(user).prefetch_related(Prefetch("turns", queryset=turns))


def golden_sessions(user) -> QuerySet[Session]:
    """Sessions for the golden export (``supervision.exporting`` joins the rest and drops suggestions)."""
    return Session.objects.filter(trainee_filter(user)).select_related("trainee").order_by("code")


def turns_visible(user) -> QuerySet[Turn]:
    return Turn.objects.filter(trainee_filter(user, "session__trainee")).select_related("session")


def comment_list(user) -> QuerySet[SupervisorComment]:
    return SupervisorComment.objects.filter(_visible_comment_filter(user)).order_by("id")


def comment_detail(user) -> QuerySet[SupervisorComment]:
    return comment_list(user).select_related("turn__session", "written_by")


def comment_history(user, comment: SupervisorComment) -> QuerySet:
    """The comment's audit trail, oldest first, with who made each change.

    The trainee of the session never sees the versions from before a supervisor accepted a suggestion.
    """
    history = comment.history.select_related("history_user").order_by("history_date", "history_id")
    if comment.turn.session.trainee_id == user.pk:
        history = history.filter(ACCEPTED)
    return history
