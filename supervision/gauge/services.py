"""The review gauge (writes): the day's snapshots per trainee and per session, and suggested critiques.

``gauge_compute`` reads each session's tally (``aggregate``: kept tallies where the session's rows are
unchanged, one set-based statement over the others), writes the day's snapshots (``snapshots``: copied
in the database when unchanged, the rest with COPY) and the suggestions (``suggestions``). A night costs
what changed plus one read of the kept tallies. Idempotent: a re-run for the same day leaves the same rows
and removes the day's snapshots that no longer apply.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from portal.perf import without_cyclic_gc
from supervision.gauge import figures
from supervision.gauge.aggregate import session_tallies, tallies_forget
from supervision.gauge.models import TargetBand
from supervision.gauge.portable import session_aggregates
from supervision.gauge.snapshots import DueSnapshot, write_snapshots
from supervision.gauge.suggestions import suggest

__all__ = ["GaugeRun", "current_bands", "gauge_compute", "set_based", "tallies_forget"]


@dataclass(frozen=True)
class GaugeRun:
    day: datetime.date
    trainees: int
    sessions: int
    turns: int
    suggestions: int

    def summary(self) -> dict[str, int]:
        """The last stdout line of ``compute_gauges`` (CONTRACT.md §4)."""
        return {"trainees": self.trainees, "sessions": self.sessions, "turns": self.turns}


def current_bands() -> dict[str, figures.Band]:
    return {
        category: (float(low), float(high))
        for category, low, high in TargetBand.objects.values_list("category", "low", "high")
    }


def set_based() -> bool:
    """PostgreSQL: one aggregate statement, kept tallies, COPY. Elsewhere (the SQLite of `make run`): the
    portable path, a full recompute folded in Python with identical figures (``tests/test_two_backends.py``)."""
    return connection.vendor == "postgresql"


@transaction.atomic
def gauge_compute(*, day: datetime.date) -> GaugeRun:
    """Writes the snapshots dated ``day``: one per trainee over the sessions held in the
    ``GAUGE_WINDOW_DAYS`` days ending ``day`` and one per such session; then the suggested critiques.

    Sessions whose rows have not changed since the last run are not aggregated again: their kept tallies
    are read (``SessionTally``; ``tallies_forget`` makes the next run aggregate every session; a test
    holds both ways to the same result)."""
    from supervision import pagecache

    pagecache.everyone_changed()  # the trainees' dashboards show the snapshots
    with without_cyclic_gc():
        return _gauge_compute(day=day, portable=not set_based())


def _gauge_compute(*, day: datetime.date, portable: bool) -> GaugeRun:
    start = day - datetime.timedelta(days=settings.GAUGE_WINDOW_DAYS - 1)
    bands = current_bands()
    computed_at = timezone.now()
    if portable:
        sessions = session_aggregates(start=start, day=day)
    else:
        sessions = session_tallies(start=start, day=day, computed_at=computed_at)

    by_trainee: dict[int, figures.Tally] = defaultdict(figures.Tally)
    for session in sessions:
        by_trainee[session.trainee_id].add(session.tally)
    due = [DueSnapshot(trainee_id, None, tally, bands) for trainee_id, tally in by_trainee.items()]
    due += [DueSnapshot(s.trainee_id, s.session_id, s.tally, bands) for s in sessions]
    write_snapshots(day, due, bands, computed_at)
    suggestions = suggest(sessions, bands)
    return GaugeRun(
        day=day,
        trainees=len(by_trainee),
        sessions=len(sessions),
        turns=sum(session.tally.turns for session in sessions),
        suggestions=suggestions,
    )
