"""The annotation rules, each in one place. The importer, the admin forms and the API all call these.

Every function returns problems as Korean messages (or ``None``/empty when the input is fine); callers
attach the row and column. Nothing here touches the database.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from taxonomy import catalogue

# The one definition of a session code (CONTRACT §2); the database check constraint uses it too.
_SESSION_CODE_CHARS = r"[A-Za-z0-9_.]+"
SESSION_CODE_PATTERN = rf"^{_SESSION_CODE_CHARS}$"
SESSION_CODE = re.compile(SESSION_CODE_PATTERN)
UTTERANCE_ID = re.compile(rf"^(?P<session>{_SESSION_CODE_CHARS})-(?P<letter>[CK])-(?P<n>[0-9]{{3,}})$")
SYNTHETIC_SOURCE = re.compile(r"^[A-Za-z0-9_.\-]*_synthetic$")
INTENT_DEVIATION_KEYS = ("dimension", "expected", "actual", "severity")
MAX_SHORT_FIELD = 200

# Personal identifiers (privacy guard). Digits next to Hangul are not a regex word boundary, so the
# patterns use digit look-arounds instead of \b.
_PERSONAL_IDENTIFIERS = (
    ("주민등록번호", re.compile(r"(?<!\d)\d{6}\s?-\s?[1-8]\d{6}(?!\d)")),
    ("전화번호", re.compile(r"(?<!\d)(?:\+82[\s-]?|0)1[016789][\s.-]?\d{3,4}[\s.-]?\d{4}(?!\d)")),
    ("전화번호", re.compile(r"(?<!\d)0(?:2|[3-6][1-5]|70)[\s.-]?\d{3,4}[\s.-]?\d{4}(?!\d)")),
    ("이메일 주소", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")),
)
# Each pattern above needs a (Unicode) digit or an "@"; text without either cannot match any of them.
_MAY_HOLD_IDENTIFIER = re.compile(r"[\d@]")
# A turn whose text is only nonverbal cues such as "(침묵)" or "[한숨]" carries no words.
_ONLY_CUES = re.compile(r"^(?:\s*[(\[（][^)\]）]*[)\]）])*\s*$")


@dataclass(frozen=True)
class UtteranceId:
    session: str
    letter: str
    number: int


def parse_utterance_id(value: str) -> UtteranceId | None:
    match = UTTERANCE_ID.match(value)
    if not match:
        return None
    return UtteranceId(match["session"], match["letter"], int(match["n"]))


def utterance_id_problem(utterance_id: str, *, speaker: str | None, session: str | None) -> str | None:
    """``{session}-{C|K}-{n}``, the letter matching the speaker and the session matching the line's."""
    parsed = parse_utterance_id(utterance_id)
    if parsed is None:
        return (
            f"발화 ID '{utterance_id}'의 형식이 잘못되었습니다. '회기-C-001'(상담자) 또는 "
            "'회기-K-001'(내담자)처럼 적어 주세요."
        )
    if speaker is not None:
        expected = catalogue.SPEAKER_LETTERS.get(speaker)
        if expected and parsed.letter != expected:
            return f"발화 ID '{utterance_id}'의 화자 글자 '{parsed.letter}'가 화자 {speaker}와 맞지 않습니다(‘{expected}’여야 함)."
    if session is not None and parsed.session != session:
        return f"발화 ID '{utterance_id}'의 회기 부분 '{parsed.session}'이 회기 코드 '{session}'와 다릅니다."
    return None


def session_code_problem(code: str) -> str | None:
    if not SESSION_CODE.match(code) or len(code) > 64:
        return f"회기 코드 '{code}'에는 영문자, 숫자, '_', '.'만 쓸 수 있습니다(64자 이내)."
    return None


