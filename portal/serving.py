"""Checks made when a web server loads the portal (``portal.wsgi``/``portal.asgi``, and so runserver)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

REFUSAL = (
    "DJANGO_SECRET_KEY가 설정되지 않았습니다: DJANGO_DEBUG=0에서는 저장소에 있는 개발용 키로 서비스하지 않습니다. "
    "DJANGO_SECRET_KEY에 길고 무작위한 값을 설정하세요 (DJANGO_SECRET_KEY is not set; the development key "
    "serves DJANGO_DEBUG=1 only)."
)


def refuse_the_development_key() -> None:
    """Anyone who reads the repository knows the development key and could forge sessions and password
    reset links with it, so a server without DEBUG does not start on it. Management commands serve no
    requests and still run without a key (``check --deploy`` reports it as portal.E001)."""
    if not settings.DEBUG and settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY:
        raise ImproperlyConfigured(REFUSAL)
