"""The nightly review: every step named in ``settings.NIGHTLY_REVIEW_STEPS``, run for one day.

``compute_gauges`` and the demo call ``nightly_review``; the Celery task (``supervision.gauge.tasks``) runs
the same steps in the same order, a big night's chunk tasks first (below). The steps themselves (the gauge,
the tendency tags, the trajectory audits, the safety suggestions) live in their apps.

A big night (the first one, a new engine version) is mostly per-session work that needs no other session:
a gauge tally, a session's trajectory audits, its safety suggestions. ``settings.NIGHTLY_SESSION_WORK``
names, for each such part, which sessions need it tonight (``pending``) and the service that does it for
some sessions (``prepare``). The Celery task splits the pending sessions into chunks (``plan``), each a
task any worker on any machine takes (``prepare_chunk``: one transaction, so a chunk that crashes leaves
nothing half-written and is simply pending again the next night); the steps then run in order as on any
night and find those sessions done. A step may also have a part that can only start once the steps before
it have run (``settings.NIGHTLY_STEP_PARTS``: the tags of each trainee, from the snapshots the gauge step
writes), split into chunks of trainees right before it. Results do not depend on how the chunks were
shared out: each part is a function of its own session's (or trainee's) rows only.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string


def nightly_review(*, day: datetime.date) -> dict[str, object]:
    """The nightly job: runs every service named in ``settings.NIGHTLY_REVIEW_STEPS`` with ``day=``.

    A step is added to that setting, not here.
    Returns each step's result keyed by its dotted path.
    """
    from supervision import pagecache

    try:
        return {dotted: import_string(dotted)(day=day) for dotted in settings.NIGHTLY_REVIEW_STEPS}
    finally:
        # Every trainee page shows what the night computes (steps done before a failure included).
        pagecache.everyone_changed()


def pending_work(*, day: datetime.date) -> dict[str, list[int]]:
    """For each ``prepare`` service of ``settings.NIGHTLY_SESSION_WORK``, the sessions that need it tonight."""
    return {prepare: list(import_string(pending)(day=day)) for pending, prepare in settings.NIGHTLY_SESSION_WORK}


def plan(work: dict[str, list[int]], *, size: int) -> list[dict[str, list[int]]]:
    """The pending work in chunks of at most ``size`` sessions (or trainees; in id order), each
    ``{prepare: ids}``: a session's parts stay together in one chunk."""
    sessions = sorted({session_id for ids in work.values() for session_id in ids})
    pending = {prepare: set(ids) for prepare, ids in work.items()}
    chunks = []
    for start in range(0, len(sessions), size):
        part = sessions[start : start + size]
        chunk = {prepare: [s for s in part if s in ids] for prepare, ids in pending.items()}
        chunks.append({prepare: ids for prepare, ids in chunk.items() if ids})
    return chunks


def step_work(*, day: datetime.date, step: str) -> dict[str, list[int]]:
    """The part of ``step`` that chunk tasks can do before it (``settings.NIGHTLY_STEP_PARTS``: pending once
    the steps before it have run, e.g. the tags of the trainees whose snapshots the gauge just wrote)."""
    parts = settings.NIGHTLY_STEP_PARTS.get(step)
    if parts is None:
        return {}
    pending, prepare = parts
    return {prepare: list(import_string(pending)(day=day))}


def prepare_chunk(*, day: datetime.date, work: dict[str, list[int]]) -> dict[str, dict]:
    """Does one chunk's work (``plan``) in one transaction; returns each service's result with ``ids``, how
    many sessions (or trainees) it was given."""
    with transaction.atomic():
        return {prepare: {"ids": len(ids), **import_string(prepare)(day=day, ids=ids)} for prepare, ids in work.items()}