def attach_problems(speaker: str, *, techniques: Iterable[str], client_states: Iterable[str]) -> list[tuple[str, str]]:
    """Techniques only on counselor turns, client states only on client turns: ``[(field, message)]``."""
    problems = []
    techniques, client_states = list(techniques), list(client_states)
    if speaker != catalogue.COUNSELOR and techniques:
        named = ", ".join(techniques)
        problems.append(("techniques", f"기법은 상담자 발화에만 붙일 수 있습니다(이 발화에 붙은 기법: {named})."))
    if speaker != catalogue.CLIENT and client_states:
        named = ", ".join(client_states)
        problems.append(
            ("client_states", f"내담자 상태는 내담자 발화에만 붙일 수 있습니다(이 발화에 붙은 상태: {named}).")
        )
    return problems


def seq_problem(seqs: Iterable[int]) -> str | None:
    """A session's seqs run 0..N-1 with no gap and no repeat."""
    counts = Counter(seqs)
    total = sum(counts.values())
    repeated = sorted(s for s, c in counts.items() if c > 1)
    missing = sorted(set(range(total)) - set(counts))
    beyond = sorted(s for s in counts if s >= total)
    parts = []
    if repeated:
        parts.append(f"중복된 순서 {_short(repeated)}")
    if missing:
        parts.append(f"빠진 순서 {_short(missing)}")
    if beyond:
        parts.append(f"범위를 벗어난 순서 {_short(beyond)}")
    if parts:
        return "회기의 순서(seq)는 0부터 빈틈과 중복 없이 이어져야 합니다: " + ", ".join(parts) + "."
    return None


def _short(values: list[int], limit: int = 5) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f" 외 {len(values) - limit}개" if len(values) > limit else "")


def is_wordless(text: str) -> bool:
    """Empty text, or text that is only nonverbal cues such as '(침묵)'."""
    return bool(_ONLY_CUES.match(text or ""))


def corrected_dialog_act(text: str, act: str | None) -> tuple[str | None, str | None]:
    """The silence correction of the dialog-act document: real words tagged ``silence`` become ``null``.

    Returns the act to store and, when it was corrected, a warning for the import report.
    """
    if act == catalogue.SILENCE_ACT and not is_wordless(text):
        return catalogue.NOT_UNDERSTOOD_ACT, (
            f"말이 있는 발화에 대화행위 '{catalogue.SILENCE_ACT}'가 붙어 '{catalogue.NOT_UNDERSTOOD_ACT}'(이해 불가)로 고쳤습니다."
        )
    return act, None


def is_no_input(text: str, act: str | None) -> bool:
    """A client turn without input: act ``silence``, or no words at all (dialog-act rules)."""
    return act == catalogue.SILENCE_ACT or is_wordless(text)


def no_input_sql(text_column: str, act_column: str) -> tuple[str, list[str]]:
    """``is_no_input`` as a PostgreSQL boolean expression over two column references, with its parameters.

    The same regular expression serves both (PostgreSQL's ARE syntax accepts the pattern unchanged);
    ``supervision/gauge/tests/test_no_input_sql.py`` checks that the two agree on every edge case.
    """
    return (
        f"(COALESCE({act_column} = %s, false) OR COALESCE({text_column}, '') ~ %s)",
        [catalogue.SILENCE_ACT, _ONLY_CUES_SQL],
    )


# PostgreSQL's \s depends on the server locale and misses e.g. U+00A0, which Python's \s matches; the
# SQL pattern spells out every character Python counts as whitespace instead (none lies above U+3000).
_PYTHON_WHITESPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
_ONLY_CUES_SQL = _ONLY_CUES.pattern.replace(r"\s", f"[{_PYTHON_WHITESPACE}]")


def source_problem(source: str) -> str | None:
    """The privacy guard on provenance: only synthetic material is ever loaded."""
    if not SYNTHETIC_SOURCE.match(source or "") or len(source) > 100:
        return (
            f"출처 '{source}'가 합성 자료임을 밝히지 않습니다. 합성 자료만 올릴 수 있으며 출처는 "
            "'_synthetic'으로 끝나야 합니다(예: 0615_synthetic)."
        )
    return None


