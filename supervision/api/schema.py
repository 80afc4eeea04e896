"""The OpenAPI document's error responses (issue 33): a generated client learns from the schema what the API
answers besides success. Declared once here, as a drf-spectacular post-processing hook, for every operation:
400 (an invalid body or query: field → messages), 401/403 (not logged in, or not allowed; with session
authentication first DRF answers 403 also to anonymous callers), 404 (an object outside the caller's reach,
or a page past the end) and 429 (throttled: the token log-in)."""

from __future__ import annotations

ERROR = {
    "type": "object",
    "description": "오류: 한국어 설명(detail)과, 있으면 기계가 읽는 코드(code).",
    "properties": {"detail": {"type": "string"}, "code": {"type": "string"}},
    "required": ["detail"],
}
VALIDATION_ERROR = {
    "type": "object",
    "description": "입력 오류: 항목 이름(또는 non_field_errors, detail)마다 한국어 메시지 목록.",
    "additionalProperties": True,
}
ERRORS = {
    "400": ("ValidationError", "입력이 규칙에 맞지 않습니다(항목별 메시지)."),
    "401": ("Error", "로그인이 필요합니다(토큰 없음, 만료, 잘못됨)."),
    "403": ("Error", "로그인이 필요하거나 이 요청을 할 권한이 없습니다(잠긴 아이디 포함)."),
    "404": ("Error", "없거나 볼 수 없는 대상입니다(다른 수련생의 것 포함), 또는 없는 페이지입니다."),
    "429": ("Error", "요청이 너무 잦습니다. 잠시 뒤 다시 시도하세요."),
}


def add_error_responses(result, generator, request, public):
    """drf-spectacular ``POSTPROCESSING_HOOKS``: the shared error bodies as components, and the five error
    statuses on every operation that does not declare its own."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR)
    schemas.setdefault("ValidationError", VALIDATION_ERROR)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status, (component, description) in ERRORS.items():
                operation["responses"].setdefault(
                    status,
                    {
                        "description": description,
                        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{component}"}}},
                    },
                )
    return result
