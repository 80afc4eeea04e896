"""The API's exception handler: DRF's own, with every error body in Korean.

DRF translates its messages (LANGUAGE_CODE="ko"), but a ``Http404`` raised by ``get_object_or_404``
carries Django's English "No Session matches the given query."; it becomes DRF's translated NotFound.
"""

from __future__ import annotations

from django.http import Http404
from rest_framework import exceptions
from rest_framework.views import exception_handler


def korean_exception_handler(exc, context):
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    return exception_handler(exc, context)
