"""Reads for the trainee pages and the admin transcript: querysets joined and prefetched up front, so a
page costs the same number of queries for 10 turns or 500.

Access (CONTRACT §5) is applied here, not in the views: a session or comment the user may not see is
simply not in the queryset, so it answers 404.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from supervision.feedback.models import CommentRead, CommentReply
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.serializers import GaugeSnapshotSerializer
from supervision.models import Session, SupervisorComment, Turn
from supervision.roles import trainee_filter
from supervision.safety.selectors import transcript_marks
from supervision.selectors import count_per_session, with_session_counts
from supervision.tags.views import tags_feedback_context
from supervision.trajectory.selectors import audit_labels as trajectory_audit_labels
from supervision.trajectory.selectors import audit_pending as trajectory_audit_pending
from supervision.trajectory.selectors import audits_for as trajectory_audits_for
from taxonomy.models import ClientStateDef, TechniqueLabelDef


def accepted_comments() -> QuerySet[SupervisorComment]:
    """What a trainee may see: comments that are not (or no longer) AI suggestions."""
    return SupervisorComment.objects.accepted()


def unread_by_trainee(comments: QuerySet[SupervisorComment]) -> QuerySet[SupervisorComment]:
    """The comments the session's trainee has not marked read. One rule for the trainee's "새 논평" and
    the supervisor's "수련생 미확인": a supervisor's own comments are never new to the supervisor."""
    return comments.exclude(
        Exists(CommentRead.objects.filter(comment=OuterRef("pk"), user=OuterRef("turn__session__trainee")))
    )


def feedback_sessions(user) -> QuerySet[Session]:
    """The sessions the user may see, with the number of shown comments and how many of those the
    session's trainee has not read yet (so "새 논평 N" is always part of "논평 M")."""
    in_session = accepted_comments().filter(turn__session=OuterRef("pk"))
    sessions = Session.objects.filter(trainee_filter(user)).select_related("trainee")
    return (
        with_session_counts(sessions)
        .annotate(
            comment_count=count_per_session(in_session),
            unread_count=count_per_session(unread_by_trainee(in_session)),
        )
        .order_by("-held_on", "code")
    )


def transcript_turns(
    session: Session,
    *,
    reader=None,
    include_suggestions: bool = False,
    stage: str = "",
    speaker: str = "",
    label: str = "",
    query: str = "",
) -> QuerySet[Turn]:
    """The session's turns in order with labels, comments, replies and (for ``reader``) read markers.

    Trainees get accepted comments only; the admin passes ``include_suggestions=True``. The filters
    narrow the turns (stage code, speaker code, technique or client-state code, words in the text).
    """
    # Lists via ``to_attr`` (technique_list, client_state_list, comment_list, reply_list): templates then
    # iterate plain lists instead of cloning a QuerySet per turn, which matters on 500-turn pages.
    comments = SupervisorComment.objects.all() if include_suggestions else accepted_comments()
    prefetches = [Prefetch("replies", queryset=CommentReply.objects.select_related("author"), to_attr="reply_list")]
    if reader is not None:
        prefetches.append(
            Prefetch("reads", queryset=CommentRead.objects.filter(user=reader), to_attr="reads_by_reader")
        )
    turns = (
        session.turns.select_related("stage")
        .prefetch_related(
            Prefetch("techniques", queryset=TechniqueLabelDef.objects.all(), to_attr="technique_list"),
            Prefetch("client_states", queryset=ClientStateDef.objects.all(), to_attr="client_state_list"),
            Prefetch(
                "comments",
                queryset=comments.select_related("written_by").prefetch_related(*prefetches),
                to_attr="comment_list",
            ),
        )
        .order_by("seq")
    )
    if stage:
        turns = turns.filter(stage_id=stage)
    if speaker:
        turns = turns.filter(speaker=speaker)
    if label:
        turns = turns.filter(Q(techniques__code=label) | Q(client_states__code=label)).distinct()
    if query:
        turns = turns.filter(text__icontains=query)
    return turns


def pop_session_wide_suggestions(turns: list[Turn]) -> list[SupervisorComment]:
    """Takes the suggestions about the whole session (technique balance) off the turns they are stored on,
    for the session's header; ``turns`` come from ``transcript_turns``."""
    from supervision.gauge.suggestions import SESSION_WIDE_KEY_PREFIX

    session_wide = []
    for turn in turns:
        keep = []
        for comment in turn.comment_list:
            wide = comment.is_suggestion and (comment.suggestion_key or "").startswith(SESSION_WIDE_KEY_PREFIX)
            (session_wide if wide else keep).append(comment)
        turn.comment_list = keep
    return session_wide


