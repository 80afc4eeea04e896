"""Suggested critiques: where they land, re-runs, accept and dismiss (services and admin actions)."""

import pytest
from django.urls import reverse

from supervision.exporting import golden_lines
from supervision.gauge.models import DismissedSuggestion, GaugeSnapshot
from supervision.gauge.services import gauge_compute
from supervision.gauge.suggestions import (
    CLOSED_ON_RESUMING_KEY,
    SILENT_CLOSE_KEY,
    suggestion_accept,
    suggestion_dismiss,
)
from supervision.gauge.tests.conftest import DAY
from supervision.models import Session, SupervisorComment
from supervision.services import ServiceError
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db


def suggestions():
    return sorted(
        SupervisorComment.objects.filter(is_suggestion=True).values_list("turn__utterance_id", "suggestion_key")
    )


def test_it_suggests_on_the_turn_where_it_happened(fixture_sessions):
    gauge_compute(day=DAY)
    assert suggestions() == sorted(
        [
            ("S1-K-004", SILENT_CLOSE_KEY),  # the third no-input client turn of the run
            ("S1-K-007", CLOSED_ON_RESUMING_KEY),  # the resuming last client turn in 정리
            ("S1-C-007", "gauge:band:RELATIONAL"),  # the session's last counselor turn
            ("S1-C-007", "gauge:band:STABILIZING"),
            ("S2-K-003", SILENT_CLOSE_KEY),
            *[("S2-C-003", f"gauge:band:{c}") for c in ("EXPLORATORY", "INTERVENTION", "STABILIZING", "STRUCTURING")],
            *[
                ("S4-C-002", f"gauge:band:{c}")
                for c in ("RELATIONAL", "EXPLORATORY", "INTERVENTION", "STABILIZING", "STRUCTURING")
            ],
        ]
    )
    comment = SupervisorComment.objects.get(turn__utterance_id="S1-K-004")
    assert (comment.author, comment.kind, comment.severity) == ("ai", "critique", "moderate")


def test_a_band_suggestion_names_the_category_in_korean_with_shares_in_percent(fixture_sessions):
    gauge_compute(day=DAY)
    band = SupervisorComment.objects.get(turn__utterance_id="S1-C-007", suggestion_key="gauge:band:STABILIZING")
    figures = GaugeSnapshot.objects.get(session__code="S1", date=DAY).categories["STABILIZING"]
    share, (low, high) = f"{round(figures['share'] * 100)}%", figures["band"]
    band_pct = f"{round(low * 100)}%–{round(high * 100)}%"
    if figures["status"] == "over":
        assert (
            band.text
            == f"이 회기의 안정/지지(STABILIZING) 기법 비율이 {share}로, 목표 범위 {band_pct}보다 높습니다(과다, over)."
        )
    else:
        assert (
            band.text
            == f"이 회기의 안정/지지(STABILIZING) 기법 비율이 {share}로, 목표 범위 {band_pct}보다 낮습니다(부족, under)."
        )
    assert band.intent_deviation["actual"] == f"안정/지지(STABILIZING) {share}"


def test_it_never_duplicates_on_a_rerun(fixture_sessions):
    gauge_compute(day=DAY)
    first = suggestions()
    gauge_compute(day=DAY)
    assert suggestions() == first


def test_it_hides_suggestions_from_the_golden_export(fixture_sessions):
    gauge_compute(day=DAY)
    exported = [c for line in golden_lines(Session.objects.filter(code="S1")) for c in line["comments"]]
    assert all(c["author"] == "supervisor" for c in exported)


