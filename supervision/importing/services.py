"""``import_transcripts``: validate every row and write them in one transaction, or nothing.

The file streams through in chunks (``CHUNK_ROWS``): each chunk is validated with the rules of ``parse`` and
``cross_row`` and, while no error has shown up, written at once with binary COPY into the real tables. A
later error stops the writing, validation still reads to the end (every error is reported) and the
transaction is rolled back. The write path is set-based: a few queries and COPYs per chunk, never per row;
turns already stored (a re-import) are compared in Python and only the differences written, so re-importing
the same file changes nothing and reports ``created: 0``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone
from simple_history.utils import bulk_update_with_history

from portal.perf import without_cyclic_gc
from supervision import pagecache
from supervision.exporting import label_codes_by_turn
from supervision.importing.cross_row import SessionChecks
from supervision.importing.parse import RowParser
from supervision.importing.readers import FileRejected, RowProblem
from supervision.importing.records import ImportAborted, RowError, TurnRecord
from supervision.models import Session, SupervisorComment, Turn, TurnClientState, TurnTechnique
from supervision.roles import Role
from supervision.signals import golden_labels_written
from taxonomy import catalogue
from taxonomy.lookup import LabelIndex

TURN_FIELDS = ("seq", "speaker", "stage_id", "text", "nonverbal", "dialog_act")
ProgressCallback = Callable[[str, int, int], None]
# Rows validated and written at a time: memory follows this, not the file (about 1 KB a row in flight).
CHUNK_ROWS = 10_000
# The per-session counts of what an import changes, as the preview lists them.
CHANGE_COUNTS = ("turns_created", "turns_updated", "turns_deleted", "comments_added", "comments_changed")


@dataclass
class ImportReport:
    sessions: int = 0
    turns: int = 0
    created: int = 0
    updated: int = 0
    deleted: int = 0
    session_ids: list[int] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    dry_run: bool = False
    # What the preview shows per session (code, trainee, held_on, turns, the labels as resolved to codes).
    previews: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> dict:
        if self.errors:
            return {"errors": [e.as_dict() for e in self.errors]}
        return {
            "sessions": self.sessions,
            "turns": self.turns,
            "created": self.created,
            "updated": self.updated,
            "warnings": [str(w) for w in self.warnings],
        }


def import_file(
    path: Path,
    *,
    trainee_username: str | None = None,
    created_by=None,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """A file (.jsonl, .csv, .xlsx) through the reader its extension names, then ``import_transcripts``.

    The one entry point of the command line, the admin screens and the background job.
    """
    from supervision.importing.sources import rows_from_path

    try:
        rows = rows_from_path(path)
    except FileRejected as exc:
        return ImportReport(dry_run=dry_run, errors=[RowError(0, "file", str(exc))])
    return import_transcripts(
        rows=rows, trainee_username=trainee_username, created_by=created_by, dry_run=dry_run, progress=progress
    )


def import_transcripts(
    *,
    rows: Iterable[tuple[int, dict | RowProblem]],
    trainee_username: str | None = None,
    created_by=None,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Validates ``rows`` (from a reader) and, when every row is valid and not ``dry_run``, writes them.

    ``trainee_username`` (the CLI's ``--trainee``) assigns every session of the file to that trainee.
    """
    with without_cyclic_gc():
        return _import(rows, trainee_username, created_by, dry_run, progress)


