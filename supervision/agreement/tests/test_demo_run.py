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


def test_the_report_names_axes_and_missed_states_in_korean_with_their_codes(client, db):
    load_demo()
    run = AnnotationRun.objects.get()
    client.force_login(get_user_model().objects.get(username="supervisor_kim"))
    page = client.get(f"/admin/agreement/annotationrun/{run.pk}/report/").content.decode()
    assert "<td>기법 <code>techniques</code></td>" in page
    assert "DEMO_04-K-004</a> — 자살사고 인정 (suicidal_ideation_admit)</li>" in page
    assert "올린 사람 load_demo" in page
