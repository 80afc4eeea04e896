"""``import_transcripts``: validate every row, then write everything in one transaction, or nothing.

The write path is set-based (a handful of queries per file, not per row): existing turns and links
of the sessions in the file are read once, compared in Python, and the differences are written with
bulk operations. Re-importing the same file changes nothing and reports ``created: 0``.
"""

from __future__ import annotations

import datetime
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from portal.perf import without_cyclic_gc
from supervision.importing.checks import session_errors
from supervision.importing.parse import RowParser
from supervision.importing.readers import FileRejected, RowProblem
from supervision.importing.records import ImportAborted, RowError, TurnRecord
from supervision.models import Session, SupervisorComment, Turn, TurnClientState, TurnTechnique
from supervision.roles import Role
from taxonomy import catalogue
from taxonomy.lookup import LabelIndex

TURN_FIELDS = ("seq", "speaker", "stage_id", "text", "nonverbal", "dialog_act")
ProgressCallback = Callable[[str, int, int], None]
PROGRESS_EVERY = 10_000


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
    report = ImportReport(dry_run=dry_run)
    parser = RowParser(LabelIndex.load())
    records: list[TurnRecord] = []
    positions: list[tuple[int, str, int]] = []
    named_trainees: list[tuple[int, str]] = []  # (row, trainee) of every row that names one
    try:
        for count, (row, raw) in enumerate(rows, start=1):
            if isinstance(raw, RowProblem):
                report.errors.append(RowError(row, raw.column, raw.message))
                continue
            parsed = parser.parse(row, raw)
            if parsed.errors:
                report.errors += parsed.errors
            if parsed.warnings:
                report.warnings += parsed.warnings
            if parsed.record is not None:
                records.append(parsed.record)
            if parsed.position is not None:
                positions.append((row, *parsed.position))
            if parsed.trainee:
                named_trainees.append((row, parsed.trainee))
            if progress and count % PROGRESS_EVERY == 0:
                progress("validate", count, 0)
    except FileRejected as exc:
        # Found while streaming (too many rows, a damaged sheet): the file as a whole is refused.
        report.errors = [RowError(0, "file", str(exc))]
        report.warnings = []
        return report
    report.errors += session_errors(records, positions)

    trainees = _resolve_trainees(named_trainees, trainee_username, report)
    report.errors.sort(key=lambda e: (e.row, e.column))
    if report.errors:
        return report

    report.sessions = len({r.session for r in records})
    report.turns = len(records)
    report.previews = session_previews(records, trainee_username)
    try:
        with transaction.atomic():
            _write(records, trainees, trainee_username, created_by, report, progress)
            if dry_run:
                raise ImportAborted
            # Fresh transcripts get their trajectory audits in the background once the import is committed
            # (in-process when no REDIS_URL); the nightly review refreshes them too.
            transaction.on_commit(partial(queue_trajectory_audits, report.session_ids))
    except ImportAborted:
        report.session_ids = []
    return report


PREVIEW_SESSIONS = 100


def session_previews(records: list[TurnRecord], forced_trainee: str | None) -> list[dict]:
    """Per session of the file (the first ``PREVIEW_SESSIONS``): its code, trainee, date, number of turns
    and how often each label occurs, as the code it was resolved to (surface names and aliases already
    normalised by the parser)."""
    by_code: dict[str, dict] = {}
    for record in records:
        entry = by_code.get(record.session)
        if entry is None:
            if len(by_code) >= PREVIEW_SESSIONS:
                continue
            entry = by_code[record.session] = {
                "code": record.session,
                "trainee": forced_trainee or "",
                "held_on": "",
                "turns": 0,
                "labels": Counter(),
            }
        entry["turns"] += 1
        entry["trainee"] = entry["trainee"] or record.trainee or ""
        entry["held_on"] = entry["held_on"] or (record.held_on.isoformat() if record.held_on else "")
        entry["labels"].update(record.techniques)
        entry["labels"].update(record.client_states)
    return [
        {**entry, "labels": sorted(entry["labels"].items(), key=lambda item: (-item[1], item[0]))}
        for entry in by_code.values()
    ]


def queue_trajectory_audits(session_ids: list[int]) -> None:
    from portal.queue import enqueue
    from supervision.trajectory.tasks import audit_sessions

    # A few seconds of work at most: with Redis down it runs here rather than being lost.
    enqueue(audit_sessions, session_ids, in_process_if_down=True)


