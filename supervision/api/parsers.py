"""JSON parsing that turns every malformed body into a 400, never a 500."""

import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from supervision.rules import first_unencodable


class SafeJSONParser(JSONParser):
    """DRF's parser lets RecursionError (deeply nested JSON) escape as a server error; this one does not. Nor
    does it let a lone surrogate ("\\ud800") through: no field could store it, and an error message that
    quotes it (a choice field's) could not be rendered."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON 본문의 중첩이 너무 깊습니다.") from None
        except ParseError as error:
            # DRF words this in English with the decoder's position; the API answers in Korean only.
            position = _position(str(error.detail))
            raise ParseError(f"요청 본문이 올바른 JSON이 아닙니다{position}.") from None
        if problem := first_unencodable(data):
            raise ParseError(f"요청 본문에 {problem}")
        return data


def _position(message: str) -> str:
    """The decoder's "line 3 column 7" as " (3행 7열)", so the caller still learns where the body broke."""
    found = re.search(r"line (\d+) column (\d+)", message)
    return f" ({found[1]}행 {found[2]}열)" if found else ""
