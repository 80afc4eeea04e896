"""The browsable API's page titles and descriptions in Korean (REST_FRAMEWORK's VIEW_NAME_FUNCTION and
VIEW_DESCRIPTION_FUNCTION). DRF titles a page by its class name ("Session List") and describes it by its
docstring, which is written for developers in English: a view's ``title_ko`` names it instead, with 목록 on a
viewset's list, and its ``description_ko`` (or nothing) describes it. The OpenAPI schema keeps its own texts."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import mark_safe
from rest_framework.views import get_view_name as drf_view_name

_SUFFIX_KO = {"List": "목록", "Instance": ""}


def view_name(view) -> str:
    title = getattr(view, "title_ko", None)
    if title is None:
        return drf_view_name(view)
    suffix = _SUFFIX_KO.get(getattr(view, "suffix", None) or "", "")
    return f"{title} {suffix}".strip()


def view_description(view, html: bool = False) -> str:
    text = getattr(view, "description_ko", "")
    return mark_safe(f"<p>{escape(text)}</p>") if html and text else text
