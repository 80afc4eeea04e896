"""Changing one's own password: the new password's problems are said under 「새 비밀번호」, mismatch or not."""

import pytest

from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/accounts/password_change/", "/admin/password_change/"])
def test_a_weak_new_password_is_refused_under_the_new_password_even_when_the_two_differ(client, cast, url):
    user = cast.supervisor_a if url.startswith("/admin/") else cast.trainee_a
    client.force_login(user)
    for second in ("1234", "12345"):  # the same, then different
        response = client.post(url, {"old_password": PASSWORD, "new_password1": "1234", "new_password2": second})
        errors = response.context["form"].errors
        assert response.status_code == 200
        assert any("짧습니다" in e for e in errors["new_password1"]), (second, errors)
        assert "new_password2" not in errors  # no mismatch about a password that cannot be used anyway
    page = response.content.decode()
    if url.startswith("/accounts/"):  # the trainee's page: the messages under the field they concern
        assert "짧습니다" in page.split('id="id_new_password1-errors"', 1)[1].split("</ul>", 1)[0]
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


def test_a_good_password_typed_differently_twice_is_refused_as_a_mismatch(client, cast):
    client.force_login(cast.trainee_a)
    new = "Another-long-pass-2026"
    response = client.post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new + "x"},
    )
    errors = response.context["form"].errors
    assert list(errors) == ["new_password2"] and "일치하지 않습니다" in errors["new_password2"][0]
    response = client.post(
        "/accounts/password_change/", {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    )
    assert response.status_code == 302
