"""Error pages in the users' language, with the portal around them where that is safe (DEBUG off, as in
production): a missing or forbidden page, an expired form (CSRF), and a server error, whose page must render
with no context at all."""

from __future__ import annotations

import pytest
from django.template import loader
from django.test import Client

from supervision.testing import import_session, log_in


def test_a_page_that_is_not_there_or_not_yours_says_so_in_korean(client, cast):
    others = import_session("ERR_B1", 4, trainee="trainee_b")
    log_in(client, cast.trainee_a)
    for url in ("/feedback/sessions/999999/", f"/feedback/sessions/{others.pk}/", "/no-such-page/"):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 404
        assert "<h1>페이지를 찾을 수 없습니다</h1>" in page and 'class="topbar"' in page, url
        assert "trainee_a" in page  # the portal's own header, logged in
        assert "Not Found" not in page


def test_an_expired_form_tells_the_user_to_reload_not_a_csrf_traceback(cast):
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.trainee_a)
    response = client.post("/feedback/comments/read-all/")
    page = response.content.decode()
    assert response.status_code == 403
    assert "보안 확인이 만료되었습니다" in page and "새로 고친 뒤" in page
    assert "Forbidden" not in page and "CSRF verification failed" not in page


@pytest.mark.django_db
def test_the_server_error_page_needs_no_context_or_database():
    page = loader.get_template("500.html").render()
    assert "잠시 문제가 생겼습니다" in page and '<html lang="ko">' in page
    assert "{%" not in page and "{{" not in page
