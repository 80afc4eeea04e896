"""Raw row (a dict of English field names → cell values) → ``TurnRecord``, or every problem with it.

The same parser serves JSONL lines (lists as JSON arrays, ``comments`` as objects) and spreadsheet
rows (lists as ``;``/line-break separated cells, ``rationale``/``critique`` text columns).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.conf import settings

from supervision import rules
from supervision.importing.columns import COMMENT_COLUMNS, COMMENT_FIELD_COLUMNS
from supervision.importing.records import CommentRecord, RowError, TurnRecord
from taxonomy import catalogue, lookup
from taxonomy.lookup import LabelIndex
from taxonomy.normalize import normalize_value

LIST_SEPARATORS = re.compile(r"[;\n\r]+")
REQUIRED = ("utterance_id", "seq", "speaker", "stage", "text", "source")


@dataclass
class ParsedRow:
    record: TurnRecord | None
    errors: list[RowError] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)
    # (session, seq) whenever both could be read, even if another field failed: the seq rule is
    # checked over every row of a session so one run reports every error.
    position: tuple[str, int] | None = None
    # The trainee named on the row, even if another field failed: an unknown trainee is reported in the
    # same pass as every other error.
    trainee: str | None = None


class RowParser:
    def __init__(self, index: LabelIndex) -> None:
        self.index = index
        self.max_chars = settings.IMPORT_MAX_CELL_CHARS
        self._label_cells: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        # The fast path's memos: cells that repeat across a file, each looked up (and checked) once.
        self._speakers: dict[str, str | None] = {}
        self._stages: dict[str, str | None] = {}
        self._acts: dict[str, str | None] = {}
        self._good_sources: set[str] = set()
        self._good_sessions: set[str] = set()
        self._dates: dict[str, datetime.date | None] = {}
        self._cues: dict[str, list[str]] = {}

    def parse_quickly(self, row: int, raw: Mapping[str, object]) -> ParsedRow:
        """``parse``, with a fast path for the common case: a spreadsheet row of text cells that turns out
        valid. Any row the fast path does not accept as it stands (a problem, a warning, an unusual cell
        type) goes through ``parse``, so errors and warnings are always ``parse``'s own."""
        raw = normalize_value(raw)
        record = None if _has_forbidden_character(raw) else self._plain_valid_record(row, raw)
        if record is None:
            return self._parse(row, raw)
        return ParsedRow(record, position=(record.session, record.seq), trainee=record.trainee)

    def _plain_valid_record(self, row: int, raw: Mapping[str, object]) -> TurnRecord | None:
        get = raw.get
        max_chars = self.max_chars
        for value in raw.values():
            if value is not None and (type(value) is not str or len(value) > max_chars):
                return None
        if "comments" in raw:
            return None
        utterance_id = get("utterance_id")
        speaker_raw = get("speaker")
        stage_raw = get("stage")
        seq_raw = get("seq")
        text = get("text")
        source = get("source")
        if not (utterance_id and speaker_raw and stage_raw and seq_raw and source) or text is None:
            return None
        if "\x00" in utterance_id or "\x00" in text or "\x00" in source:
            return None
        utterance_id = utterance_id.strip()
        source = source.strip()
        if not utterance_id or not source:
            return None

        speaker = self._speakers.get(speaker_raw, "")
        if speaker == "":
            speaker = self._speakers[speaker_raw] = None if "\x00" in speaker_raw else lookup.speaker_code(speaker_raw)
        stage = self._stages.get(stage_raw, "")
        if stage == "":
            stage = self._stages[stage_raw] = None if "\x00" in stage_raw else lookup.stage_code(stage_raw)
        if speaker is None or stage is None:
            return None
        seq_text = seq_raw.strip()
        if not (seq_text.isascii() and seq_text.isdigit()):
            return None
        seq = int(seq_text)
        if seq > 10_000_000:
            return None

        match = rules.UTTERANCE_ID.match(utterance_id)
        if match is None or match["letter"] != catalogue.SPEAKER_LETTERS.get(speaker):
            return None
        session = get("session")
        session = session.strip() if session else ""
        if not session:
            session = match["session"]
        elif "\x00" in session or match["session"] != session:
            return None
        if session not in self._good_sessions:
            if rules.session_code_problem(session):
                return None
            self._good_sessions.add(session)
        if source not in self._good_sources:
            if rules.source_problem(source):
                return None
            self._good_sources.add(source)

        techniques = self._known_labels(raw, "techniques")
        client_states = self._known_labels(raw, "client_states")
        if techniques is None or client_states is None:
            return None
        if (techniques and speaker != catalogue.COUNSELOR) or (client_states and speaker != catalogue.CLIENT):
            return None
        cues = get("nonverbal")
        if cues:
            nonverbal = self._cues.get(cues)
            if nonverbal is None:
                nonverbal = [item.strip() for item in LIST_SEPARATORS.split(cues) if item.strip()]
                if len(self._cues) < 10_000:
                    self._cues[cues] = nonverbal
            nonverbal = list(nonverbal)
        else:
            nonverbal = []

        act = None
        act_raw = get("dialog_act")
        if act_raw and not act_raw.isspace():
            act = self._acts.get(act_raw, "")
            if act == "":
                act = self._acts[act_raw] = None if "\x00" in act_raw else lookup.dialog_act_code(act_raw)
            if act is None or act == catalogue.SILENCE_ACT:
                return None  # unknown, or the silence correction's warning: parse() says it
        if not text.strip() and not nonverbal:
            return None
        if rules.personal_identifier_problem(text) or (
            nonverbal and rules.personal_identifier_problem(" ".join(nonverbal))
        ):
            return None

        comments: list[CommentRecord] = []
        for kind in ("rationale", "critique"):
            cell = get(kind)
            if not cell or cell.isspace():
                continue
            if "\x00" in cell or any(column in raw for column in COMMENT_COLUMNS):
                return None  # the optional author/deviation columns are read by parse()
            for line in cell.splitlines():
                line = line.strip()
                if line:
                    if rules.personal_identifier_problem(line):
                        return None
                    comments.append(CommentRecord(kind, line, "supervisor", {}, given=frozenset()))

        trainee = get("trainee")
        if trainee and not trainee.isspace():
            if "\x00" in trainee:
                return None
            trainee = trainee.strip()
        else:
            trainee = None
        held_on = get("held_on")
        if held_on and not held_on.isspace():
            day = self._dates.get(held_on, "")
            if day == "":
                try:
                    day = datetime.date.fromisoformat(held_on.strip())
                except ValueError:
                    day = None
                self._dates[held_on] = day
            if day is None:
                return None
            held_on = day
        else:
            held_on = None
        return TurnRecord(
            row=row,
            session=session,
            utterance_id=utterance_id,
            seq=seq,
            speaker=speaker,
            stage=stage,
            text=text,
            source=source,
            techniques=techniques,
            client_states=client_states,
            nonverbal=nonverbal,
            dialog_act=act,
            comments=comments,
            trainee=trainee,
            held_on=held_on,
        )

    def _known_labels(self, raw: Mapping[str, object], column: str) -> list[str] | None:
        """The codes of a label cell when every item is known (``None`` otherwise: ``parse`` reports it)."""
        cell = raw.get(column)
        if not cell:
            return []
        cached = self._label_cells.get((column, cell))
        if cached is None:
            problems: list[str] = []
            codes = self.labels(raw, column, lambda _column, message: problems.append(message))
            return None if problems else codes
        return None if cached[1] else list(cached[0])

    def parse(self, row: int, raw: Mapping[str, object]) -> ParsedRow:
        return self._parse(row, normalize_value(raw))

    def _parse(self, row: int, raw: Mapping[str, object]) -> ParsedRow:
        """``raw`` already in NFC (``normalize_value``): every entry point composes text once, here."""
        out = ParsedRow(None)

        def error(column: str, message: str) -> None:
            out.errors.append(RowError(row, column, message))

        self.check_lengths(raw, raw.keys(), error)
        if out.errors:
            return out
        for column in REQUIRED:
            if column not in raw or raw[column] is None or (column != "text" and _blank(raw[column])):
                error(column, "필수 항목이 비어 있습니다.")
        if out.errors:
            return out

        utterance_id = self._string(raw, "utterance_id", error).strip()
        session = self._string(raw, "session", error).strip() if not _blank(raw.get("session")) else ""
        speaker_raw = self._string(raw, "speaker", error)
        speaker = lookup.speaker_code(speaker_raw) if speaker_raw else None
        if speaker_raw and speaker is None:
            error("speaker", f"화자 '{speaker_raw}'를 알 수 없습니다(counselor/client, 상담자/내담자, 상/내).")
        stage = self.stage(raw, error)
        seq = self._seq(raw.get("seq"), error)
        text = self._string(raw, "text", error)
        source = self._string(raw, "source", error).strip()

        parsed_id = rules.parse_utterance_id(utterance_id) if utterance_id else None
        if not session and parsed_id:
            session = parsed_id.session
        if session and (problem := rules.session_code_problem(session)):
            error("session", problem)
        if utterance_id and (
            problem := rules.utterance_id_problem(utterance_id, speaker=speaker, session=session or None)
        ):
            error("utterance_id", problem)
        if source and (problem := rules.source_problem(source)):
            error("source", problem)

        techniques = self.labels(raw, "techniques", error)
        client_states = self.labels(raw, "client_states", error)
        if speaker:
            for column, message in rules.attach_problems(speaker, techniques=techniques, client_states=client_states):
                error(column, message)
        nonverbal = self._list(raw, "nonverbal", error)

        act = self.dialog_act(raw, error)
        act, correction = rules.corrected_dialog_act(text, act)
        if correction:
            out.warnings.append(RowError(row, "dialog_act", correction))

        if session and seq >= 0:
            out.position = (session, seq)
        comments = self._comments(raw, error)
        for column, problem in rules.turn_content_problems(text=text, nonverbal=nonverbal, dialog_act=act):
            error(column, problem)
        for comment in comments:
            if problem := rules.personal_identifier_problem(comment.text):
                error("comments", problem)

        trainee = None
        if not _blank(raw.get("trainee")):
            trainee = self._string(raw, "trainee", error).strip()
            out.trainee = trainee or None
        held_on = self._date(raw.get("held_on"), error)
        # Reported with the row's other problems (the row keeps its place in the seq check).
        self.check_characters(raw, raw.keys(), error)

        if out.errors:
            return out
        out.record = TurnRecord(
            row=row,
            session=session,
            utterance_id=utterance_id,
            seq=seq,
            speaker=speaker,
            stage=stage,
            text=text,
            source=source,
            techniques=techniques,
            client_states=client_states,
            nonverbal=nonverbal,
            dialog_act=act,
            comments=comments,
            trainee=trainee,
            held_on=held_on,
        )
        return out

    # Field by field, for readers of partial lines too (an annotation run rates a turn already stored,
    # CONTRACT §7): the same cell rules as a golden line, in one place.

    def check_lengths(self, raw: Mapping, columns, error) -> None:
        for column in columns:
            value = raw.get(column)
            if isinstance(value, str) and len(value) > self.max_chars:
                error(str(column), f"칸의 길이가 {len(value):,}자로, 한도 {self.max_chars:,}자를 넘습니다.")

    @staticmethod
    def check_characters(raw: Mapping, columns, error) -> None:
        for column in columns:
            for text in _strings(raw.get(column)):
                if problem := rules.character_problem(text):
                    error(str(column), problem)
                    break

    def stage(self, raw: Mapping, error) -> str | None:
        stage_raw = self._string(raw, "stage", error)
        stage = lookup.stage_code(stage_raw) if stage_raw else None
        if stage_raw and stage is None:
            error(
                "stage",
                f"단계 '{stage_raw}'를 알 수 없습니다(라포/탐색/개입/정리 또는 rapport/exploration/intervention/closing).",
            )
        return stage

    def dialog_act(self, raw: Mapping, error) -> str | None:
        """The act as written (``None`` when blank); the silence correction is the caller's."""
        if _blank(raw.get("dialog_act")):
            return None
        act_raw = self._string(raw, "dialog_act", error)
        act = lookup.dialog_act_code(act_raw)
        if act is None:
            error(
                "dialog_act",
                f"대화행위 '{act_raw}'를 알 수 없습니다(16개 대화행위 중 하나, 예: inform, silence, null).",
            )
        return act

    def labels(self, raw: Mapping, column: str, error) -> list[str]:
        """``techniques`` or ``client_states``: codes, Korean names or surface labels → codes."""
        if column == "techniques":
            return self._labels(raw, column, self.index.technique, self.index.closest_techniques, error)
        return self._labels(raw, column, self.index.client_state, self.index.closest_client_states, error)

    def string(self, raw: Mapping, column: str, error) -> str:
        return self._string(raw, column, error)

    def seq(self, raw: Mapping, error) -> int:
        """The 0-based position, or -1 after reporting why it is not one."""
        return self._seq(raw.get("seq"), error)

    @staticmethod
    def _string(raw: Mapping, column: str, error) -> str:
        value = raw.get(column)
        if value is None:
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            error(column, "문자열이어야 합니다.")
            return ""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value)
        if "\x00" in text:
            error(column, "NUL 문자는 쓸 수 없습니다.")
            return ""
        return text

    @staticmethod
    def _seq(value: object, error) -> int:
        if isinstance(value, bool):
            error("seq", "순서는 0 이상의 정수여야 합니다.")
            return -1
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if not isinstance(value, int) or value < 0 or value > 10_000_000:
            error("seq", f"순서 '{value}'는 0 이상의 정수여야 합니다.")
            return -1
        return value

    def _list(self, raw: Mapping, column: str, error) -> list[str]:
        value = raw.get(column)
        if value is None:
            return []
        if isinstance(value, str):
            items = LIST_SEPARATORS.split(value)
        elif isinstance(value, list):
            if not all(isinstance(item, str) for item in value):
                error(column, "목록의 항목은 모두 문자열이어야 합니다.")
                return []
            items = value
        else:
            error(column, "목록이어야 합니다(';' 또는 줄바꿈으로 구분).")
            return []
        return [item.strip() for item in items if item.strip()]

    def _labels(self, raw: Mapping, column: str, resolve, suggest, error) -> list[str]:
        # Cells repeat a lot ("reflection", "공감; 탐색질문", ["empathy"]): a cell is resolved once per file.
        cell = raw.get(column)
        if isinstance(cell, str):
            key = (column, cell)
        elif isinstance(cell, list) and all(isinstance(item, str) for item in cell):
            key = (column, tuple(cell))
        else:
            key = None
        cached = self._label_cells.get(key) if key else None
        if cached is None:
            codes: list[str] = []
            messages: list[str] = []
            for item in self._list(raw, column, error):
                code = resolve(item)
                if code is None:
                    hint = ", ".join(f"{code}({_korean_name(code)})" for code in suggest(item))
                    messages.append(f"알 수 없는 라벨 '{item}'입니다. 가장 가까운 라벨: {hint}")
                elif code not in codes:
                    codes.append(code)
            cached = (codes, messages)
            if key and len(self._label_cells) < 100_000:
                self._label_cells[key] = cached
        for message in cached[1]:
            error(column, message)
        return list(cached[0])

    def _comments(self, raw: Mapping, error) -> list[CommentRecord]:
        comments: list[CommentRecord] = []
        value = raw.get("comments")
        if value is not None:
            if not isinstance(value, list):
                error("comments", "논평 목록(comments)은 배열이어야 합니다.")
            else:
                for position, item in enumerate(value, start=1):
                    comment = self._comment(position, item, error)
                    if comment is not None:
                        comments.append(comment)
        for kind, names in COMMENT_FIELD_COLUMNS.items():
            cell = raw.get(kind)
            if _blank(cell):
                continue
            lines = [line.strip() for line in self._string(raw, kind, error).splitlines() if line.strip()]
            # The optional columns beside it, line for line; a column the file has is what the file says
            # (``given``), a column it lacks leaves a stored comment's field as it is.
            given = frozenset(name for name in names if f"{kind}_{name}" in raw)
            aligned = {
                name: [part.strip() for part in self._string(raw, f"{kind}_{name}", error).split("\n")]
                for name in given
            }
            for position, line in enumerate(lines):
                values = {name: (parts[position] if position < len(parts) else "") for name, parts in aligned.items()}
                author = values.pop("author", "") or "supervisor"
                deviation = {key: value for key, value in values.items() if value}
                problems = []
                if problem := rules.comment_author_problem(author):
                    error(f"{kind}_author", problem)
                    problems.append(problem)
                for key, message in rules.intent_deviation_problems(deviation):
                    error(f"{kind}_{key}", message)
                    problems.append(message)
                if not problems:
                    comments.append(CommentRecord(kind, line, author, deviation, given=given))
        return comments

    @staticmethod
    def _comment(position: int, item: object, error) -> CommentRecord | None:
        where = f"{position}번째 논평"
        if not isinstance(item, Mapping):
            error("comments", f"{where}은(는) 객체여야 합니다.")
            return None
        problems = []
        kind = item.get("kind")
        if problem := rules.comment_kind_problem(kind):
            problems.append(problem)
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            problems.append("text(내용)가 비어 있거나 문자열이 아닙니다.")
        author = item.get("author", "supervisor")
        if problem := rules.comment_author_problem(author):
            problems.append(problem)
        deviation = {key: item[key] for key in rules.INTENT_DEVIATION_KEYS if item.get(key) not in (None, "")}
        problems += [message for _, message in rules.intent_deviation_problems(deviation)]
        unknown = set(item) - {"kind", "text", "author", *rules.INTENT_DEVIATION_KEYS}
        if unknown:
            problems.append(f"알 수 없는 항목 {sorted(unknown)}")
        if problems:
            error("comments", f"{where}: " + " ".join(problems))
            return None
        return CommentRecord(kind, text.strip(), author, deviation)

    @staticmethod
    def _date(value: object, error) -> datetime.date | None:
        if _blank(value):
            return None
        if isinstance(value, datetime.datetime):
            return value.date()
        if isinstance(value, datetime.date):
            return value
        if isinstance(value, str):
            try:
                return datetime.date.fromisoformat(value.strip())
            except ValueError:
                pass
        error("held_on", f"일자 '{value}'는 YYYY-MM-DD 형식이어야 합니다.")
        return None


def _korean_name(code: str) -> str:
    label = catalogue.TECHNIQUES_BY_CODE.get(code) or catalogue.CLIENT_STATES_BY_CODE.get(code)
    return label.ko if label else code


def _strings(value: object):
    """The strings of a cell: itself, or those inside a JSONL list or object."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)


def _has_forbidden_character(raw: Mapping) -> bool:
    return any(rules.character_problem(text) for value in raw.values() for text in _strings(value))


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
