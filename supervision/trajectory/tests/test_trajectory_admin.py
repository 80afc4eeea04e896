"""Read-only, role-scoped admin for stored trajectory audits."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from supervision.models import Session
from supervision.testing import golden_session, write_jsonl
from supervision.trajectory.models import TrajectoryAudit
from supervision.trajectory.services import trajectory_audit_sessions

pytestmark = pytest.mark.django_db


@pytest.fixture
def audits(cast, tmp_path):
    for code, trainee in (("ADA1", "trainee_a"), ("ADB1", "trainee_b")):
        path = write_jsonl(tmp_path / f"{code}.jsonl", golden_session(code, 14))
        call_command("import_transcripts", str(path), trainee=trainee)
    trajectory_audit_sessions()
    return {code: Session.objects.get(code=code) for code in ("ADA1", "ADB1")}


def test_it_lists_only_the_supervised_trainees_windows(client, cast, audits):
    client.force_login(cast.supervisor_a)
    response = client.get(reverse("admin:trajectory_trajectoryaudit_changelist"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "ADA1" in body and "ADB1" not in body


def test_another_supervisors_window_does_not_exist_for_them(client, cast, audits):
    other = TrajectoryAudit.objects.filter(session=audits["ADB1"]).first()
    client.force_login(cast.supervisor_a)
    response = client.get(reverse("admin:trajectory_trajectoryaudit_change", args=[other.pk]), follow=True)
    # The admin treats an object outside the user's queryset as missing: back to the index, saying so.
    assert response.redirect_chain == [(reverse("admin:index"), 302)]
    assert "ADB1" not in response.content.decode()


def test_it_shows_label_explanation_and_state_trace(client, cast, audits):
    audit = TrajectoryAudit.objects.filter(session=audits["ADA1"]).first()
    client.force_login(cast.supervisor_a)
    body = client.get(reverse("admin:trajectory_trajectoryaudit_change", args=[audit.pk])).content.decode()
    assert "<polyline" in body and "정서가 (valence)" in body
    assert "검토 보조 자료" in body
    assert audit.get_label_display() in body
    assert audit.states[0]["utterance_id"] in body
    # the session page's chart (wide and compact), its threshold line, and the numbers under Korean headings
    assert 'id="trajectory-t"' in body and 'id="trajectory-c-t"' in body and "임계" in body
    assert "<th>발화 ID</th>" in body and "<th>위험 (risk)</th>" in body
    # named by its session and turns, not by database ids
    assert f"<h2>ADA1 · 창 {audit.window_index} (발화 {audit.first_seq}–{audit.last_seq})</h2>" in body
    # the explanation without the verdict and score the page shows as fields of their own (its tooltip keeps
    # the engine's whole text)
    assert audit.explanation.startswith("궤적 판정:")
    assert body.count("궤적 판정:") == 1 and f'title="{audit.explanation}"' in body.replace("&gt;", ">")


def test_the_session_page_states_verdict_and_score_once_per_window(client, cast, audits):
    session = audits["ADA1"]
    client.force_login(cast.supervisor_a)
    body = client.get(reverse("admin:supervision_session_change", args=[session.pk])).content.decode()
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", body, flags=re.S)
    windows = TrajectoryAudit.objects.filter(session=session).count()
    assert len([c for c in captions if "점수" in c]) == windows
    for caption in captions:
        visible = re.sub(r'title="[^"]*"', "", caption)
        assert visible.count("점수") <= 1 and "궤적 판정" not in visible


def test_it_is_read_only_even_for_staff(client, cast, audits):
    audit = TrajectoryAudit.objects.first()
    client.force_login(cast.staff)
    assert client.get(reverse("admin:trajectory_trajectoryaudit_changelist")).status_code == 200
    assert client.get(reverse("admin:trajectory_trajectoryaudit_add")).status_code == 403
    response = client.post(reverse("admin:trajectory_trajectoryaudit_delete", args=[audit.pk]), {"post": "yes"})
    assert response.status_code == 403
    assert TrajectoryAudit.objects.filter(pk=audit.pk).exists()


def test_trainees_cannot_open_it(client, cast, audits):
    client.force_login(cast.trainee_a)
    response = client.get(reverse("admin:trajectory_trajectoryaudit_changelist"))
    assert response.status_code == 302


def test_the_changelist_query_count_does_not_grow_with_rows(
    client, cast, audits, tmp_path, django_assert_max_num_queries
):
    client.force_login(cast.staff)
    url = reverse("admin:trajectory_trajectoryaudit_changelist")
    client.get(url)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    for i in range(3):
        path = write_jsonl(tmp_path / f"m{i}.jsonl", golden_session(f"ADM{i}", 23))
        call_command("import_transcripts", str(path), trainee="trainee_a")
    trajectory_audit_sessions()
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get(url)
