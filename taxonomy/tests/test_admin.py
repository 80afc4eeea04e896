import pytest
from django.contrib.auth import get_user_model

from taxonomy.models import LabelAlias, TechniqueLabelDef


@pytest.fixture
def admin_client_superuser(client, db):
    user = get_user_model().objects.create_superuser("root_admin", password="test-pass-2026")
    client.force_login(user)
    return client


def test_it_offers_no_rename_through_the_admin(admin_client_superuser):
    label = TechniqueLabelDef.objects.get(code="empathy")
    url = f"/admin/taxonomy/techniquelabeldef/{label.pk}/change/"
    page = admin_client_superuser.get(url)
    assert page.status_code == 200
    assert b'name="code"' not in page.content
    admin_client_superuser.post(url, {"code": "empathy_renamed", "ko": "x", "category": "RELATIONAL"})
    assert TechniqueLabelDef.objects.filter(code="empathy").exists()
    assert not TechniqueLabelDef.objects.filter(code="empathy_renamed").exists()


def test_it_offers_no_delete_through_the_admin(admin_client_superuser):
    label = TechniqueLabelDef.objects.get(code="humor")
    response = admin_client_superuser.post(f"/admin/taxonomy/techniquelabeldef/{label.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    response = admin_client_superuser.post(
        "/admin/taxonomy/techniquelabeldef/", {"action": "delete_selected", "_selected_action": [label.pk]}
    )
    assert TechniqueLabelDef.objects.filter(code="humor").exists()


def test_it_lets_staff_curate_an_alias_and_rejects_a_duplicate(admin_client_superuser):
    label = TechniqueLabelDef.objects.get(code="reflection")
    url = "/admin/taxonomy/labelalias/add/"
    response = admin_client_superuser.post(url, {"axis": "technique", "alias": "감정 되비추기", "technique": label.pk})
    assert response.status_code == 302
    assert LabelAlias.objects.get(alias="감정 되비추기").normalized == "감정되비추기"
    response = admin_client_superuser.post(url, {"axis": "technique", "alias": "감정되비추기 ", "technique": label.pk})
    assert response.status_code == 200
    assert "이미 같은 표기" in response.content.decode()
