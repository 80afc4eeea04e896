"""The trainee's transcript marks each disclosure, supportively, with the supervisor's note once reviewed."""

from __future__ import annotations

import pytest

from supervision.safety.selectors import safety_events
from supervision.safety.services import safety_event_review
from supervision.safety.tests.factories import script

pytestmark = pytest.mark.django_db

SI, SH, RA = "suicidal_ideation_admit", "self_harm_disclosure", "risk_assessment"


def test_it_marks_disclosures_and_shows_the_supervisors_note(client, cast):
    session = script("SP01", f"K:{SI}", f"C:{RA}", f"K:{SH}", "C", "C")
    unanswered = safety_events(cast.supervisor_a).select_related("turn__session").get(answered=False)
    safety_event_review(
        event=unanswered, note="다음 회기 전에 위험사정 질문을 함께 연습해요.", reviewed_by=cast.supervisor_a
    )
    client.force_login(cast.trainee_a)
    page = client.get(f"/feedback/sessions/{session.pk}/").content.decode()
    assert page.count('class="safety-moment ') == 2
    assert "이어진 SP01-C-001에서 위험을 직접 확인했어요." in page
    assert "뒤이은 상담자 발화 2개 안에서는 위험사정 질문을 찾지 못했어요." in page
    assert "슈퍼바이저 메모 · supervisor_a" in page and "위험사정 질문을 함께 연습해요." in page
    for alarming in ("위험!", "경고", "실패"):
        assert alarming not in page


def test_another_trainee_sees_nothing_of_it(client, cast):
    session = script("SP02", f"K:{SI}", "C")
    client.force_login(cast.trainee_b)
    assert client.get(f"/feedback/sessions/{session.pk}/").status_code == 404