# C0 controls but tab and line breaks, DEL and C1 controls, and the bidi embeddings, overrides and isolates:
# stored, they ring, hide or reverse text on the pages ("뒤집힘" shown as "힘집뒤"). NUL has its own message
# (the importer's; Django forms and DRF refuse it before any rule is asked).
_FORBIDDEN_CHARACTER = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


# Half of a UTF-16 surrogate pair on its own: a JSON file or request can spell one ("\\ud800"), but it is no
# character, and no UTF-8 text (the database, a page, the model's reading) can hold it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unencodable_problem(text: str) -> str | None:
    """A lone surrogate, refused wherever text is read: stored, it failed the whole write."""
    found = _LONE_SURROGATE.search(text or "")
    if found is None:
        return None
    return (
        f"짝이 없는 유니코드 서로게이트(U+{ord(found.group()):04X})가 들어 있습니다. 글자가 아니어서 저장할 수 "
        "없습니다. JSON의 \\u 이스케이프를 확인해 주세요."
    )


# A JSONL line that cannot be read at all has no field to blame. The machine outputs (CLI, API) name the line's
# identity column, ``utterance_id``, as CONTRACT §2/§3 ask for a column; the admin says 「줄 전체」 instead.
UNREADABLE_UTF8_LINE = "UTF-8로 읽을 수 없는 줄입니다."
NOT_AN_OBJECT_LINE = "줄마다 JSON 객체 하나가 있어야 합니다."
_UNREADABLE_JSON_LINE = "JSON으로 읽을 수 없는 줄입니다"


def unreadable_json_problem(error: Exception) -> str:
    """Why a JSONL line could not be read, in Korean and with where to look (not the parser's class name)."""
    if isinstance(error, json.JSONDecodeError):
        written = error.doc.rstrip()  # the line's own text: its newline made a cut-off line's error "line 2, column 1"
        if error.pos >= len(written):
            return f"{_UNREADABLE_JSON_LINE}: 줄이 끝났는데 객체가 닫히지 않았습니다 (빠진 }}, ] 또는 따옴표를 확인해 주세요)."
        return (
            f"{_UNREADABLE_JSON_LINE}: {error.pos + 1}번째 글자 근처에서 문법이 어긋납니다"
            " (따옴표, 쉼표, 중괄호를 확인해 주세요)."
        )
    return f"{_UNREADABLE_JSON_LINE}: 괄호가 너무 깊게 겹쳐 있습니다."


def is_whole_line_problem(message: str) -> bool:
    """Whether an import error concerns a JSONL line as a whole rather than one of its fields."""
    return message in (UNREADABLE_UTF8_LINE, NOT_AN_OBJECT_LINE) or message.startswith(_UNREADABLE_JSON_LINE)


def may_hold_unencodable(json_text: str) -> bool:
    """Whether parsing ``json_text`` can give a lone surrogate: only through a ``\\u`` escape or a surrogate in
    the text itself. Lets a reader skip ``first_unencodable``'s walk over every string of every line it
    parses (18 % of ``audit_trajectories --input``)."""
    return "\\u" in json_text or _LONE_SURROGATE.search(json_text) is not None


