"""Log-in: the Korean session pages and the throttled token endpoint."""

from __future__ import annotations

import itertools

import time_machine
from django.test import Client
from rest_framework.test import APIClient

from supervision.testing import PASSWORD


def test_it_serves_a_korean_login_page_and_logs_in(cast):
    client = Client()
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert "로그인" in page.content.decode()
    response = client.post("/accounts/login/", {"username": "trainee_a", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/api/v1/taxonomy/").status_code == 200


def test_it_says_in_korean_when_the_password_is_wrong(cast):
    page = Client().post("/accounts/login/", {"username": "trainee_a", "password": "wrong"})
    assert page.status_code == 200
    assert "비밀번호가 맞지 않습니다" in page.content.decode()


def test_it_logs_out(cast):
    client = Client()
    client.force_login(cast.trainee_a)
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/api/v1/taxonomy/").status_code == 403


def test_it_sends_anonymous_visitors_of_the_docs_to_the_login_page(cast):
    response = Client().get("/api/docs/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_issues_a_token_that_authenticates(cast):
    client = APIClient()
    response = client.post("/api/v1/auth/token/", {"username": "supervisor_a", "password": PASSWORD}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    assert set(response.json()) == {"token"}
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/v1/sessions/").status_code == 200


def test_it_refuses_a_wrong_password_without_a_token(cast):
    response = APIClient().post("/api/v1/auth/token/", {"username": "supervisor_a", "password": "x"}, format="json")
    assert response.status_code == 400
    assert "token" not in response.json()


def test_it_throttles_the_token_endpoint(cast, settings):
    from rest_framework.throttling import ScopedRateThrottle

    rate = ScopedRateThrottle().parse_rate(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["auth_token"])
    allowed = rate[0]
    client = APIClient()
    # A different username each time: the log-in lockout (per username, portal/tests/test_lockout.py) stays
    # out of the way of the throttle (per address).
    statuses = [
        client.post("/api/v1/auth/token/", {"username": f"guess{n}", "password": "guess"}, format="json").status_code
        for n in range(allowed + 1)
    ]
    assert statuses == [400] * allowed + [429]
    # The right password does not get past the throttle either, and the answer says when to retry.
    response = client.post("/api/v1/auth/token/", {"username": "trainee_a", "password": PASSWORD}, format="json")
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0


def test_it_counts_throttled_requests_in_the_shared_redis_cache(cast):
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    # Throttling must hold across worker processes; the suite runs with REDIS_URL, so the cache is Redis.
    backend = caches["default"]
    assert isinstance(backend, RedisCache)
    APIClient().post("/api/v1/auth/token/", {"username": "trainee_a", "password": "guess"}, format="json")
    assert backend._cache.get_client().keys("*throttle_auth_token*")


_GUESSES = itertools.count()


def _guess(client, **headers):
    # A new username each time, so the per-username log-in lockout never answers before the throttle.
    username = f"guess{next(_GUESSES)}"
    return client.post(
        "/api/v1/auth/token/", {"username": username, "password": "guess"}, format="json", **headers
    ).status_code


def test_a_forged_forwarded_for_header_does_not_escape_the_throttle(cast, settings):
    # No trusted proxy (the default): every request comes from the socket address, whatever XFF says.
    allowed = 10
    client = APIClient()
    statuses = [_guess(client, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}") for n in range(allowed + 1)]
    assert statuses == [400] * allowed + [429]
    response = client.post(
        "/api/v1/auth/token/",
        {"username": "trainee_a", "password": PASSWORD},
        format="json",
        HTTP_X_FORWARDED_FOR="203.0.113.9",
    )
    assert response.status_code == 429


def test_behind_one_trusted_proxy_the_throttle_keys_on_the_address_it_forwards(cast, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    client = APIClient()
    # The proxy appends the real client; eleven different clients are eleven different counters...
    assert {_guess(client, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}") for n in range(11)} == {400}
    # ...and one client is limited whatever it puts in front of the proxy's entry.
    statuses = [_guess(client, HTTP_X_FORWARDED_FOR=f"10.0.0.{n}, 203.0.113.7") for n in range(11)]
    assert statuses[-1] == 429


def _token(client=None, username="trainee_a", password=PASSWORD):
    response = (client or APIClient()).post(
        "/api/v1/auth/token/", {"username": username, "password": password}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


def _status_with(token):
    """200, or 403 for a token that is refused (DRF answers 403: session authentication comes first)."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client.get("/api/v1/sessions/").status_code


def test_a_token_expires_after_its_lifetime_and_log_in_gives_a_new_one(cast, settings):
    settings.API_TOKEN_TTL_HOURS = 24
    with time_machine.travel("2026-12-01 09:00 +0000", tick=False):
        token = _token()
        assert _token() == token  # the same token while it is valid
    with time_machine.travel("2026-12-02 08:59 +0000", tick=False):
        assert _status_with(token) == 200
    with time_machine.travel("2026-12-02 09:01 +0000", tick=False):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        refused = client.get("/api/v1/sessions/")
        assert refused.status_code == 403 and "만료" in refused.json()["detail"]
        renewed = _token()
        assert renewed != token and _status_with(renewed) == 200


def test_log_out_revokes_the_token(cast):
    token = _token()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert _status_with(token) == 403


def test_a_password_change_on_the_page_revokes_the_token(cast):
    token = _token()
    client = Client()
    client.force_login(cast.trainee_a)
    page = client.get("/accounts/password_change/")
    assert page.status_code == 200 and "비밀번호 바꾸기" in page.content.decode()
    new_password = "새-비밀번호-2026-합성"
    response = client.post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": new_password, "new_password2": new_password},
    )
    assert response.status_code == 302 and response["Location"] == "/accounts/password_change/done/"
    assert "비밀번호를 바꿨습니다" in client.get(response["Location"]).content.decode()
    assert _status_with(token) == 403
    assert _token(password=new_password) != token


def test_a_password_change_anywhere_else_revokes_the_token_too(cast):
    token = _token(username="supervisor_a")
    cast.supervisor_a.set_password("관리자가-바꾼-비밀번호-2026")
    cast.supervisor_a.save()
    assert _status_with(token) == 403


def test_the_password_page_explains_a_refused_password_in_korean(cast):
    client = Client()
    client.force_login(cast.trainee_a)
    response = client.post(
        "/accounts/password_change/", {"old_password": "틀림", "new_password1": "1234", "new_password2": "1234"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "기존 비밀번호가 잘못 입력되었습니다" in page or ("비밀번호" in page and 'aria-invalid="true"' in page)