def _resolve_trainees(named: list[tuple[int, str]], forced: str | None, report: ImportReport) -> dict[str, object]:
    """The trainees the file names (or ``--trainee``), by username; each unknown one is reported at the first
    row naming it, whether or not that row had other errors."""
    User = get_user_model()
    names = {forced} if forced else {name for _row, name in named}
    found = {u.username: u for u in User.objects.filter(username__in=names, groups__name=Role.TRAINEE)}
    if forced:
        if forced not in found:
            report.errors.append(
                RowError(0, "trainee", f"수련생 '{forced}'를 찾을 수 없습니다(수련생 역할의 사용자여야 함).")
            )
        return found
    reported: set[str] = set()
    for row, name in named:
        if name not in found and name not in reported:
            reported.add(name)
            report.errors.append(
                RowError(row, "trainee", f"수련생 '{name}'를 찾을 수 없습니다(수련생 역할의 사용자여야 함).")
            )
    return found


def _write(
    records: list[TurnRecord],
    trainees: dict[str, object],
    forced_trainee: str | None,
    created_by,
    report: ImportReport,
    progress: ProgressCallback | None,
) -> None:
    index = LabelIndex.load()
    sessions = _upsert_sessions(records, trainees, forced_trainee, created_by)
    report.session_ids = sorted(session.id for session in sessions.values())
    codes = list(sessions)
    existing = {
        row["utterance_id"]: row
        for row in Turn.objects.filter(session__code__in=codes).values("id", "utterance_id", "session_id", *TURN_FIELDS)
    }
    existing_techniques = _links(TurnTechnique, codes)
    existing_states = _links(TurnClientState, codes)
    existing_comments: dict[int, set[tuple]] = defaultdict(set)
    for turn_id, kind, text, author, deviation in SupervisorComment.objects.filter(
        turn__session__code__in=codes, is_suggestion=False
    ).values_list("turn_id", "kind", "text", "author", "intent_deviation"):
        existing_comments[turn_id].add((kind, text, author, tuple(sorted((deviation or {}).items()))))

    file_uids = {r.utterance_id for r in records}
    stale = [row["id"] for uid, row in existing.items() if uid not in file_uids]
    if stale:
        Turn.objects.filter(id__in=stale).delete()
        report.deleted = len(stale)
        report.warnings.append(RowError(0, "file", f"파일에 없는 기존 발화 {len(stale)}개를 회기에서 지웠습니다."))

    new_records: list[TurnRecord] = []
    to_update: list[Turn] = []
    relink: list[tuple[int, TurnRecord]] = []
    new_comments: list[SupervisorComment] = []
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
        changed = any(current[name] != value for name, value in values.items())
        if changed:
            to_update.append(Turn(id=turn_id, **values))
        labels_changed = set(existing_techniques.get(turn_id, ())) != set(record.techniques) or set(
            existing_states.get(turn_id, ())
        ) != set(record.client_states)
        if labels_changed:
            relink.append((turn_id, record))
        fresh = _comments_to_add(turn_id, record, existing_comments[turn_id], created_by)
        new_comments += fresh
        if changed or labels_changed or fresh:
            report.updated += 1

    if to_update:
        Turn.objects.bulk_update(to_update, TURN_FIELDS, batch_size=2000)
    if relink:
        ids = [turn_id for turn_id, _ in relink]
        TurnTechnique.objects.filter(turn_id__in=ids).delete()
        TurnClientState.objects.filter(turn_id__in=ids).delete()
    writer = _copy_writer if connection.vendor == "postgresql" else _orm_writer
    new_ids = writer.turns(new_records, sessions, progress)
    report.created = len(new_records)
    linked = relink + list(zip(new_ids, new_records, strict=True))
    writer.links(
        TurnTechnique,
        [(turn_id, index.technique_ids[code]) for turn_id, record in linked for code in record.techniques],
    )
    writer.links(
        TurnClientState,
        [(turn_id, index.client_state_ids[code]) for turn_id, record in linked for code in record.client_states],
    )
    for turn_id, record in zip(new_ids, new_records, strict=True):
        if record.comments:
            new_comments += _comments_to_add(turn_id, record, set(), created_by)
    writer.comments(new_comments)
    if progress:
        progress("write", len(new_records), len(new_records))


class _orm_writer:
    """Portable path (the embedded SQLite database of ``make run``): bulk_create, ids returned by the ORM."""

    @staticmethod
    def turns(records: list[TurnRecord], sessions: dict[str, Session], progress) -> list[int]:
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
        for start in range(0, len(turns), PROGRESS_EVERY):
            Turn.objects.bulk_create(turns[start : start + PROGRESS_EVERY], batch_size=2000)
            if progress:
                progress("write", min(start + PROGRESS_EVERY, len(turns)), len(turns))
        return [turn.id for turn in turns]

    @staticmethod
    def links(model, pairs: list[tuple[int, int]]) -> None:
        model.objects.bulk_create([model(turn_id=t, label_id=label) for t, label in pairs], batch_size=5000)

    @staticmethod
    def comments(comments: list[SupervisorComment]) -> None:
        SupervisorComment.objects.bulk_create(comments, batch_size=2000)