def feedback_session(user, session_id: int) -> Session:
    """One session the user may see (404 otherwise)."""
    return get_object_or_404(Session.objects.filter(trainee_filter(user)).select_related("trainee"), pk=session_id)


def feedback_comment(user, comment_id: int) -> SupervisorComment:
    """One shown comment on a session the user may see (404 otherwise)."""
    visible = accepted_comments().filter(trainee_filter(user, "turn__session__trainee"))
    return get_object_or_404(visible.select_related("turn__session"), pk=comment_id)


# --- Other capabilities shown on these pages -------------------------------------------------------------

TREND_SNAPSHOTS = 12


def latest_gauge_for(trainee) -> GaugeSnapshot | None:
    """The newest trainee-wide review-gauge snapshot, or None."""
    return GaugeSnapshot.objects.filter(trainee=trainee, session__isnull=True).order_by("-date").first()


def latest_gauges_for_viewer(user) -> list[GaugeSnapshot]:
    """The newest trainee-wide snapshot of every trainee the user may see (a supervisor's dashboard),
    in one query whatever the number of trainees."""
    newest = (
        GaugeSnapshot.objects.filter(trainee=OuterRef("trainee"), session__isnull=True)
        .order_by("-date")
        .values("date")[:1]
    )
    return list(
        GaugeSnapshot.objects.filter(trainee_filter(user), session__isnull=True, date=Subquery(newest))
        .select_related("trainee")
        .order_by("trainee__username")
    )


def gauge_scopes_for(snapshots: Iterable[GaugeSnapshot]) -> dict[int, dict]:
    """What each trainee-wide snapshot covers (CONTRACT §4, ``compute_gauges``) →
    ``{trainee id: {"start", "end", "days", "sessions", "pending"}}``: the ``GAUGE_WINDOW_DAYS`` days ending the
    snapshot's date and the trainee's sessions held in them, oldest first. ``sessions`` are those the snapshot
    counted; ``pending`` those held in its days but added after it was computed (an import since the night):
    its figures do not hold them yet, and the page says so rather than naming them beside figures without
    them. One query for every trainee."""
    days = settings.GAUGE_WINDOW_DAYS
    scopes, computed = {}, {}
    for snapshot in snapshots:
        end = snapshot.date
        scopes[snapshot.trainee_id] = {
            "start": end - datetime.timedelta(days=days - 1),
            "end": end,
            "days": days,
            "sessions": [],
            "pending": [],
        }
        computed[snapshot.trainee_id] = snapshot.computed_at
    if not scopes:
        return scopes
    sessions = Session.objects.filter(
        trainee_id__in=list(scopes),
        held_on__range=(min(s["start"] for s in scopes.values()), max(s["end"] for s in scopes.values())),
    ).order_by("held_on", "code")
    for session in sessions.only("id", "code", "title", "held_on", "trainee_id", "created_at"):
        scope = scopes[session.trainee_id]
        if scope["start"] <= session.held_on <= scope["end"]:
            counted = session.created_at <= computed[session.trainee_id]
            scope["sessions" if counted else "pending"].append(session)
    return scopes


def gauge_trend_for(trainee) -> list[dict]:
    """The latest trainee-wide snapshots, newest first (CONTRACT §6 shape)."""
    snapshots = GaugeSnapshot.objects.filter(trainee=trainee, session__isnull=True).order_by("-date")
    return GaugeSnapshotSerializer(snapshots[:TREND_SNAPSHOTS], many=True).data


def audit_pending(session) -> bool:
    return trajectory_audit_pending(session)


def audit_labels(session) -> str | None:
    """``"suggested"`` when the session's audits read the AI's estimated labels (no label was given): the
    pages then say 「AI 추정 라벨 기준」. Only that note reaches a trainee, never the suggestions."""
    return trajectory_audit_labels(session)


def audits_for(session) -> list[dict]:
    """Trajectory-audit windows of a session: ``{"label","score","explanation","risk_threshold",
    "trace": [{"seq","utterance_id","valence","arousal","risk"}]}``."""
    return trajectory_audits_for(session)


def safety_marks_for(viewer, session) -> dict:
    """``{turn id: TurnMarks}``: the safety events (CONTRACT §8) on the session's turns and their answers,
    as ``viewer`` may see them, in one query."""
    return transcript_marks(viewer, session)


def tags_for(viewer, trainee) -> dict:
    """Context for the tags partials: perspectives (observations already left out for a trainee) and,
    for the trainee themself, the form to declare a focus."""
    return tags_feedback_context(viewer=viewer, trainee_id=trainee.pk)
