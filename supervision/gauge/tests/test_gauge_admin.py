"""Admin: snapshots at a glance (role-scoped, constant queries), the recompute action, target bands."""

import pytest
from django.urls import reverse

from portal.celery import app
from supervision.gauge.models import GaugeSnapshot, TargetBand
from supervision.gauge.services import gauge_compute
from supervision.gauge.tests.conftest import DAY
from supervision.testing import log_in

pytestmark = pytest.mark.django_db
SNAPSHOTS = reverse("admin:gauge_gaugesnapshot_changelist")


@pytest.fixture
def eager():
    """Run queued jobs in-process, as the portal does without REDIS_URL."""
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def test_it_lists_a_supervisors_trainees_with_the_figures_readable(fixture_sessions, client):
    gauge_compute(day=DAY)
    page = log_in(client, "supervisor_a").get(SNAPSHOTS)
    assert page.status_code == 200
    assert {s.trainee.username for s in page.context["cl"].result_list} == {"trainee_a"}
    html = page.content.decode()
    assert "관계 형성 0.54↑" in html  # trainee-wide RELATIONAL 7/13 over its band, by its Korean name
    assert "1.50 적정" in html
    assert "0.25–0.45" in html


def test_its_change_page_shows_the_trainees_chart_and_tables_not_json(fixture_sessions, client):
    gauge_compute(day=DAY)
    snapshot = GaugeSnapshot.objects.get(session=None, trainee=fixture_sessions.trainee_a)
    page = log_in(client, "supervisor_a").get(reverse("admin:gauge_gaugesnapshot_change", args=[snapshot.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'class="chart"' in html and "기법 군집 비율과 목표 범위" in html  # the trainee's server-drawn chart
    assert '공감 <span class="code">empathy</span>' in html  # technique table with Korean names
    assert '{"RELATIONAL"' not in html and "&quot;RELATIONAL&quot;" not in html
    transitions = snapshot.client_state_transitions
    assert transitions and "&gt;" not in html.split("상태 전이", 1)[1]  # transitions as rows, not "a>b" JSON keys


def test_its_changelist_runs_the_same_queries_for_more_rows(fixture_sessions, client, django_assert_num_queries):
    gauge_compute(day=DAY)
    log_in(client, "staff")
    client.get(SNAPSHOTS)
    # session, user, roles, 2 counts, rows (trainee and session joined), date hierarchy, trainee filter …
    with django_assert_num_queries(11):
        assert client.get(SNAPSHOTS).context["cl"].result_count == 5
    for n in range(1, 4):
        gauge_compute(day=DAY.replace(day=30 - n))
    with django_assert_num_queries(11):
        assert client.get(SNAPSHOTS).context["cl"].result_count == 11


def test_recompute_now_queues_the_nightly_review_for_the_selected_days(fixture_sessions, client, eager):
    gauge_compute(day=DAY)
    TargetBand.objects.filter(category="RELATIONAL").update(low="0.000", high="1.000")
    target = GaugeSnapshot.objects.get(session=None, trainee=fixture_sessions.trainee_a)
    response = log_in(client, "staff").post(SNAPSHOTS, {"action": "recompute", "_selected_action": [target.pk]})
    assert response.status_code == 302
    recomputed = GaugeSnapshot.objects.get(session=None, trainee=fixture_sessions.trainee_a, date=DAY)
    assert recomputed.categories["RELATIONAL"]["status"] == "within"


def test_trainees_cannot_open_the_admin(fixture_sessions, client):
    response = log_in(client, "trainee_a").get(SNAPSHOTS)
    assert response.status_code == 302 and "login" in response["Location"]


def test_an_admin_edits_a_band_and_a_reversed_band_is_refused(fixture_sessions, admin_client):
    band = TargetBand.objects.get(category="STRUCTURING")
    url = reverse("admin:gauge_targetband_change", args=[band.pk])
    refused = admin_client.post(url, {"category": "STRUCTURING", "low": "0.5", "high": "0.1", "rationale": ""})
    assert refused.status_code == 200
    page = refused.content.decode()
    assert "하한이 상한보다 큽니다" in page and "target_band_ordered_within_0_1" not in page
    # headed by the band as stored, not by the refused figures
    assert "0.030–0.150" in page.split("<title>", 1)[1].split("</title>", 1)[0] and "0.5–0.1" not in page
    band.refresh_from_db()
    assert str(band.low) == "0.030"
    for low, high in (("NaN", "0.2"), ("0.05", "Infinity"), ("0,05", "0.2")):  # hostile: refused, no 500
        response = admin_client.post(url, {"low": low, "high": high, "rationale": ""})
        assert response.status_code == 200 and "숫자" in response.content.decode(), (low, high)
    for low, high in (("-5", "0.2"), ("0.05", "150")):
        page = admin_client.post(url, {"low": low, "high": high, "rationale": ""}).content.decode()
        assert "0에서 1 사이의 비율로 적어 주세요" in page and "유효자리" not in page, (low, high)
    admin_client.post(url, {"category": "STRUCTURING", "low": "0.05", "high": "0.2", "rationale": "조정"})
    band.refresh_from_db()
    assert (str(band.low), str(band.high)) == ("0.050", "0.200")


def test_the_band_list_refuses_a_reversed_or_out_of_range_row_in_korean(fixture_sessions, admin_client):
    bands = list(TargetBand.objects.order_by("category"))
    data = {"form-TOTAL_FORMS": len(bands), "form-INITIAL_FORMS": len(bands), "_save": "저장"}
    for i, band in enumerate(bands):
        data.update({f"form-{i}-id": band.pk, f"form-{i}-low": band.low, f"form-{i}-high": band.high})
    data.update({"form-0-low": "0.8", "form-0-high": "0.2", "form-1-high": "60"})
    page = admin_client.post(reverse("admin:gauge_targetband_changelist"), data).content.decode()
    assert "하한이 상한보다 큽니다" in page and "0에서 1 사이의 비율로 적어 주세요" in page
    assert "target_band_ordered_within_0_1" not in page and "유효자리" not in page
    assert [(b.low, b.high) for b in TargetBand.objects.order_by("category")] == [(b.low, b.high) for b in bands]


def test_a_long_suggestion_is_shortened_in_the_list_with_an_ellipsis():
    from django.contrib import admin

    from supervision.gauge.models import SuggestedComment

    shown = admin.site._registry[SuggestedComment].short_text(SuggestedComment(text="반영 뒤 확인 질문이 있으면 " * 10))
    assert len(shown) <= 80 and shown.endswith("…")
