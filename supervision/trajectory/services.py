"""Writes for the trajectory audit: windows of stored sessions → engine → upserted TrajectoryAudit rows.

Windowing: WINDOW_TURNS = 10 consecutive turns (both speakers) with stride WINDOW_STRIDE = 5, so every turn
is seen in two windows and a deterioration that straddles a boundary is still inside one window; when the
tail is not covered, one more window ends at the session's last turn. A session shorter than 10 turns is one
window. Ten turns is what the engine's templates and thresholds were designed for (about five client states).

Call sites: the nightly task (``trajectory_nightly``) and, after a successful import, the Celery task
``supervision.audit_sessions`` that the importer queues once its transaction commits.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from supervision.exporting import label_codes_by_turn
from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.trajectory.engine.audit import audit_windows
from supervision.trajectory.engine.resources import engine_version
from supervision.trajectory.models import TrajectoryAudit

WINDOW_TURNS = 10
WINDOW_STRIDE = 5
BATCH_SESSIONS = 200


@dataclass(frozen=True, slots=True)
class AuditRunSummary:
    sessions: int = 0
    windows: int = 0
    turns: int = 0
    removed: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def window_bounds(n_turns: int, size: int = WINDOW_TURNS, stride: int = WINDOW_STRIDE) -> list[tuple[int, int]]:
    """Half-open [start, end) index ranges over a session's turns (see the module doc)."""
    if n_turns <= 0:
        return []
    if n_turns <= size:
        return [(0, n_turns)]
    bounds = [(start, start + size) for start in range(0, n_turns - size + 1, stride)]
    if bounds[-1][1] < n_turns:
        bounds.append((n_turns - size, n_turns))
    return bounds


def _turn_dicts(session_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """§2-shaped turn dicts per session, ordered by seq: one query for turns, one per label table."""
    techniques = label_codes_by_turn(TurnTechnique, session_ids)
    states = label_codes_by_turn(TurnClientState, session_ids)
    by_session: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = (
        Turn.objects.filter(session_id__in=session_ids)
        .order_by("session_id", "seq")
        .values_list("id", "session_id", "seq", "utterance_id", "speaker", "text", "nonverbal")
    )
    for turn_id, session_id, seq, utterance_id, speaker, text, nonverbal in rows:
        by_session[session_id].append(
            {
                "seq": seq,
                "utterance_id": utterance_id,
                "speaker": speaker,
                "text": text,
                "nonverbal": nonverbal or [],
                "techniques": techniques.get(turn_id, []),
                "client_states": states.get(turn_id, []),
            }
        )
    return by_session


def _audit_batch(session_ids: Sequence[int], now: dt.datetime, version: str) -> AuditRunSummary:
    turns_by_session = _turn_dicts(session_ids)
    kept: dict[int, int] = {}
    n_turns = 0
    windows: list[tuple[int, int, list[dict[str, Any]]]] = []
    for session_id in session_ids:
        turns = turns_by_session.get(session_id, [])
        n_turns += len(turns)
        bounds = window_bounds(len(turns))
        kept[session_id] = len(bounds)
        windows += [(session_id, index, turns[start:end]) for index, (start, end) in enumerate(bounds)]
    results = audit_windows([window for _, _, window in windows])
    rows = [
        TrajectoryAudit(
            session_id=session_id,
            window_index=index,
            first_seq=window[0]["seq"],
            last_seq=window[-1]["seq"],
            label=result.label,
            score=result.score,
            explanation=result.explanation,
            states=result.states,
            sycophancy_turns=result.sycophancy_turns,
            engine_version=version,
            computed_at=now,
        )
        for (session_id, index, window), result in zip(windows, results, strict=True)
    ]
    with transaction.atomic():
        if rows:
            TrajectoryAudit.objects.bulk_create(
                rows,
                update_conflicts=True,
                unique_fields=["session", "window_index"],
                update_fields=[
                    "first_seq",
                    "last_seq",
                    "label",
                    "score",
                    "explanation",
                    "states",
                    "sycophancy_turns",
                    "engine_version",
                    "computed_at",
                ],
            )
        # Windows beyond the session's current count are stale (the session got shorter on re-import).
        stale = models.Q(pk__in=[])
        for session_id, count in kept.items():
            stale |= models.Q(session_id=session_id, window_index__gte=count)
        removed, _ = TrajectoryAudit.objects.filter(stale).delete()
    return AuditRunSummary(sessions=len(session_ids), windows=len(rows), turns=n_turns, removed=removed)


def _batches(ids: Iterable[int], size: int) -> Iterable[list[int]]:
    batch: list[int] = []
    for session_id in ids:
        batch.append(session_id)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def trajectory_audit_sessions(
    *, session_ids: Iterable[int] | None = None, batch_size: int = BATCH_SESSIONS
) -> AuditRunSummary:
    """Audit the given sessions (all when None) window by window and store the results.

    Idempotent: a re-run updates the same (session, window_index) rows and removes windows that no longer
    exist. Each batch of sessions is one transaction, so a crash leaves earlier batches consistent.
    Unknown ids are ignored.
    """
    base = Session.objects.order_by("id")
    if session_ids is not None:
        base = base.filter(id__in=list(session_ids))
    ids = list(base.values_list("id", flat=True))
    now = timezone.now()
    version = engine_version()
    total = AuditRunSummary()
    for batch in _batches(ids, batch_size):
        part = _audit_batch(batch, now, version)
        total = AuditRunSummary(
            sessions=total.sessions + part.sessions,
            windows=total.windows + part.windows,
            turns=total.turns + part.turns,
            removed=total.removed + part.removed,
        )
    return total


def trajectory_nightly(*, day: dt.date) -> dict[str, Any]:
    """The nightly job's trajectory step: re-audit every stored session (rules may have changed since).

    ``day`` only labels the run; audits are per session, not per day, so the step is safe to run twice.
    """
    summary = trajectory_audit_sessions()
    return {"day": day.isoformat(), **summary.as_dict()}
