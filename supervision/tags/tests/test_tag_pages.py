"""The trainee's tag page and declare form, and the supervisors' admin with full history."""

import datetime
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from supervision.people.services import portal_user_create_or_update
from supervision.roles import Role
from supervision.tags.models import Status, TagContradiction, TagEvidence, TraineeTag
from supervision.tags.services import tag_contradiction_record, tag_evidence_add
from supervision.tags.tests.factories import make_sessions

PAGE, DECLARE = "/feedback/tags/", "/feedback/tags/declare/"


@pytest.fixture
def sessions(cast):
    return make_sessions(cast.trainee_a, 3)


@pytest.fixture
def tags(cast, sessions):
    a = cast.trainee_a.pk
    for n, session in enumerate(sessions[:2]):
        tag_evidence_add(trainee_id=a, tag="underuses_relational", event=f"관계 형성 낮음 {n}", session_id=session.pk)
        tag_evidence_add(
            trainee_id=a, tag="prioritizes_relational", event=f"관계에 집중하겠다 {n}", session_id=session.pk
        )
    tag_evidence_add(trainee_id=a, tag="skips_risk_assessment", event="내부 관찰 근거", session_id=sessions[0].pk)
    tag_contradiction_record(trainee_id=a, tag="prioritizes_relational", event="관계 비율 낮은 회기", severity="low")
    tag_evidence_add(trainee_id=cast.trainee_b.pk, tag="overuses_intervention", event="다른 수련생 근거")
    return TraineeTag.objects.filter(trainee=cast.trainee_a)


def test_it_shows_the_trainee_both_perspectives_without_observations(client, cast, tags):
    client.force_login(cast.trainee_a)
    page = client.get(PAGE).content.decode()
    assert "내가 밝힌 초점" in page and "회기에서 나타난 모습" in page
    assert "관계에 집중하겠다 0" in page and "관계 형성 낮음 1" in page and "관계 비율 낮은 회기" in page
    assert "내부 관찰 근거" not in page and "skips_risk_assessment" not in page
    assert "다른 수련생 근거" not in page
    assert "틀렸" not in page  # perspectives, never a verdict
    assert 'action="/feedback/tags/declare/"' in page
    assert "선택 안 함 (회기와 관계없이)" in page and "---------" not in page
    # a page of its own, named, with the way back to the dashboard
    assert "<h1>경향 태그</h1>" in page and '<a href="/feedback/">내 피드백</a> › 경향 태그' in page


def test_it_keeps_the_page_to_trainees(client, cast):
    assert client.get(PAGE).status_code == 302
    client.force_login(cast.supervisor_a)
    assert client.get(PAGE).status_code == 403


def test_it_lets_a_trainee_declare_a_focus(client, cast, sessions):
    client.force_login(cast.trainee_a)
    response = client.post(DECLARE, {"tag": "prioritizes_exploratory", "event": "탐색 질문을 늘리겠다", "next": PAGE})
    assert response.status_code == 302 and response["Location"] == PAGE
    piece = TagEvidence.objects.get()
    assert piece.trainee_tag.trainee == cast.trainee_a and piece.trainee_tag.source == "declared"
    assert piece.origin == "trainee" and piece.recorded_by == cast.trainee_a
    page = client.get(PAGE).content.decode()
    # said once, and true at once: the focus is listed under 「내가 밝힌 초점」 as an observation
    assert page.count("기록했습니다. 「두 관점」의 「내가 밝힌 초점」에 관찰로 보입니다.") == 1
    assert "탐색 질문을 늘리겠다" in page.split("내가 밝힌 초점", 1)[1]
    client.post(DECLARE, {"tag": "prioritizes_exploratory", "event": "다시", "session": sessions[0].pk})
    client.post(DECLARE, {"tag": "prioritizes_exploratory", "event": "또", "session": sessions[1].pk})
    assert TraineeTag.objects.get().status == Status.HYPOTHESIS
    assert "탐색 질문을 늘리겠다" in client.get(PAGE).content.decode()


