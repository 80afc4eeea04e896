"""JSON parsing that turns every malformed body into a 400, never a 500."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class SafeJSONParser(JSONParser):
    """DRF's parser lets RecursionError (deeply nested JSON) escape as a server error; this one does not."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON 본문의 중첩이 너무 깊습니다.") from None
