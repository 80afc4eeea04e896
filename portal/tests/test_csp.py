"""CONTRACT §1: every page sends a Content-Security-Policy whose script-src has no 'unsafe-inline' — and the
pages need none: no inline script, no event-handler attribute, no inline style (the browser tests watch
Chromium for violations on the same pages)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from supervision.feedback.tests.factories import make_session
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
STYLE_ATTRIBUTE = re.compile(r"<[^>]+\sstyle\s*=", re.I)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.I)


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def assert_strict(response):
    directives = policy(response)
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]


def assert_no_inline_code(html: str, where: str, *, styles: bool = True):
    assert not INLINE_SCRIPT.search(html), f"{where}: {INLINE_SCRIPT.search(html).group(0)}"
    assert not HANDLER.search(html), f"{where}: {HANDLER.search(html).group(0)}"
    if styles:
        for pattern in (STYLE_ATTRIBUTE, STYLE_ELEMENT):
            match = pattern.search(html)
            assert not match, f"{where}: {html[max(0, match.start() - 80) : match.end() + 80]}"


def test_anonymous_pages_and_errors_send_the_policy(client):
    for path in ("/accounts/login/", "/admin/login/", "/no-such-page/", "/healthz", "/api/v1/sessions/"):
        response = client.get(path, secure=True)
        assert_strict(response)
        assert_no_inline_code(response.content.decode(), path)


def test_trainee_pages_have_no_inline_script_or_style(cast):
    session = make_session("CSP_T1", 12, trainee="trainee_a")
    client = Client()
    assert client.login(username="trainee_a", password=PASSWORD)
    for path in ("/feedback/", f"/feedback/sessions/{session.pk}/"):
        response = client.get(path, secure=True)
        assert response.status_code == 200
        assert_strict(response)
        assert_no_inline_code(response.content.decode(), path)


def test_admin_pages_of_our_own_have_no_inline_script_or_style(cast):
    session = make_session("CSP_A1", 12, trainee="trainee_a")
    client = Client()
    assert client.login(username="supervisor_a", password=PASSWORD)
    pages = [
        reverse("admin:supervision_session_change", args=[session.pk]),
        reverse("admin:gauge_gaugesnapshot_changelist"),
        reverse("admin:supervision_turn_changelist"),
    ]
    for path in pages:
        response = client.get(path, secure=True)
        assert response.status_code == 200, path
        assert_strict(response)
        assert_no_inline_code(response.content.decode(), path)


def test_swagger_ui_loads_its_start_up_script_as_a_file(cast):
    client = Client()
    assert client.login(username="supervisor_a", password=PASSWORD)
    page = client.get("/api/docs/", secure=True)
    assert page.status_code == 200
    assert_strict(page)
    html = page.content.decode()
    assert_no_inline_code(html, "/api/docs/")
    script = re.search(r'<script src="(/api/docs/\?[^"]*script=[^"]*)"', html)
    assert script, html
    start_up = client.get(script.group(1).replace("&amp;", "&"), secure=True)
    assert start_up.status_code == 200
    assert start_up["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in start_up.content


def test_the_palette_is_a_stylesheet(client):
    response = client.get(reverse("palette-css"), secure=True)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
    assert b".chip.cat-RELATIONAL{" in response.content