def test_a_first_declaration_shows_at_once_with_its_session_named_by_code_and_date(client, cast, sessions):
    sessions[0].held_on = datetime.date(2026, 11, 5)
    sessions[0].save(update_fields=["held_on"])
    client.force_login(cast.trainee_a)
    client.post(DECLARE, {"tag": "prioritizes_exploratory", "event": "탐색을 늘리겠다", "session": sessions[0].pk})
    assert TraineeTag.objects.get().status == Status.OBSERVATION
    page = client.get("/feedback/").content.decode()
    assert "탐색을 늘리겠다" in page
    # the session and the day it was held, then the day it was recorded, each named
    recorded = timezone.localdate().isoformat()
    # each date with what it belongs to, kept on one line ("2026-11-" over "05" read as two things)
    when = (
        f'<span class="nowrap">{sessions[0].code} 회기(2026-11-05)</span> · <span class="nowrap">{recorded} 기록</span>'
    )
    assert when in page and f"회기 {sessions[0].pk}" not in page
    client.force_login(cast.trainee_b)
    assert "탐색을 늘리겠다" not in client.get("/feedback/").content.decode()


def test_it_refuses_a_declaration_it_should_not_record(client, cast):
    other = make_sessions(cast.trainee_b, 1)[0]
    client.force_login(cast.trainee_a)
    assert client.get(DECLARE).status_code == 405
    for bad in (
        {"tag": "overuses_relational", "event": "관찰 태그를 선언"},
        {"tag": "likes_cats", "event": "x"},
        {"tag": "prioritizes_relational", "event": ""},
        {"tag": "prioritizes_relational", "event": "남의 회기", "session": other.pk},
        {"tag": "prioritizes_relational", "event": "x", "next": "https://elsewhere.example/"},
    ):
        response = client.post(DECLARE, bad)
        assert response.status_code == 302 and response["Location"] == PAGE
    assert TagEvidence.objects.filter(trainee_tag__tag="prioritizes_relational", event="x").count() == 1
    assert TagEvidence.objects.count() == 1
    messages = client.get(PAGE).content.decode()
    assert "집중하려는 점: " in messages and "관련 회기(선택): " in messages
    assert "(tag)" not in messages and "(event)" not in messages  # the form's field names are not the trainee's words
    assert messages.count("빈 선언은 기록하지 않습니다") == 1  # shown once (base.html), not again under the heading
    client.force_login(cast.supervisor_a)
    assert client.post(DECLARE, {"tag": "prioritizes_relational", "event": "y"}).status_code == 403


# --- Admin --------------------------------------------------------------------------------------


def test_it_scopes_the_admin_list_to_the_supervisors_trainees(client, cast, tags):
    client.force_login(cast.supervisor_a)
    page = client.get("/admin/tags/traineetag/").content.decode()
    assert "underuses_relational" in page and "skips_risk_assessment" in page
    assert "trainee_b" not in page
    other = TraineeTag.objects.get(trainee=cast.trainee_b)
    response = client.get(f"/admin/tags/traineetag/{other.pk}/change/", follow=True)
    assert response.redirect_chain == [("/admin/", 302)]  # outside their queryset: missing, as the admin says
    assert "trainee_b" not in response.content.decode()
    client.force_login(cast.staff)
    assert "trainee_b" in client.get("/admin/tags/traineetag/").content.decode()


def test_it_shows_the_full_history_in_the_admin(client, cast, tags):
    tag = tags.get(tag="prioritizes_relational")
    client.force_login(cast.supervisor_a)
    page = client.get(f"/admin/tags/traineetag/{tag.pk}/change/").content.decode()
    for text in (
        "관계에 집중하겠다 0",
        "관계에 집중하겠다 1",
        "관계 비율 낮은 회기",
        "서로 다른 두 회기",
        "첫 근거 기록",
    ):
        assert text in page


def _form_data(html: str) -> dict:
    """The inputs the admin change page would submit as they are."""
    data = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        if not name or 'type="checkbox"' in tag or 'type="submit"' in tag:
            continue
        value = re.search(r'value="([^"]*)"', tag)
        data[name.group(1)] = value.group(1) if value else ""
    return data