def _import(rows, trainee_username, created_by, dry_run, progress) -> ImportReport:
    """One pass over the file in chunks of ``CHUNK_ROWS``: each chunk is validated and, while the file has
    shown no error, written at once inside the import's one transaction. The first error stops the writing
    (validation goes on to the end, so every error is reported) and the transaction is rolled back: all or
    nothing, with memory bounded by the chunk rather than the file."""
    report = ImportReport(dry_run=dry_run)
    parser = RowParser(LabelIndex.load())
    checks = SessionChecks()
    trainees = _TraineeNames(trainee_username)
    previews = SessionPreviews(trainee_username)
    try:
        with transaction.atomic():
            writer = ChunkWriter(trainees, trainee_username, created_by, report)
            count = 0
            for chunk in _chunks(rows, CHUNK_ROWS):
                records: list[TurnRecord] = []
                positions: list[tuple[int, str, int]] = []
                for row, raw in chunk:
                    if isinstance(raw, RowProblem):
                        report.errors.append(RowError(row, raw.column, raw.message))
                        continue
                    parsed = parser.parse_quickly(row, raw)
                    if parsed.errors:
                        report.errors += parsed.errors
                    if parsed.warnings:
                        report.warnings += parsed.warnings
                    if parsed.record is not None:
                        records.append(parsed.record)
                    if parsed.position is not None:
                        positions.append((row, *parsed.position))
                    if parsed.trainee:
                        trainees.named(row, parsed.trainee)
                checks.add_positions(positions)
                report.errors += checks.add_records(records)
                report.turns += len(records)
                previews.add(records)
                if not report.errors:
                    writer.write(records)
                count += len(chunk)
                if progress:
                    progress("validate" if report.errors else "write", count, 0)
            report.previews = previews.result()
            report.errors += checks.errors()
            report.errors += trainees.errors()
            report.errors.sort(key=lambda e: (e.row, e.column))
            if report.errors:
                raise ImportAborted
            writer.finish()
            for entry in report.previews:
                entry.update(writer.changes_of(entry["code"]))
            if dry_run:
                raise ImportAborted
            # Fresh transcripts get their trajectory audits in the background once the import is committed
            # (in-process when no REDIS_URL); the nightly review refreshes them too.
            transaction.on_commit(partial(queue_trajectory_audits, report.session_ids))
            golden_labels_written(import_transcripts, report.session_ids)  # the agreement reports of these
            pagecache.everyone_changed()  # new and replaced sessions, on any trainee's pages
    except FileRejected as exc:
        # Found while streaming (too many rows, a damaged sheet): the file as a whole is refused.
        return ImportReport(dry_run=dry_run, errors=[RowError(0, "file", str(exc))])
    except ImportAborted:
        report.session_ids = []
    if report.errors:
        report.sessions = report.turns = report.created = report.updated = report.deleted = 0
    return report


class SessionPreviews:
    """Per session of the file (the first ``SESSIONS``): its code, trainee, date, number of turns and how
    often each label occurs, as the code it was resolved to (surface names and aliases already normalised by
    the parser). Fed chunk by chunk; bounded by ``SESSIONS``, not by the file."""

    SESSIONS = 100

    def __init__(self, forced_trainee: str | None) -> None:
        self.forced_trainee = forced_trainee
        self.by_code: dict[str, dict] = {}

    def add(self, records: list[TurnRecord]) -> None:
        for record in records:
            entry = self.by_code.get(record.session)
            if entry is None:
                if len(self.by_code) >= self.SESSIONS:
                    continue
                entry = self.by_code[record.session] = {
                    "code": record.session,
                    "trainee": self.forced_trainee or "",
                    "held_on": "",
                    "turns": 0,
                    "labels": Counter(),
                }
            entry["turns"] += 1
            entry["trainee"] = entry["trainee"] or record.trainee or ""
            entry["held_on"] = entry["held_on"] or (record.held_on.isoformat() if record.held_on else "")
            entry["labels"].update(record.techniques)
            entry["labels"].update(record.client_states)

    def result(self) -> list[dict]:
        return [
            {**entry, "labels": sorted(entry["labels"].items(), key=lambda item: (-item[1], item[0]))}
            for entry in self.by_code.values()
        ]


def _chunks(rows: Iterable, size: int) -> Iterator[list]:
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _suggestion_writer():
    from supervision.suggesting.services import SuggestionWriter

    return SuggestionWriter.for_import()


def queue_trajectory_audits(session_ids: list[int]) -> None:
    from supervision.trajectory.tasks import queue_session_audits

    queue_session_audits(session_ids)


