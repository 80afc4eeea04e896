"""Demo users and sessions for `make run` (all synthetic), loaded through the real importer."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils import timezone

from supervision.agreement.models import AnnotationRun, RaterKind
from supervision.agreement.reading import read_run
from supervision.agreement.services import annotation_run_create
from supervision.gauge.models import GaugeSnapshot
from supervision.importing.readers import read_jsonl
from supervision.importing.services import ImportReport, import_transcripts
from supervision.models import Session
from supervision.nightly import nightly_review
from supervision.people.services import portal_user_create_or_update
from supervision.roles import Role

DEMO_DIR = Path(__file__).resolve().parent / "demo"
DEMO_PASSWORD = "demo-pass-2026"
# An evaluation AI's answers on the demo sessions (synthetic): the golden labels with the confusions such a
# model makes (reflection for restatement, empathy for validation …) and one missed suicidal-ideation
# disclosure, so the agreement report, its safety box and the adjudication queue have something to show.
DEMO_RUN = DEMO_DIR / "runs" / "eval-ai-demo.jsonl"
DEMO_RATER = "eval-ai-demo"
# (username, role, supervisor)
DEMO_USERS = (
    ("supervisor_kim", Role.SUPERVISOR, None),
    ("trainee_a", Role.TRAINEE, "supervisor_kim"),
    ("trainee_b", Role.TRAINEE, "supervisor_kim"),
    ("staff_lee", Role.STAFF, None),
)


@transaction.atomic
def load_demo() -> list[ImportReport]:
    """Demo users and sessions, then the nightly review for each night of the sessions' dates and for today
    (on PostgreSQL and on the embedded SQLite alike: the gauge has a portable path with the same figures)."""
    for username, role, supervisor in DEMO_USERS:
        portal_user_create_or_update(
            username=username, role=role, password=DEMO_PASSWORD, supervisor_username=supervisor
        )
    reports = []
    for path in sorted(DEMO_DIR.glob("*.jsonl")):
        report = import_transcripts(rows=read_jsonl(path))
        if report.errors:
            raise ValueError(f"demo file {path.name} is invalid: {report.errors[:3]}")
        reports.append(report)
    # The nights the demo's sessions would have had, then today: the same work as the nightly job, night by
    # night in order, so the trend has a point per night and the tendency tags move by the lifecycle's own
    # rules (observation → hypothesis → verified as their evidence and days add up), as a portal in use would.
    # A night already computed (an earlier load_demo) is not computed again.
    today = timezone.localdate()
    session_ids = [session_id for report in reports for session_id in report.session_ids]
    nights = sorted({day for day in Session.objects.filter(pk__in=session_ids).values_list("held_on", flat=True)})
    done = set(
        GaugeSnapshot.objects.filter(date__in=nights, session__isnull=True).values_list("date", flat=True).distinct()
    )
    for night in nights:
        if night < today and night not in done:
            nightly_review(day=night)
    nightly_review(day=today)
    if not AnnotationRun.objects.filter(rater=DEMO_RATER).exists():
        run_file = read_run(DEMO_RUN)
        if not run_file.ok:
            raise ValueError(f"demo run {DEMO_RUN.name} is invalid: {run_file.errors[:3]}")
        annotation_run_create(
            run_file=run_file,
            rater=DEMO_RATER,
            kind=RaterKind.AI,
            note="데모 (합성)",
            file_name=DEMO_RUN.name,
            uploaded_from="load_demo",
        )
    return reports
