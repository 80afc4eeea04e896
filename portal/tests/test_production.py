"""CONTRACT §1 "Production": gunicorn serves the portal and its static files with DJANGO_DEBUG=0 after
collectstatic, and GET /healthz answers a load balancer. Real processes: gunicorn, a private redis-server."""

from __future__ import annotations

import re

import pytest

from portal.testing import free_port
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def test_gunicorn_serves_pages_and_compressed_hashed_static_files_with_debug_off(
    cast, production_server, private_redis
):
    server = production_server(redis_url=private_redis.url)
    page = server.request("GET", "/accounts/login/")
    assert page.status == 200, server.log()
    assert "로그인" in page.body.decode()
    # The page links the hashed copy that collectstatic made; it is served for a year, compressed.
    css = re.search(r'href="(/static/portal\.[0-9a-f]{12}\.css)"', page.body.decode())
    assert css, page.body.decode()
    static = server.request("GET", css.group(1), headers={"Accept-Encoding": "gzip"})
    assert static.status == 200
    assert static.headers["content-encoding"] == "gzip"
    assert "immutable" in static.headers["cache-control"]
    # The admin's and Swagger UI's own files come from the same process.
    assert server.request("GET", "/static/admin/css/base.css").status == 200
    assert server.request("GET", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js").status == 200
    assert server.request("GET", "/static/no-such-file.css").status == 404


def test_a_trainee_logs_in_and_browses_behind_gunicorn(cast, production_server, private_redis):
    from portal.testing import Browser, production_password

    production_password(cast.trainee_a, PASSWORD)
    server = production_server(redis_url=private_redis.url)
    browser = Browser(server)
    assert browser.log_in("trainee_a", PASSWORD).status == 302
    assert browser.get("/feedback/").status == 200
    assert browser.get("/api/v1/sessions/").status == 200


def test_plain_http_is_sent_to_https_but_healthz_answers_the_load_balancer(production_server, private_redis):
    server = production_server(redis_url=private_redis.url)
    assert server.request("GET", "/accounts/login/", https=False).status == 301
    health = server.request("GET", "/healthz", https=False)
    assert health.status == 200
    assert health.json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}
    assert "no-cache" in health.headers["cache-control"]


def test_healthz_names_redis_when_it_is_down_and_recovers_when_it_is_back(production_server, private_redis):
    server = production_server(redis_url=private_redis.url)
    assert server.request("GET", "/healthz").status == 200
    private_redis.kill()
    down = server.request("GET", "/healthz")
    assert down.status == 503
    # Nothing but the two names and their states: no host, port, version or error text.
    assert down.json() == {"status": "error", "checks": {"database": "ok", "redis": "error"}}
    private_redis.start()
    assert server.request("GET", "/healthz").json()["checks"]["redis"] == "ok"


def test_healthz_names_the_database_when_it_does_not_answer(production_server, private_redis):
    nowhere = f"postgres://postgres@127.0.0.1:{free_port()}/portal"
    server = production_server(redis_url=private_redis.url, database_url=nowhere)
    down = server.request("GET", "/healthz")
    assert down.status == 503
    assert down.json() == {"status": "error", "checks": {"database": "error", "redis": "ok"}}
    assert b"5432" not in down.body and b"postgres" not in down.body


def test_healthz_needs_no_log_in_and_says_nothing_else(client):
    response = client.get("/healthz", secure=True)
    assert response.status_code == 200
    assert set(response.json()) == {"status", "checks"}
    assert client.post("/healthz", secure=True).status_code == 405