class _TraineeNames:
    """The trainees the file names (or ``--trainee``), looked up by username as they first appear; each
    unknown one is reported at the first row naming it, whether or not that row had other errors."""

    def __init__(self, forced: str | None) -> None:
        self.forced = forced
        self.found: dict[str, object] = {}
        self.unknown: dict[str, int] = {}  # name -> first row naming it
        if forced:
            self._look_up(forced, 0)

    def named(self, row: int, name: str) -> None:
        if not self.forced and name not in self.found and name not in self.unknown:
            self._look_up(name, row)

    def _look_up(self, name: str, row: int) -> None:
        user = get_user_model().objects.filter(username=name, groups__name=Role.TRAINEE).first()
        if user is None:
            self.unknown[name] = row
        else:
            self.found[name] = user

    def get(self, name: str | None):
        """The trainee a session belongs to: ``--trainee`` when given, else the one its rows name."""
        name = self.forced or name
        return self.found.get(name) if name else None

    def errors(self) -> list[RowError]:
        return [
            RowError(row, "trainee", f"수련생 '{name}'를 찾을 수 없습니다(수련생 역할의 사용자여야 함).")
            for name, row in self.unknown.items()
        ]


class ChunkWriter:
    """Writes validated chunks as they come, inside the import's transaction.

    Sessions are created (or locked, when they exist) the first time a chunk names them; a session's details
    (source, trainee, date) are settled in ``finish`` from the whole file. New turns go in with binary COPY
    (ids taken from the sequence first, so links and comments follow in the same chunk); turns already
    stored (a re-import) are compared in Python and only the differences written. Turns of the file's
    sessions that the file no longer has are deleted in ``finish``.
    """

    def __init__(self, trainees: _TraineeNames, forced_trainee: str | None, created_by, report: ImportReport):
        self.trainees = trainees
        self.forced_trainee = forced_trainee
        self.created_by = created_by
        self.report = report
        self.index = LabelIndex.load()
        self.writer = CopyWriter if connection.vendor == "postgresql" else OrmWriter
        self.sessions: dict[str, Session] = {}
        self.preexisting: set[int] = set()  # ids of the file's sessions that existed before it
        self.details: dict[str, dict] = {}  # session code -> source, trainee name, held_on (first seen)
        self.matched: set[int] = set()  # ids of stored turns the file has again
        # What the file changes, per session code: the preview says it exactly (issue 33).
        self.changes: dict[str, Counter] = defaultdict(Counter)
        # Every written turn gets the label suggester's labels in the same transaction, chunk by chunk from
        # the records in memory (CONTRACT §9); a re-imported turn's are replaced. No usable model: none.
        self.suggestions = None if report.dry_run else _suggestion_writer()
        self._again: list[tuple[int, TurnRecord]] = []  # this chunk's re-imported turns

    def changes_of(self, code: str) -> dict[str, int]:
        counts = self.changes.get(code, Counter())
        return {name: counts[name] for name in CHANGE_COUNTS}

    def write(self, records: list[TurnRecord]) -> None:
        if not records:
            return
        self._open_sessions(records)
        sessions, preexisting = self.sessions, self.preexisting
        fresh = [r for r in records if sessions[r.session].id not in preexisting]
        if preexisting:
            again = [r for r in records if sessions[r.session].id in preexisting]
            if again:
                fresh += self._update_existing(again)
        again, self._again = self._again, []
        if self.suggestions is not None:
            # the model starts on the chunk now and runs while the turns, links and comments are written
            self.suggestions.read(fresh + [record for _, record in again])
        ids = self.writer.turns(fresh, sessions)
        self.report.created += len(fresh)
        linked = list(zip(ids, fresh, strict=True))
        if self.suggestions is not None:
            self.suggestions.write(linked + again, replaced=[turn_id for turn_id, _ in again])
        self._link(linked)
        comments = []
        for turn_id, record in linked:
            self.changes[record.session]["turns_created"] += 1
            if record.comments:
                added, _ = _comments_to_add(turn_id, record, [], self.created_by)
                self.changes[record.session]["comments_added"] += len(added)
                comments += added
        self.writer.comments(comments)

    def _link(self, linked: list[tuple[int, TurnRecord]]) -> None:
        technique_ids, state_ids = self.index.technique_ids, self.index.client_state_ids
        self.writer.links(
            TurnTechnique,
            [(turn_id, technique_ids[code]) for turn_id, record in linked for code in record.techniques],
        )
        self.writer.links(
            TurnClientState,
            [(turn_id, state_ids[code]) for turn_id, record in linked for code in record.client_states],
        )

    def _open_sessions(self, records: list[TurnRecord]) -> None:
        details = self.details
        for record in records:
            seen = details.get(record.session)
            if seen is None:
                details[record.session] = {
                    "source": record.source,
                    "trainee": record.trainee,
                    "held_on": record.held_on,
                }
                continue
            if seen["trainee"] is None and record.trainee:
                seen["trainee"] = record.trainee
            if seen["held_on"] is None and record.held_on:
                seen["held_on"] = record.held_on
        codes = [code for code in details if code not in self.sessions]
        if not codes:
            return
        existing = {s.code: s for s in Session.objects.select_for_update().filter(code__in=codes)}
        self.sessions.update(existing)
        self.preexisting.update(session.id for session in existing.values())
        today = timezone.localdate()
        fresh = [
            Session(
                code=code,
                title="",  # a title is the supervisor's to give in the admin; pages fall back to the code
                source=details[code]["source"],
                trainee=self.trainees.get(details[code]["trainee"]),
                held_on=details[code]["held_on"] or today,
                taxonomy_version=catalogue.TAXONOMY_VERSION,
                created_by=self.created_by,
            )
            for code in codes
            if code not in existing
        ]
        for session in Session.objects.bulk_create(fresh, batch_size=1000):
            self.sessions[session.code] = session

    def _update_existing(self, records: list[TurnRecord]) -> list[TurnRecord]:
        """Compares the chunk's turns of sessions stored before with what is stored and writes the
        differences; returns the records that are new turns."""
        report = self.report
        session_ids = sorted({self.sessions[r.session].id for r in records})
        existing = {
            row["utterance_id"]: row
            for row in Turn.objects.filter(
                session_id__in=session_ids, utterance_id__in=[r.utterance_id for r in records]
            ).values("id", "utterance_id", "session_id", *TURN_FIELDS)
        }
        turn_ids = [row["id"] for row in existing.values()]
        existing_techniques = label_codes_by_turn(TurnTechnique, turn_ids=turn_ids)
        existing_states = label_codes_by_turn(TurnClientState, turn_ids=turn_ids)
        existing_comments: dict[int, list[StoredComment]] = defaultdict(list)
        for comment_id, turn_id, kind, text, author, deviation in (
            SupervisorComment.objects.accepted()
            .filter(turn_id__in=turn_ids)
            .order_by("id")
            .values_list("id", "turn_id", "kind", "text", "author", "intent_deviation")
        ):
            existing_comments[turn_id].append(StoredComment(comment_id, kind, text, author, deviation or {}))

        new_records: list[TurnRecord] = []
        to_update: list[Turn] = []
        relink: list[tuple[int, TurnRecord]] = []
        new_comments: list[SupervisorComment] = []
        changed_comments: list[SupervisorComment] = []
        for record in records:
            current = existing.get(record.utterance_id)
            if current is None:
                new_records.append(record)
                continue
            values = {
                "seq": record.seq,
                "speaker": record.speaker,
                "stage_id": record.stage,
                "text": record.text,
                "nonverbal": record.nonverbal,
                "dialog_act": record.dialog_act,
            }
            turn_id = current["id"]
            self.matched.add(turn_id)
            self._again.append((turn_id, record))
            changed = any(current[name] != value for name, value in values.items())
            if changed:
                to_update.append(Turn(id=turn_id, **values))
            labels_changed = set(existing_techniques.get(turn_id, ())) != set(record.techniques) or set(
                existing_states.get(turn_id, ())
            ) != set(record.client_states)
            if labels_changed:
                relink.append((turn_id, record))
            fresh, altered = _comments_to_add(turn_id, record, existing_comments[turn_id], self.created_by)
            new_comments += fresh
            changed_comments += altered
            counts = self.changes[record.session]
            counts["comments_added"] += len(fresh)
            counts["comments_changed"] += len(altered)
            if changed or labels_changed or fresh or altered:
                counts["turns_updated"] += 1
                report.updated += 1

        if to_update:
            Turn.objects.bulk_update(to_update, TURN_FIELDS, batch_size=2000)
        if relink:
            ids = [turn_id for turn_id, _ in relink]
            TurnTechnique.objects.filter(turn_id__in=ids).delete()
            TurnClientState.objects.filter(turn_id__in=ids).delete()
            self._link(relink)
        self.writer.comments(new_comments)
        if changed_comments:
            # Through simple-history, so the comment's audit trail shows the import's change.
            bulk_update_with_history(
                changed_comments, SupervisorComment, ["author", "intent_deviation"], batch_size=2000
            )
        return new_records

    def finish(self) -> None:
        """After the last chunk: the sessions' details from the whole file, and the stored turns the file no
        longer has deleted."""
        report = self.report
        if self.suggestions is not None:
            self.suggestions.finish()
        report.sessions = len(self.sessions)
        report.session_ids = sorted(session.id for session in self.sessions.values())
        changed: list[Session] = []
        for code, session in self.sessions.items():
            values = self.details[code]
            wanted = {
                "source": values["source"],
                "trainee": self.trainees.get(values["trainee"]),
                "held_on": values["held_on"],
            }
            dirty = False
            for name, value in wanted.items():
                if value is not None and getattr(session, name) != value:
                    setattr(session, name, value)
                    dirty = True
            if dirty:
                changed.append(session)
        if changed:
            Session.objects.bulk_update(changed, ["source", "trainee", "held_on", "updated_at"])
        if self.preexisting:
            stored = Turn.objects.filter(session_id__in=sorted(self.preexisting)).values_list("id", flat=True)
            stale = [turn_id for turn_id in stored if turn_id not in self.matched]
            if stale:
                codes = {session.id: code for code, session in self.sessions.items()}
                for session_id in Turn.objects.filter(id__in=stale).values_list("session_id", flat=True):
                    self.changes[codes[session_id]]["turns_deleted"] += 1
                Turn.objects.filter(id__in=stale).delete()
                report.deleted = len(stale)
                report.warnings.append(
                    RowError(0, "file", f"파일에 없는 기존 발화 {len(stale)}개를 회기에서 지웠습니다.")
                )


