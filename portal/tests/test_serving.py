"""A web server does not start on the development key when DEBUG is off (the key is in the repository)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_KEY = "a-long-random-production-key-" + "Qz8Lm2Pt7Rw4Yb9Nc3Hd6Jf1Gs5Kx0V" * 2


def load(module: str, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    return subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("module", ["portal.wsgi", "portal.asgi"])
def test_it_refuses_to_serve_without_a_secret_key_when_debug_is_off(module):
    result = load(module, DJANGO_DEBUG="0")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr and "ImproperlyConfigured" in result.stderr


@pytest.mark.parametrize("env", [{"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": PRODUCTION_KEY}, {"DJANGO_DEBUG": "1"}])
def test_it_serves_with_a_real_key_or_in_debug(env):
    result = load("portal.wsgi", **env)
    assert result.returncode == 0, result.stderr


def test_management_commands_still_run_without_a_key():
    # Commands serve no requests; `check --deploy` names the missing key instead (portal.E001).
    base = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env={**base, "DJANGO_DEBUG": "0"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "portal.E001" in result.stderr + result.stdout
