"""Small things a supervisor meets every day: readable headings, label search order, the saved message
where the eye is, status words in Korean, a favicon."""

import pytest

from supervision.feedback import charts
from supervision.feedback.tests.factories import make_session
from supervision.gauge.services import gauge_compute

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(cast):
    return make_session("POL_A1", 8, trainee="trainee_a", critique_every=0)


def test_admin_headings_read_as_our_own_korean(client, cast, session):
    client.force_login(cast.supervisor_a)
    listing = client.get("/admin/supervision/session/").content.decode()
    assert "회기 목록" in listing and "를(을) 선택" not in listing and "변경할" not in listing
    assert "(으)로" not in listing and "수련생 기준" in listing  # the filter headings
    gauge_compute(day=session.held_on)
    snapshots = client.get("/admin/gauge/gaugesnapshot/").content.decode()
    assert "보기위한" not in snapshots and "검토 지표 스냅숏 목록" in snapshots
    from supervision.gauge.models import GaugeSnapshot

    snapshot = GaugeSnapshot.objects.filter(trainee=cast.trainee_a).first()
    page = client.get(f"/admin/gauge/gaugesnapshot/{snapshot.pk}/change/").content.decode()
    assert "뷰 " not in page and "검토 지표 스냅숏 보기" in page


def test_the_label_autocomplete_lists_korean_name_matches_first(admin_client, session):
    response = admin_client.get(
        "/admin/autocomplete/",
        {"term": "촉진", "app_label": "supervision", "model_name": "turntechnique", "field_name": "label"},
    )
    assert response.status_code == 200
    texts = [item["text"] for item in response.json()["results"]]
    assert texts and "촉진" in texts[0]  # 촉진질문 before 유머, whose definition only mentions 촉진


def test_the_saved_critique_message_shows_beside_its_turn(client, cast, session):
    turn = session.turns.get(seq=2)
    client.force_login(cast.supervisor_a)
    response = client.post(
        f"/admin/supervision/session/{session.pk}/turns/{turn.pk}/comment/",
        {f"turn{turn.pk}-kind": "critique", f"turn{turn.pk}-text": "질문이 빨랐습니다."},
        follow=True,
    )
    html = response.content.decode()
    assert html.count('class="turn-message"') == 1
    at_turn = html.split(f'id="turn-{turn.seq}"', 1)[1].split('<li class="turn ', 1)[0]
    assert "✓ 저장했습니다" in at_turn


def test_pages_and_the_admin_link_a_favicon(client, cast):
    client.force_login(cast.staff)
    for url in ("/feedback/", "/admin/"):
        assert 'rel="icon" href="/static/favicon.svg"' in client.get(url).content.decode(), url


def test_tag_statuses_read_in_korean_for_the_trainee(client, cast, session):
    from supervision.tags.services import tag_evidence_add

    tag_evidence_add(trainee_id=cast.trainee_a.pk, tag="prioritizes_relational", event="관계에 집중", origin="trainee")
    client.force_login(cast.trainee_a)
    page = client.get("/feedback/").content.decode()
    assert "관계에 집중" in page and "(observation)" not in page and "관찰" in page


def test_the_trend_chart_labels_one_date_once():
    svg = charts.trend_svg([{"date": "2026-11-05", "categories": {}}])
    assert svg.count(">2026-11-05<") == 1
    two = charts.trend_svg([{"date": "2026-11-05", "categories": {}}, {"date": "2026-11-12", "categories": {}}])
    assert two.count(">2026-11-05<") == 1 and two.count(">2026-11-12<") == 1


def test_export_screens_and_the_lockout_heading_read_in_korean(client, cast, session):
    client.force_login(cast.staff)
    export = client.get("/admin/supervision/supervisorcomment/export/").content.decode()
    assert "내보낼 항목" in export and "This exporter" not in export and "모두 선택" in export
    # each column: its Korean name, then the header the file carries
    assert "발화 ID (utterance_id)" in export and "작성 시각 (created_at)" in export
    assert "Utterance Id" not in export
    home = client.get("/admin/").content.decode()
    assert "로그인 잠금" in home and "(axes)" not in home and "Access attempts" not in home