def first_unencodable(value: object) -> str | None:
    """``unencodable_problem`` of the first string in a parsed JSON value (keys included), walked without
    recursion (the value may be as deep as the parser allowed)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if problem := unencodable_problem(item):
                return problem
        elif isinstance(item, dict):
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return None


def character_problem(text: str) -> str | None:
    """Control and bidi-override characters and lone surrogates are refused in every text a person or a file
    gives the portal."""
    if problem := unencodable_problem(text):
        return problem
    found = _FORBIDDEN_CHARACTER.search(text or "")
    if found is None:
        return None
    return (
        f"제어 문자 또는 글자 방향을 바꾸는 문자(U+{ord(found.group()):04X})가 들어 있습니다. "
        "화면에서 글자가 숨거나 뒤집혀 보이므로 쓸 수 없습니다. 지우고 다시 적어 주세요."
    )


def personal_identifier_problem(text: str) -> str | None:
    """The privacy guard on content: no resident registration numbers, phone numbers or e-mail addresses."""
    if not _MAY_HOLD_IDENTIFIER.search(text or ""):
        return None  # every pattern needs a digit (numbers) or an @ (addresses): one scan instead of four
    for kind, pattern in _PERSONAL_IDENTIFIERS:
        if pattern.search(text or ""):
            return (
                f"개인 식별 정보({kind})로 보이는 내용이 있습니다. 합성 자료에서도 실제 형식의 {kind}는 쓸 수 없습니다."
            )
    return None


def nonverbal_problem(value: object) -> str | None:
    """Nonverbal cues are a list of short non-empty strings, e.g. ``["(침묵)", "[한숨]"]``."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        return "비언어 단서는 '(침묵)'처럼 글자로 된 항목의 목록이어야 합니다(한 줄에 하나)."
    if too_long := [item for item in value if len(item) > MAX_SHORT_FIELD]:
        return f"비언어 단서는 항목마다 {MAX_SHORT_FIELD}자 이내여야 합니다('{too_long[0][:20]}…')."
    return None


def turn_content_problems(*, text: str, nonverbal: list[str], dialog_act: str | None) -> list[tuple[str, str]]:
    """What every writer of a turn's words checks (importer and admin): not empty unless silent, and the
    privacy guard on the words and the cues. ``dialog_act`` is the act after the silence correction."""
    problems = []
    if not text.strip() and not nonverbal and dialog_act != catalogue.SILENCE_ACT:
        problems.append(("text", "발화가 비어 있습니다. 침묵이면 대화행위 silence나 비언어 '(침묵)'을 적어 주세요."))
    for field, value in (("text", text), ("nonverbal", " ".join(nonverbal))):
        if problem := personal_identifier_problem(value):
            problems.append((field, problem))
    return problems


def intent_deviation_problems(value: object) -> list[tuple[str, str]]:
    """Shape of a critique's intent deviation: ``{"dimension","expected","actual","severity"}``, all optional.

    ``expected``/``actual`` may be technique codes or free text; ``severity`` is minor/moderate/major.
    Returns ``[(key, message)]``.
    """
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [("intent_deviation", "의도 이탈은 dimension/expected/actual/severity를 담은 객체여야 합니다.")]
    problems = []
    for key in value:
        if key not in INTENT_DEVIATION_KEYS:
            problems.append((str(key), f"알 수 없는 항목 '{key}'입니다(dimension, expected, actual, severity만 허용)."))
    for key in ("dimension", "expected", "actual"):
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            problems.append((key, f"{key}은(는) 문자열이어야 합니다."))
        elif isinstance(item, str) and len(item) > MAX_SHORT_FIELD:
            problems.append((key, f"{key}은(는) {MAX_SHORT_FIELD}자 이내여야 합니다."))
    severity = value.get("severity")
    if severity is not None and severity not in catalogue.CRITIQUE_SEVERITIES:
        problems.append(("severity", f"심각도 '{severity}'는 minor, moderate, major 중 하나여야 합니다."))
    return problems


def comment_kind_problem(kind: object) -> str | None:
    if kind not in catalogue.COMMENT_KIND_CODES:
        return f"논평 종류 '{kind}'는 rationale 또는 critique여야 합니다."
    return None


def comment_author_problem(author: object) -> str | None:
    if author not in catalogue.COMMENT_AUTHORS:
        return f"작성 주체 '{author}'는 ai 또는 supervisor여야 합니다."
    return None


def intent_deviation_kind_problem(kind: object, deviation: object) -> str | None:
    """Dimension, expected, actual and severity belong to critiques only (admin form and API alike)."""
    from supervision.models import CommentKind  # an enum only; models import nothing from here

    if deviation and kind != CommentKind.CRITIQUE:
        return "평가 차원·권장·실제·심각도는 논평(critique)에만 적을 수 있습니다."
    return None
