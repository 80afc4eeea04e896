"""Runs' reports worked out before anyone opens them.

For a run of 100,000 turns the report's figures take 1.5-2 s to work out (reading the golden labels and every
run's answers is most of it), and the first person to open the report waited for them. So a worker works the
report out (``services.run_report``, which keeps every figure in the cache under the state of the sessions it
covers) for everyone who may open it:

- when the run is saved (``tasks.keep_run_report``, queued when the save commits), and
- after golden labels of sessions a run rated are written (``tasks.refresh_run_reports``, queued on
  ``supervision.signals.golden_labels_changed``, at most one at a time): only the views whose figures the
  write changed are worked out again; the others are found in the cache.

Without a broker nothing of this runs, and a report is worked out when it is first opened, as before.
"""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth import get_user_model

from supervision.models import TraineeAssignment
from supervision.roles import is_supervisor, sees_everything

from . import selectors, services
from .models import AnnotationRun, RunTurn


def run_report_viewers(run: AnnotationRun, session_ids: Collection[int] | None = None) -> list:
    """Who may open ``run``'s report, one per distinct view: ``None`` (staff and superusers see everything
    alike) and each supervisor of a trainee whose session the run rated (of ``session_ids`` only, when
    given: the views that cover them)."""
    sessions = selectors.run_session_ids(run)
    if session_ids is not None:
        sessions &= set(session_ids)
    supervisor_ids = (
        TraineeAssignment.objects.filter(trainee__practice_sessions__in=sorted(sessions))
        .order_by()
        .values_list("supervisor_id", flat=True)
        .distinct()
    )
    supervisors = get_user_model().objects.filter(pk__in=list(supervisor_ids), is_active=True).order_by("pk")
    return [None, *(user for user in supervisors if is_supervisor(user) and not sees_everything(user))]


def run_report_keep(run: AnnotationRun, session_ids: Collection[int] | None = None) -> int:
    """Works out and keeps ``run``'s report for everyone who may open it (whose view covers ``session_ids``,
    when given); answers how many views it looked at."""
    viewers = run_report_viewers(run, session_ids)
    for viewer in viewers:
        services.run_report(run, viewer)
    return len(viewers)


def runs_rating(session_ids: Collection[int]) -> list[AnnotationRun]:
    """The saved runs that rated a turn of these sessions, newest first."""
    rated = RunTurn.objects.filter(turn__session_id__in=sorted(session_ids)).order_by().values("run_id").distinct()
    return list(AnnotationRun.objects.filter(pk__in=rated).order_by("-created_at", "-id"))


def run_reports_refresh(session_ids: Collection[int]) -> int:
    """Works the reports of the runs that rated these sessions out again, where a write changed them;
    answers how many runs it looked at."""
    runs = runs_rating(session_ids)
    for run in runs:
        run_report_keep(run, session_ids)
    return len(runs)