class _copy_writer:
    """PostgreSQL: ids taken from the sequence in one query, then rows streamed with COPY (psycopg 3).

    COPY runs on Django's own connection, so it belongs to the import's transaction (all or nothing).
    """

    @staticmethod
    def turns(records: list[TurnRecord], sessions: dict[str, Session], progress) -> list[int]:
        if not records:
            return []
        table = Turn._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, len(records)]
            )
            ids = [row[0] for row in cursor.fetchall()]
        session_ids = {code: session.id for code, session in sessions.items()}
        dumps = json.dumps
        columns = "id, session_id, seq, utterance_id, speaker, stage, text, nonverbal, dialog_act"
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
        ):
            write_row = copy.write_row
            for position, (turn_id, r) in enumerate(zip(ids, records, strict=True), start=1):
                write_row(
                    (
                        turn_id,
                        session_ids[r.session],
                        r.seq,
                        r.utterance_id,
                        r.speaker,
                        r.stage,
                        r.text,
                        dumps(r.nonverbal, ensure_ascii=False) if r.nonverbal else "[]",
                        r.dialog_act,
                    )
                )
                if progress and position % PROGRESS_EVERY == 0:
                    progress("write", position, len(records))
        return ids

    @staticmethod
    def links(model, pairs: list[tuple[int, int]]) -> None:
        if not pairs:
            return
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(f"COPY {model._meta.db_table} (turn_id, label_id) FROM STDIN") as copy,
        ):
            write_row = copy.write_row
            for pair in pairs:
                write_row(pair)

    @staticmethod
    def comments(comments: list[SupervisorComment]) -> None:
        if not comments:
            return
        now = timezone.now()
        columns = (
            "turn_id, kind, text, intent_deviation, author, written_by_id, is_suggestion, suggestion_key, "
            "created_at, updated_at"
        )
        with (
            connection.connection.cursor() as cursor,
            cursor.copy(f"COPY {SupervisorComment._meta.db_table} ({columns}) FROM STDIN") as copy,
        ):
            for c in comments:
                copy.write_row(
                    (
                        c.turn_id,
                        c.kind,
                        c.text,
                        json.dumps(c.intent_deviation or {}, ensure_ascii=False),
                        c.author,
                        c.written_by_id,
                        False,
                        "",
                        now,
                        now,
                    )
                )


def _upsert_sessions(
    records: list[TurnRecord], trainees: dict[str, object], forced_trainee: str | None, created_by
) -> dict[str, Session]:
    by_code: dict[str, list[TurnRecord]] = defaultdict(list)
    for record in records:
        by_code[record.session].append(record)
    details: dict[str, dict] = {}
    for code, in_session in by_code.items():
        trainee_name = forced_trainee or next((r.trainee for r in in_session if r.trainee), None)
        details[code] = {
            "source": in_session[0].source,
            "trainee": trainees.get(trainee_name) if trainee_name else None,
            "held_on": next((r.held_on for r in in_session if r.held_on), None),
        }
    existing = {s.code: s for s in Session.objects.select_for_update().filter(code__in=list(details))}
    today = timezone.localdate()
    changed: list[Session] = []
    fresh: list[Session] = []
    for code, values in details.items():
        session = existing.get(code)
        if session is None:
            fresh.append(
                Session(
                    code=code,
                    title="",  # a title is the supervisor's to give in the admin; pages fall back to the code
                    source=values["source"],
                    trainee=values["trainee"],
                    held_on=values["held_on"] or today,
                    taxonomy_version=catalogue.TAXONOMY_VERSION,
                    created_by=created_by,
                )
            )
            continue
        dirty = False
        for name in ("source", "trainee", "held_on"):
            if values[name] is not None and getattr(session, name) != values[name]:
                setattr(session, name, values[name])
                dirty = True
        if dirty:
            changed.append(session)
    for session in Session.objects.bulk_create(fresh, batch_size=1000):
        existing[session.code] = session
    if changed:
        Session.objects.bulk_update(changed, ["source", "trainee", "held_on", "updated_at"])
    return existing


def _links(model, codes: list[str]) -> dict[int, list[str]]:
    links: dict[int, list[str]] = defaultdict(list)
    for turn_id, code in model.objects.filter(turn__session__code__in=codes).values_list("turn_id", "label__code"):
        links[turn_id].append(code)
    return links


def _comments_to_add(turn_id: int, record: TurnRecord, existing: set[tuple], created_by) -> list[SupervisorComment]:
    fresh = []
    for comment in record.comments:
        key = comment.key()
        if key in existing:
            continue
        existing.add(key)
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
    return fresh


def today_local() -> datetime.date:
    return timezone.localdate()
