"""Request guards shared by every page, the admin and the API."""

from __future__ import annotations

from django.http import HttpResponseBadRequest, JsonResponse

NUL_MESSAGE = "요청에 NUL 문자(\\0)가 들어 있어 처리할 수 없습니다. 입력에서 그 문자를 지우고 다시 보내 주세요."
TO_FIELD = "_to_field"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _carries_nul(values) -> bool:
    return any("\x00" in key or any("\x00" in value for value in values.getlist(key)) for key in values)


class RejectMalformedRequestMiddleware:
    """Refuses with 400 and a Korean message what would otherwise fail deep inside a view with a 500.

    PostgreSQL text cannot hold a NUL character: a path, query string or form field carrying one is
    refused here with 400 and a Korean message, instead of failing inside a query with a 500 wherever a
    view forgot to check. (JSON bodies are checked by the API's serializers.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        carries_nul = (
            "\x00" in request.path
            or _carries_nul(request.GET)
            or (request.method == "POST" and request.content_type in FORM_TYPES and _carries_nul(request.POST))
        )
        if carries_nul:
            return _bad_request(request, NUL_MESSAGE)
        # Django's admin change views look up a field named by `_to_field` when it is present, even empty,
        # and fail with FieldDoesNotExist (500) on `?_to_field=`.
        if request.path.startswith("/admin/") and request.GET.get(TO_FIELD, None) == "":
            return _bad_request(request, "_to_field 값이 비어 있습니다.")
        return self.get_response(request)


def _bad_request(request, message: str):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=400)
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
