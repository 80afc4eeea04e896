"""Reads for the trajectory audit (admin, pages, API call these, never the model directly)."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from supervision.models import Session
from supervision.trajectory.engine.resources import load_resources
from supervision.trajectory.models import TRACE_FIELDS, AuditedRevision, AuditLabels, TrajectoryAudit


def trace_of(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-client-turn state trace shown to supervisors (audits stored before the trace was all that was
    kept hold more fields per state)."""
    return [{k: s.get(k) for k in TRACE_FIELDS} for s in states or ()]


def risk_threshold() -> float:
    """Where the penalty wall sits on the risk axis (model.json), drawn as a line on the state trace."""
    return float(load_resources().model["score"]["wall_threshold"])


def audit_pending(session: Session | int) -> bool:
    """Whether the session's turns or labels changed after its audit was computed (a revision mark newer than
    the audited one): the audit is queued and the pages say the explanation is being brought up to date. The
    marks are kept on PostgreSQL only; elsewhere an audit is never shown as pending."""
    if connection.vendor != "postgresql":
        return False
    session_id = session if isinstance(session, int) else session.pk
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(r.revision, 0) > COALESCE(m.revision, -1) FROM sessions s "
            "LEFT JOIN gauge_session_revision r ON r.session_id = s.id "
            f"LEFT JOIN {AuditedRevision._meta.db_table} m ON m.session_id = s.id WHERE s.id = %s",
            [session_id],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def audit_labels(session: Session | int) -> str | None:
    """What the session's stored audits read (CONTRACT §9): ``"given"`` (the labels people gave) or
    ``"suggested"`` (none given: the label suggester's, and the pages say 「AI 추정 라벨 기준」); ``None``
    before its first audit. The caller checks access."""
    session_id = session if isinstance(session, int) else session.pk
    return AuditedRevision.objects.filter(session_id=session_id).values_list("labels", flat=True).first()


def with_label_basis(audits: QuerySet[TrajectoryAudit]) -> QuerySet[TrajectoryAudit]:
    """The audits, each annotated ``label_basis``: what its session's audits read (``audit_labels``), in the same
    query (the admin's list shows and filters by it)."""
    basis = AuditedRevision.objects.filter(session_id=OuterRef("session_id")).values("labels")[:1]
    return audits.annotate(label_basis=Coalesce(Subquery(basis), Value(AuditLabels.GIVEN.value)))


def audits_for(session: Session | int) -> list[dict[str, Any]]:
    """The stored audits of one session in window order, in one query. The caller checks access."""
    session_id = session if isinstance(session, int) else session.pk
    threshold = risk_threshold()
    rows = TrajectoryAudit.objects.filter(session_id=session_id).order_by("window_index")
    return [
        {
            "window_index": a.window_index,
            "first_seq": a.first_seq,
            "last_seq": a.last_seq,
            "label": a.label,
            "score": a.score,
            "explanation": a.explanation,
            "sycophancy_turns": list(a.sycophancy_turns or ()),
            "trace": trace_of(a.states),
            "risk_threshold": threshold,
        }
        for a in rows.only(
            "window_index", "first_seq", "last_seq", "label", "score", "explanation", "sycophancy_turns", "states"
        )
    ]
