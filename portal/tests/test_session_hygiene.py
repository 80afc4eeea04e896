"""Shared computers: an idle session ends after SESSION_IDLE_MINUTES; supervisors and staff need passwords of
12 characters or more; cookies are secure in production."""

from __future__ import annotations

import datetime
import subprocess
import sys

import pytest
import time_machine
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from portal.testing import PRODUCTION_SECRET_KEY, ROOT
from supervision.testing import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_session_left_idle_is_logged_out_and_told_why(cast, settings):
    settings.SESSION_IDLE_MINUTES = 60
    client = Client()
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        assert client.post("/accounts/login/", {"username": "trainee_a", "password": PASSWORD}).status_code == 302
        assert client.get("/feedback/").status_code == 200
    with time_machine.travel(start + datetime.timedelta(minutes=50), tick=False):
        assert client.get("/feedback/").status_code == 200  # active: the clock starts again
    with time_machine.travel(start + datetime.timedelta(minutes=100), tick=False):
        assert client.get("/feedback/").status_code == 200  # 50 minutes since the last page
    with time_machine.travel(start + datetime.timedelta(minutes=161), tick=False):
        response = client.get("/feedback/")
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
        page = client.get(response["Location"])
        assert "60분 동안 사용하지 않아 로그아웃되었습니다" in page.content.decode()


def test_token_clients_are_not_affected_by_the_idle_timeout(cast):
    from rest_framework.test import APIClient

    client = APIClient()
    token = client.post("/api/v1/auth/token/", {"username": "trainee_a", "password": PASSWORD}, format="json")
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    with time_machine.travel(timezone.now() + datetime.timedelta(hours=5), tick=False):
        assert client.get("/api/v1/sessions/").status_code == 200


@pytest.mark.parametrize(
    ("who", "password", "ok"),
    [
        ("supervisor_a", "short-pw-11", False),
        ("supervisor_a", "long-enough-pw-12", True),
        ("staff", "short-pw-11", False),
        ("trainee_a", "tr-pw-9x", True),
        ("trainee_a", "short7x", False),
    ],
)
def test_supervisors_and_staff_need_twelve_characters(cast, who, password, ok):
    user = getattr(cast, who)
    if ok:
        validate_password(password, user)
    else:
        with pytest.raises(ValidationError, match="최소"):
            validate_password(password, user)


def test_create_portal_user_refuses_a_short_password_for_a_supervisor(cast):
    with pytest.raises(CommandError, match="12자"):
        call_command("create_portal_user", "new_supervisor", "--role", "supervisor", "--password", "short-pw-11")
    call_command("create_portal_user", "new_trainee", "--role", "trainee", "--password", "tr-pw-9x")
    call_command("create_portal_user", "new_supervisor", "--role", "supervisor", "--password", "long-enough-pw-12")


def test_production_cookies_are_secure_and_http_only():
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, "
        "s.SESSION_COOKIE_SAMESITE, s.SESSION_EXPIRE_AT_BROWSER_CLOSE, s.SESSION_COOKIE_AGE)"
    )
    env = {"DJANGO_SETTINGS_MODULE": "portal.settings", "DJANGO_DEBUG": "0", "PATH": "/usr/bin:/bin"}
    env["DJANGO_SECRET_KEY"] = PRODUCTION_SECRET_KEY
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["True", "True", "True", "Lax", "True", "7200"]
