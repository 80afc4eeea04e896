"""CONTRACT §1: with DJANGO_DEBUG=0 and a real secret key, `check --deploy` prints no warning."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_check(**env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_passes_the_deploy_check_with_production_settings():
    result = run_check(
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="a-long-random-production-key-" + "x7Kq2Lm9Pz4Rt8Vw3Yb6Nc1Hd5Jf0Gs" * 2,
        DJANGO_ALLOWED_HOSTS="portal.example.invalid",
    )
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_it_refuses_the_development_key_in_production():
    result = run_check(DJANGO_DEBUG="0")
    assert result.returncode != 0
    assert "portal.E001" in result.stderr


def test_it_fails_loudly_on_a_bad_environment_value():
    result = run_check(DJANGO_DEBUG="maybe")
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be a boolean" in result.stderr