class OrmWriter:
    """Portable path (the embedded SQLite database of ``make run``): bulk_create, ids returned by the ORM."""

    @staticmethod
    def turns(records: list[TurnRecord], sessions: dict[str, Session]) -> list[int]:
        turns = [
            Turn(
                session_id=sessions[r.session].id,
                utterance_id=r.utterance_id,
                seq=r.seq,
                speaker=r.speaker,
                stage_id=r.stage,
                text=r.text,
                nonverbal=r.nonverbal,
                dialog_act=r.dialog_act,
            )
            for r in records
        ]
        Turn.objects.bulk_create(turns, batch_size=2000)
        return [turn.id for turn in turns]

    @staticmethod
    def links(model, pairs: list[tuple[int, int]]) -> None:
        model.objects.bulk_create([model(turn_id=t, label_id=label) for t, label in pairs], batch_size=5000)

    @staticmethod
    def comments(comments: list[SupervisorComment]) -> None:
        SupervisorComment.objects.bulk_create(comments, batch_size=2000)


class CopyWriter:
    """PostgreSQL: ids taken from the sequence in one query, then rows streamed with binary COPY (psycopg 3:
    the column types are declared once, so no value is formatted as text and parsed again by the server).

    COPY runs on Django's own connection, so it belongs to the import's transaction (all or nothing).
    """

    TURN_COLUMNS = "id, session_id, seq, utterance_id, speaker, stage, text, nonverbal, dialog_act"
    TURN_TYPES = ("int8", "int8", "int4", "text", "text", "text", "text", "jsonb", "text")
    COMMENT_COLUMNS = (
        "turn_id, kind, text, intent_deviation, author, written_by_id, is_suggestion, suggestion_key, "
        "created_at, updated_at"
    )
    COMMENT_TYPES = ("int8", "text", "text", "jsonb", "text", "int4", "bool", "text", "timestamptz", "timestamptz")

    @classmethod
    def turns(cls, records: list[TurnRecord], sessions: dict[str, Session]) -> list[int]:
        if not records:
            return []
        table = Turn._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, len(records)]
            )
            ids = [row[0] for row in cursor.fetchall()]
        session_ids = {code: session.id for code, session in sessions.items()}
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({cls.TURN_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(cls.TURN_TYPES)
            write_row = copy.write_row
            for turn_id, r in zip(ids, records, strict=True):
                write_row(
                    (
                        turn_id,
                        session_ids[r.session],
                        r.seq,
                        r.utterance_id,
                        r.speaker,
                        r.stage,
                        r.text,
                        r.nonverbal,
                        r.dialog_act,
                    )
                )
        return ids

    @staticmethod
    def links(model, pairs: list[tuple[int, int]]) -> None:
        if not pairs:
            return
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(f"COPY {model._meta.db_table} (turn_id, label_id) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(("int8", "int2"))
            write_row = copy.write_row
            for pair in pairs:
                write_row(pair)

    @classmethod
    def comments(cls, comments: list[SupervisorComment]) -> None:
        if not comments:
            return
        now = timezone.now()
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(
                f"COPY {SupervisorComment._meta.db_table} ({cls.COMMENT_COLUMNS}) FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(cls.COMMENT_TYPES)
            for c in comments:
                copy.write_row(
                    (
                        c.turn_id,
                        c.kind,
                        c.text,
                        c.intent_deviation or {},
                        c.author,
                        c.written_by_id,
                        False,
                        "",
                        now,
                        now,
                    )
                )


@dataclass
class StoredComment:
    id: int | None
    kind: str
    text: str
    author: str
    intent_deviation: dict
    matched: bool = False

    def lines(self) -> list[str]:
        return [line.strip() for line in self.text.splitlines() if line.strip()]


def _comments_to_add(
    turn_id: int, record: TurnRecord, stored: list[StoredComment], created_by
) -> tuple[list[SupervisorComment], list[SupervisorComment]]:
    """The record's comments against the turn's stored ones: ``(new, changed)``.

    A comment is the stored one of the same kind and text (a spreadsheet cell holds a comment written over
    several lines as several lines: each of them is that comment). A recognised comment keeps its id, byline
    and the fields the input does not state; the fields it states replace the stored ones. The same line twice
    on one turn is one comment."""
    fresh: list[SupervisorComment] = []
    changed: list[SupervisorComment] = []
    for comment in record.comments:
        same = next(
            (s for s in stored if not s.matched and s.kind == comment.kind and s.text.strip() == comment.text), None
        )
        if same is None:
            part = next(
                (s for s in stored if s.kind == comment.kind and len(lines := s.lines()) > 1 and comment.text in lines),
                None,
            )
            if part is not None and comment.text == part.lines()[0]:
                same = part
            elif part is not None:
                continue  # a continuation line of a stored comment: its fields are on the first line
        if same is not None:
            same.matched = True
            author = comment.author if "author" in comment.given else same.author
            deviation = {k: v for k, v in same.intent_deviation.items() if k not in comment.given}
            deviation.update(comment.intent_deviation)
            if same.id is not None and (author, deviation) != (same.author, same.intent_deviation):
                same.author, same.intent_deviation = author, deviation
                changed.append(SupervisorComment(id=same.id, author=author, intent_deviation=deviation))
            continue
        stored.append(StoredComment(None, comment.kind, comment.text, comment.author, comment.intent_deviation, True))
        fresh.append(
            SupervisorComment(
                turn_id=turn_id,
                kind=comment.kind,
                text=comment.text,
                author=comment.author,
                intent_deviation=comment.intent_deviation,
                written_by=created_by if comment.author == "supervisor" else None,
            )
        )
    return fresh, changed
