"""`make run`'s demo comes with an evaluation AI's run, so a supervisor trying the portal finds the agreement
report and the adjudication queue filled (and its missed disclosure at the top)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from supervision.agreement.models import AnnotationRun
from supervision.agreement.services import run_differences, score_run
from supervision.demo import DEMO_RATER, load_demo


def test_the_demo_brings_one_run_whose_queue_leads_with_the_missed_disclosure(db):
    load_demo()
    load_demo()  # idempotent: still one run
    run = AnnotationRun.objects.get()
    assert run.rater == DEMO_RATER
    supervisor = get_user_model().objects.get(username="supervisor_kim")
    queue = run_differences(run, supervisor)
    assert (queue[0].axis, queue[0].label, queue[0].golden, queue[0].rater) == (
        "client_states",
        "suicidal_ideation_admit",
        "present",
        "absent",
    )
    assert 20 < len(queue) < 100  # a queue worth a look (two pages of the admin's queue)
    figures = score_run(run, user=supervisor)
    assert figures["turns"] == 153 and 0.5 < figures["axes"]["techniques"]["micro_f1"] < 1.0