def test_an_accepted_suggestion_becomes_the_supervisors_and_is_counted(fixture_sessions):
    gauge_compute(day=DAY)
    comment = SupervisorComment.objects.get(turn__utterance_id="S1-K-004", suggestion_key=SILENT_CLOSE_KEY)
    suggestion_accept(comment=comment, user=fixture_sessions.supervisor_a)
    comment.refresh_from_db()
    assert (comment.author, comment.is_suggestion, comment.written_by) == (
        "supervisor",
        False,
        fixture_sessions.supervisor_a,
    )
    gauge_compute(day=DAY)
    s1 = GaugeSnapshot.objects.get(session__code="S1", date=DAY)
    assert s1.critiques["moderate"] == 1
    # a client-turn critique is counted by severity, but the deviation rate counts counselor turns only
    assert s1.intent_deviation_turns == 2
    assert SupervisorComment.objects.filter(turn__utterance_id="S1-K-004").count() == 1


def test_a_dismissed_suggestion_is_not_suggested_again(fixture_sessions):
    gauge_compute(day=DAY)
    comment = SupervisorComment.objects.get(turn__utterance_id="S1-K-007")
    suggestion_dismiss(comment=comment, user=fixture_sessions.supervisor_a)
    gauge_compute(day=DAY)
    assert not SupervisorComment.objects.filter(turn__utterance_id="S1-K-007").exists()
    assert DismissedSuggestion.objects.filter(suggestion_key=CLOSED_ON_RESUMING_KEY).count() == 1


def test_it_refuses_another_trainees_supervisor(fixture_sessions):
    gauge_compute(day=DAY)
    comment = SupervisorComment.objects.get(turn__utterance_id="S1-K-007")
    with pytest.raises(ServiceError):
        suggestion_accept(comment=comment, user=fixture_sessions.supervisor_b)
    with pytest.raises(ServiceError):
        suggestion_dismiss(comment=comment, user=fixture_sessions.supervisor_b)
    comment.refresh_from_db()
    assert comment.is_suggestion


def test_it_withdraws_a_pending_suggestion_that_no_longer_applies(fixture_sessions):
    gauge_compute(day=DAY)
    turn = SupervisorComment.objects.get(suggestion_key=CLOSED_ON_RESUMING_KEY).turn
    turn.dialog_act = "goodbye"
    turn.save()
    gauge_compute(day=DAY)
    assert not SupervisorComment.objects.filter(suggestion_key=CLOSED_ON_RESUMING_KEY).exists()


def test_the_admin_lists_only_suggestions_and_accepts_them(fixture_sessions, client):
    gauge_compute(day=DAY)
    client.login(username="supervisor_a", password=PASSWORD)
    url = reverse("admin:gauge_suggestedcomment_changelist")
    page = client.get(url)
    assert page.status_code == 200
    shown = page.context["cl"].result_count
    assert (
        shown
        == SupervisorComment.objects.filter(is_suggestion=True, turn__session__trainee__username="trainee_a").count()
    )
    target = SupervisorComment.objects.get(suggestion_key=SILENT_CLOSE_KEY, turn__utterance_id="S1-K-004")
    response = client.post(url, {"action": "accept", "_selected_action": [target.pk]})
    assert response.status_code == 302
    target.refresh_from_db()
    assert not target.is_suggestion and target.written_by == fixture_sessions.supervisor_a
    assert client.get(url).context["cl"].result_count == shown - 1


def test_the_admin_dismisses(fixture_sessions, client):
    gauge_compute(day=DAY)
    client.login(username="supervisor_a", password=PASSWORD)
    target = SupervisorComment.objects.get(suggestion_key=CLOSED_ON_RESUMING_KEY)
    client.post(
        reverse("admin:gauge_suggestedcomment_changelist"), {"action": "dismiss", "_selected_action": [target.pk]}
    )
    assert not SupervisorComment.objects.filter(pk=target.pk).exists()


def test_a_supervisor_sees_no_other_trainees_suggestions_in_the_admin(fixture_sessions, client):
    gauge_compute(day=DAY)
    client.login(username="supervisor_b", password=PASSWORD)
    page = client.get(reverse("admin:gauge_suggestedcomment_changelist"))
    assert {c.turn.session.code for c in page.context["cl"].result_list} == {"S4"}