def test_it_lets_the_supervisor_add_evidence_and_contradictions_in_the_admin(client, cast, tags, sessions):
    tag = tags.get(tag="skips_risk_assessment")
    path = f"/admin/tags/traineetag/{tag.pk}/change/"
    client.force_login(cast.supervisor_a)
    data = _form_data(client.get(path).content.decode())
    n_e, n_c = data["evidence-INITIAL_FORMS"], data["contradictions-INITIAL_FORMS"]
    data.update({f"evidence-{n_e}-event": "관리 화면에서 더한 근거", f"evidence-{n_e}-session": sessions[2].pk})
    response = client.post(path, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    tag.refresh_from_db()
    assert tag.status == Status.HYPOTHESIS
    piece = tag.evidence.get(event="관리 화면에서 더한 근거")
    assert piece.recorded_by == cast.supervisor_a and piece.origin == "supervisor"
    assert tag.transitions.filter(to_status="hypothesis", recorded_by=cast.supervisor_a).exists()

    data = _form_data(client.get(path).content.decode())
    n_c = data["contradictions-INITIAL_FORMS"]
    data.update({f"contradictions-{n_c}-event": "위험사정을 함", f"contradictions-{n_c}-severity": "high"})
    assert client.post(path, data).status_code == 302
    tag.refresh_from_db()
    assert tag.status == Status.OBSERVATION
    assert TagContradiction.objects.get(event="위험사정을 함").recorded_by == cast.supervisor_a


def test_it_rejects_a_foreign_session_in_the_admin(client, cast, tags):
    other = make_sessions(cast.trainee_b, 1)[0]
    tag = tags.get(tag="skips_risk_assessment")
    path = f"/admin/tags/traineetag/{tag.pk}/change/"
    client.force_login(cast.supervisor_a)
    data = _form_data(client.get(path).content.decode())
    n = data["evidence-INITIAL_FORMS"]
    data.update({f"evidence-{n}-event": "남의 회기", f"evidence-{n}-session": other.pk})
    response = client.post(path, data)
    # Outside the supervisor's reach the session is not even a choice (nor is it rendered back).
    assert response.status_code == 200
    evidence = next(f for f in response.context["inline_admin_formsets"] if f.formset.prefix == "evidence")
    assert "session" in evidence.formset.forms[int(n)].errors
    assert other.code not in response.content.decode()
    assert not TagEvidence.objects.filter(event="남의 회기").exists()


def test_it_offers_staff_the_history_but_no_additions(client, cast, tags):
    tag = tags.get(tag="skips_risk_assessment")
    client.force_login(cast.staff)
    page = client.get(f"/admin/tags/traineetag/{tag.pk}/change/").content.decode()
    assert "내부 관찰 근거" in page
    assert 'name="evidence-0-event"' not in page and 'name="evidence-1-event"' not in page


def test_it_lists_tags_in_the_admin_in_a_constant_number_of_queries(client, cast):
    def fill(count):
        TraineeTag.objects.all().delete()
        made = 0
        n = 0
        while made < count:
            trainee = portal_user_create_or_update(
                username=f"trainee_q{n}", role=Role.TRAINEE, supervisor_username="supervisor_a"
            )
            session = make_sessions(trainee, 1, prefix=f"QA{count}_{n}")[0]
            for name in (
                "overuses_relational",
                "underuses_exploratory",
                "rq_below_fair",
                "prioritizes_structuring",
                "skips_risk_assessment",
            )[: count - made]:
                tag_evidence_add(trainee_id=trainee.pk, tag=name, event="근거", session_id=session.pk)
                made += 1
            n += 1

    client.force_login(cast.supervisor_a)
    counts = []
    for size in (10, 50):
        fill(size)
        with CaptureQueriesContext(connection) as queries:
            page = client.get("/admin/tags/traineetag/")
        assert page.status_code == 200 and page.context["cl"].result_count == size
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_admin_names_contradictions_and_transitions_in_korean():
    # The tag's inline rows are headed by these: "[low] …" and "∅ → observation" read as leftover English.
    from supervision.tags.models import ContradictionSeverity, TagContradiction, TagTransition

    contradiction = TagContradiction(severity=ContradictionSeverity.LOW, event="탐색 기법 비율이 목표 범위 안이었음")
    assert str(contradiction) == "낮음 (low) · 탐색 기법 비율이 목표 범위 안이었음"
    assert str(TagTransition(from_status="", to_status=Status.OBSERVATION)) == "처음 → 관찰 (observation)"
    assert str(TagTransition(from_status=Status.OBSERVATION, to_status=Status.HYPOTHESIS)) == (
        "관찰 (observation) → 가설 (hypothesis)"
    )
