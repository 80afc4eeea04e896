"""Log-in: the Korean session pages and the throttled token endpoint."""

from __future__ import annotations

from django.test import Client
from rest_framework.test import APIClient

from conftest import PASSWORD


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
    statuses = [
        client.post("/api/v1/auth/token/", {"username": "trainee_a", "password": "guess"}, format="json").status_code
        for _ in range(allowed + 1)
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
