"""Writes for the trajectory audit: windows of stored sessions → engine → TrajectoryAudit rows (COPY).

Windowing: WINDOW_TURNS = 10 consecutive turns (both speakers) with stride WINDOW_STRIDE = 5, so every turn
is seen in two windows and a deterioration that straddles a boundary is still inside one window; when the
tail is not covered, one more window ends at the session's last turn. A session shorter than 10 turns is one
window. Ten turns is what the engine's templates and thresholds were designed for (about five client states).

Call sites: the nightly task (``trajectory_nightly``: only the sessions whose rows changed since their last
audit) and, after a successful import, the Celery task ``supervision.audit_sessions`` that the importer
queues once its transaction commits.

Which sessions changed: the gauge's revision marks (``gauge_session_revision``, kept by PostgreSQL triggers
on turns, technique and client-state links and accepted comments, whoever writes). ``AuditedRevision``
keeps, per session, the revision and engine version its audits were computed from.

Many sessions audited by a command (``audit_trajectories``, ``compute_gauges``) are spread over
``settings.TRAJECTORY_AUDIT_PROCESSES`` local processes, each reading, auditing and storing whole batches
on a database connection of its own. Inside a Celery task there is no such pool: the nightly task splits a
big night into chunk tasks (``trajectory_prepare``, see ``supervision.nightly``) that any worker takes.
The engine is deterministic, so the rows are the same whatever the number of processes or workers.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import multiprocessing
import multiprocessing.util
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from itertools import repeat
from typing import Any

from django.conf import settings
from django.db import connection, connections, models, transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone

from supervision import pagecache
from supervision.exporting import label_codes_by_turn
from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.trajectory.engine.audit import audit_sessions
from supervision.trajectory.engine.extractor import ClinicalState
from supervision.trajectory.engine.resources import engine_version, load_resources
from supervision.trajectory.models import TRACE_FIELDS, AuditedRevision, AuditLabels, TrajectoryAudit

logger = logging.getLogger(__name__)

WINDOW_TURNS = 10
WINDOW_STRIDE = 5
BATCH_SESSIONS = 200
# Below this many sessions, starting worker processes costs more than it saves.
POOL_MIN_SESSIONS = 10
# A worker's batches are not smaller than this: each is a transaction (a staging table, COPY, upsert).
MIN_POOL_BATCH = 5

# The columns written by COPY, in the order audit_rows() gives them.
_COLUMNS = (
    "session_id",
    "window_index",
    "first_seq",
    "last_seq",
    "label",
    "score",
    "explanation",
    "states",
    "sycophancy_turns",
    "engine_version",
    "computed_at",
)
_INCOMING = "trajectory_audit_incoming"
_INCOMING_DDL = (
    f"CREATE TEMP TABLE IF NOT EXISTS {_INCOMING} (session_id bigint, window_index integer, first_seq integer, "
    "last_seq integer, label varchar(16), score double precision, explanation text, states jsonb, "
    "sycophancy_turns jsonb, engine_version varchar(40), computed_at timestamptz)"
)

# One turn as the workers get it (tuples pickle faster than dicts):
# (seq, utterance_id, speaker, text, nonverbal, techniques, client_states)
TurnRow = tuple[int, str, str, str, list, list, list]


@dataclass(frozen=True, slots=True)
class AuditRunSummary:
    sessions: int = 0
    windows: int = 0
    turns: int = 0
    removed: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def __add__(self, other: AuditRunSummary) -> AuditRunSummary:
        return AuditRunSummary(
            self.sessions + other.sessions,
            self.windows + other.windows,
            self.turns + other.turns,
            self.removed + other.removed,
        )


@dataclass(frozen=True, slots=True)
class BatchRows:
    """What the engine made of one batch of sessions: COPY rows, and the window count per session."""

    rows: list[tuple]
    kept: dict[int, int]
    turns: int
    suggested: frozenset[int] = frozenset()  # sessions audited on the suggester's labels (CONTRACT §9)


def window_bounds(n_turns: int, size: int = WINDOW_TURNS, stride: int = WINDOW_STRIDE) -> list[tuple[int, int]]:
    """Half-open [start, end) index ranges over a session's turns (see the module doc)."""
    if n_turns <= 0:
        return []
    if n_turns <= size:
        return [(0, n_turns)]
    bounds = [(start, start + size) for start in range(0, n_turns - size + 1, stride)]
    if bounds[-1][1] < n_turns:
        bounds.append((n_turns - size, n_turns))
    return bounds


def _revision_marks() -> bool:
    """The revision triggers exist on PostgreSQL only; elsewhere every session counts as changed."""
    return connection.vendor == "postgresql"


def _read_batch(session_ids: Sequence[int]) -> tuple[dict[int, int], list[tuple[int, list[TurnRow]]]]:
    """The sessions' revisions, then their turns in seq order: one query for the revisions, one for turns,
    one per label table. The revisions are read first: a write committed after them is seen again later."""
    revisions: dict[int, int] = {}
    if _revision_marks():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.id, COALESCE(r.revision, 0) FROM sessions s "
                "LEFT JOIN gauge_session_revision r ON r.session_id = s.id WHERE s.id = ANY(%s)",
                [list(session_ids)],
            )
            revisions = dict(cursor.fetchall())
    else:
        revisions = dict.fromkeys(Session.objects.filter(id__in=session_ids).values_list("id", flat=True), 0)
    techniques = label_codes_by_turn(TurnTechnique, session_ids)
    states = label_codes_by_turn(TurnClientState, session_ids)
    by_session: dict[int, list[TurnRow]] = defaultdict(list)
    # The non-verbal cues as JSON text, decoded here only when there are any: most turns have none, and the
    # JSON field's own decoding of every "[]" was half of this read's time (profiled).
    rows = (
        Turn.objects.filter(session_id__in=session_ids)
        .order_by("session_id", "seq")
        .values_list("id", "session_id", "seq", "utterance_id", "speaker", "text", Cast("nonverbal", TextField()))
    )
    empty: list[str] = []
    for turn_id, session_id, seq, utterance_id, speaker, text, nonverbal in rows:
        by_session[session_id].append(
            (
                seq,
                utterance_id,
                speaker,
                text,
                _nonverbal_cues(nonverbal, empty),
                techniques.get(turn_id, empty),
                states.get(turn_id, empty),
            )
        )
    return revisions, [(sid, by_session.get(sid, [])) for sid in session_ids if sid in revisions]


def _nonverbal_cues(as_json: str | None, empty: list[str]) -> list:
    """What the JSON field would give for the column's text (``[]`` for none, as the engine expects)."""
    if not as_json or as_json == "[]":
        return empty
    return json.loads(as_json) or empty


def with_suggested_labels(
    sessions: list[tuple[int, list[TurnRow]]],
) -> tuple[list[tuple[int, list[TurnRow]]], frozenset[int]]:
    """CONTRACT §9: a session none of whose turns carries a technique or client state is audited on the
    label suggester's labels it reads less what supervisors dismissed (``labels_for_audit_of``), when it has any; the
    sessions so labelled are returned beside. Labelled sessions cost nothing here (no query)."""
    bare = {session_id for session_id, rows in sessions if rows and not any(row[5] or row[6] for row in rows)}
    if not bare:
        return sessions, frozenset()
    # Imported here: the suggester's model (NumPy, SciPy) is loaded only when a session needs it.
    from supervision.suggesting.selectors import labels_for_audit_of

    labels = labels_for_audit_of(bare)
    if not labels:
        return sessions, frozenset()
    out, suggested, empty = [], set(), []
    for session_id, rows in sessions:
        if session_id in bare and any(row[1] in labels for row in rows):
            rows = [
                (seq, uid, speaker, text, nonverbal, *_on_axis(speaker, labels.get(uid, empty), empty))
                for seq, uid, speaker, text, nonverbal, _techniques, _states in rows
            ]
            suggested.add(session_id)
        out.append((session_id, rows))
    return out, frozenset(suggested)


def _on_axis(speaker: str, codes: list[str], empty: list[str]) -> tuple[list[str], list[str]]:
    return (codes, empty) if speaker == "counselor" else (empty, codes)


def audit_rows(
    sessions: Sequence[tuple[int, Sequence[TurnRow]]],
    version: str,
    computed_at: dt.datetime,
    *,
    suggested: frozenset[int] = frozenset(),
) -> BatchRows:
    """The engine over every window of the given sessions, as rows for COPY. Pure: no database, so it runs
    the same in this process or a worker. ``suggested``: the sessions whose labels are the suggester's."""
    kept: dict[int, int] = {}
    n_turns = 0
    work: list[tuple[Sequence[TurnRow], list[tuple[int, int]]]] = []
    for session_id, rows in sessions:
        n_turns += len(rows)
        bounds = window_bounds(len(rows))
        kept[session_id] = len(bounds)
        work.append((rows, bounds))
    audits = audit_sessions(work, with_states=False)
    states_json = _StatesJson(load_resources().classes)
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    out = [
        (
            session_id,
            index,
            rows[start][0],
            rows[end - 1][0],
            result.label,
            result.score,
            result.explanation,
            states_json(result.clinical_states),
            dumps(result.sycophancy_turns),
            version,
            computed_at,
        )
        for (session_id, rows), (_rows, bounds), results in zip(sessions, work, audits, strict=True)
        for index, ((start, end), result) in enumerate(zip(bounds, results, strict=True))
    ]
    return BatchRows(out, kept, n_turns, suggested)


class _StatesJson:
    """A window's states as stored: the JSON text ``json.JSONEncoder(ensure_ascii=False).encode`` gives for
    the list of each state's ``TRACE_FIELDS`` (what the pages, the admin and the safety list read; the
    distortion distribution stays in the engine, where it shapes the label and the explanation), each
    distinct state encoded once: a turn's state is in two windows, and equal in both unless carry_forward
    rewrote it in one (it restarts at each window's first client state).

    A state is formatted from one template rather than through the encoder (profiled: the encoder, with the
    dict it needs, was a fifth of audit_rows): the keys are quoted once, numbers are written as the encoder
    writes them (``int.__repr__`` and ``float.__repr__`` of the rounded value) and the one free string, the
    utterance id, goes through the encoder's own string escaping."""

    _TEMPLATE = '{"seq": %r, "utterance_id": %s, "valence": %r, "arousal": %r, "risk": %r}'

    def __init__(self, classes: Sequence[str]) -> None:
        self._classes = classes
        self._encode = json.JSONEncoder(ensure_ascii=False).encode
        self._quote = json.encoder.encode_basestring
        self._known: dict[ClinicalState, str] = {}

    def __call__(self, states: Sequence[ClinicalState]) -> str:
        known = self._known
        parts = []
        for state in states:
            text = known.get(state)
            if text is None:
                text = known[state] = self._format(state)
            parts.append(text)
        # The encoder's list separator, so the text is byte for byte the encoding of the whole list.
        return "[" + ", ".join(parts) + "]"

    def _format(self, state: ClinicalState) -> str:
        numbers = (state.valence, state.arousal, state.risk)
        if not all(map(math.isfinite, numbers)) or type(state.seq) is not int:
            return self._encode(stored_state(state, self._classes))  # NaN, Infinity: the encoder's spelling
        return self._TEMPLATE % (
            state.seq,
            self._quote(state.utterance_id),
            round(state.valence, 4),
            round(state.arousal, 4),
            round(state.risk, 4),
        )


def stored_state(state: ClinicalState, classes: Sequence[str]) -> dict[str, Any]:
    """One client state as ``TrajectoryAudit.states`` keeps it: the engine's rounded values of TRACE_FIELDS."""
    as_dict = state.as_dict(classes)
    return {key: as_dict[key] for key in TRACE_FIELDS}


def _store(batch: BatchRows, revisions: dict[int, int], version: str) -> AuditRunSummary:
    """One transaction: COPY the rows into a staging table, upsert them (a window keeps its row id), drop
    windows beyond each session's count, and record the revision the audits were computed from."""
    if connection.vendor != "postgresql":
        return _store_portably(batch, revisions, version)
    columns = ", ".join(_COLUMNS)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in _COLUMNS[2:])
    session_ids = list(batch.kept)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"{_INCOMING_DDL}; TRUNCATE {_INCOMING}")
        with cursor.cursor.copy(f"COPY {_INCOMING} ({columns}) FROM STDIN") as copy:
            for row in batch.rows:
                copy.write_row(row)
        # joined to sessions: a session deleted while it was being audited is left out, not an error
        cursor.execute(
            f"INSERT INTO {TrajectoryAudit._meta.db_table} ({columns}) "
            f"SELECT {', '.join('i.' + c for c in _COLUMNS)} FROM {_INCOMING} i JOIN sessions s ON s.id = i.session_id "
            f"ON CONFLICT (session_id, window_index) DO UPDATE SET {updates}"
        )
        # Windows beyond the session's current count are stale (the session got shorter on re-import).
        cursor.execute(
            # ``= ANY`` as well as the join: the planner then reads the sessions' rows through the (session,
            # window) index instead of scanning every audit (0.07 s for 20 of 1,000 sessions).
            f"DELETE FROM {TrajectoryAudit._meta.db_table} a USING unnest(%s::bigint[], %s::integer[]) AS k(sid, n) "
            "WHERE a.session_id = ANY(%s::bigint[]) AND a.session_id = k.sid AND a.window_index >= k.n",
            [session_ids, [batch.kept[s] for s in session_ids], session_ids],
        )
        removed = cursor.rowcount
        cursor.execute(
            f"INSERT INTO {AuditedRevision._meta.db_table} (session_id, revision, engine_version, labels) "
            "SELECT k.sid, k.revision, %s, k.labels "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::varchar[]) AS k(sid, revision, labels) "
            "JOIN sessions s ON s.id = k.sid "
            "ON CONFLICT (session_id) DO UPDATE SET revision = EXCLUDED.revision, "
            "engine_version = EXCLUDED.engine_version, labels = EXCLUDED.labels",
            [version, session_ids, [revisions[s] for s in session_ids], [_labels_of(batch, s) for s in session_ids]],
        )
    return AuditRunSummary(sessions=len(session_ids), windows=len(batch.rows), turns=batch.turns, removed=removed)


def _labels_of(batch: BatchRows, session_id: int) -> str:
    return AuditLabels.SUGGESTED if session_id in batch.suggested else AuditLabels.GIVEN


def _store_portably(batch: BatchRows, revisions: dict[int, int], version: str) -> AuditRunSummary:
    """``_store`` for the embedded SQLite of ``make run`` (no COPY, no arrays): an ORM upsert."""
    rows = [
        TrajectoryAudit(**dict(zip(_COLUMNS, row, strict=True)))
        for row in batch.rows
        if row[0] in revisions  # joined to the sessions read, as the COPY path joins to sessions
    ]
    for row in rows:  # the ORM writes JSON fields from Python values, not from JSON text
        row.states, row.sycophancy_turns = json.loads(row.states), json.loads(row.sycophancy_turns)
    with transaction.atomic():
        TrajectoryAudit.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["session", "window_index"], update_fields=list(_COLUMNS[2:])
        )
        stale = models.Q(pk__in=[])
        for session_id, count in batch.kept.items():
            stale |= models.Q(session_id=session_id, window_index__gte=count)
        removed, _ = TrajectoryAudit.objects.filter(stale).delete()
        AuditedRevision.objects.bulk_create(
            [
                AuditedRevision(
                    session_id=s, revision=revisions[s], engine_version=version, labels=_labels_of(batch, s)
                )
                for s in batch.kept
            ],
            update_conflicts=True,
            unique_fields=["session"],
            update_fields=["revision", "engine_version", "labels"],
        )
    return AuditRunSummary(sessions=len(batch.kept), windows=len(rows), turns=batch.turns, removed=removed)


def _batches(ids: Iterable[int], size: int) -> Iterable[list[int]]:
    batch: list[int] = []
    for session_id in ids:
        batch.append(session_id)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _pool_size(n_sessions: int, processes: int | None) -> int:
    wanted = settings.TRAJECTORY_AUDIT_PROCESSES if processes is None else processes
    if wanted <= 1 or n_sessions < POOL_MIN_SESSIONS:
        return 1
    if connection.vendor != "postgresql":
        # The workers read and write on connections of their own; the embedded SQLite takes one writer.
        return 1
    if connection.in_atomic_block:
        # The workers' connections would not see this transaction's rows, and could wait on its locks.
        return 1
    if multiprocessing.current_process().daemon:
        # A Celery prefork child may not start processes of its own: audit here, one core.
        logger.info("trajectory audit: running in one process (this process is a daemon)")
        return 1
    if _in_worker_task():
        # A worker's task never starts processes (a solo worker could): the night scales out by chunk
        # tasks over every worker, on every machine, not by a pool on one of them.
        return 1
    return wanted


def _in_worker_task() -> bool:
    from celery import current_task

    # the proxy is falsy outside a task
    return bool(current_task) and not current_task.request.is_eager and not current_task.request.called_directly


def _audit_batch(session_ids: list[int], version: str, computed_at: dt.datetime) -> AuditRunSummary:
    """Read, audit and store one batch of sessions (the write is one transaction)."""
    revisions, sessions = _read_batch(session_ids)
    sessions, suggested = with_suggested_labels(sessions)
    return _store(audit_rows(sessions, version, computed_at, suggested=suggested), revisions, version)


def _audit(ids: list[int], *, batch_size: int, processes: int | None) -> AuditRunSummary:
    now = timezone.now()
    version = engine_version()
    total = AuditRunSummary()
    workers = _pool_size(len(ids), processes)
    if workers == 1:
        for batch in _batches(ids, batch_size):
            total += _audit_batch(batch, version, now)
        return total
    # Each worker reads, audits and stores whole batches on its own connection. When this process read and
    # wrote for all of them it was the bottleneck (make bench-scale-night's first-night step: 25.2 s then,
    # 17.6 s now). Several batches per worker, so the last one to finish is not much later than the others;
    # not smaller than MIN_POOL_BATCH, as each batch is a transaction of its own.
    size = max(min(MIN_POOL_BATCH, batch_size), min(batch_size, math.ceil(len(ids) / (workers * 4))))
    load_resources()  # read the data files once; the forked workers inherit them
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_connect_afresh) as pool:
        for summary in pool.map(_audit_batch, _batches(ids, size), repeat(version), repeat(now)):
            total += summary
    return total


# A forked worker's copies of this process's database connections: kept, never used or closed (see below).
_INHERITED_CONNECTIONS: list[Any] = []


def _connect_afresh() -> None:
    """In a forked worker, before its first batch: open database connections of its own on first use.

    The copies of the parent's connections share the parent's sockets, so they are set aside rather than
    closed (closing one would end the parent's session) and never used; the worker's own connections are
    closed when it exits."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None:
            _INHERITED_CONNECTIONS.append(conn.connection)
            conn.connection = None
    multiprocessing.util.Finalize(None, connections.close_all, exitpriority=10)


def trajectory_audit_sessions(
    *, session_ids: Iterable[int] | None = None, batch_size: int = BATCH_SESSIONS, processes: int | None = None
) -> AuditRunSummary:
    """Audit the given sessions (all when None) window by window and store the results.

    Idempotent: a re-run updates the same (session, window_index) rows and removes windows that no longer
    exist. Each batch of sessions is one transaction, so a crash leaves earlier batches consistent.
    Unknown ids are ignored. ``processes`` (default ``settings.TRAJECTORY_AUDIT_PROCESSES``) spreads many
    sessions over worker processes.
    """
    base = Session.objects.order_by("id")
    if session_ids is not None:
        base = base.filter(id__in=list(session_ids))
    rows = list(base.values_list("id", "trainee_id"))
    try:
        return _audit([session_id for session_id, _ in rows], batch_size=batch_size, processes=processes)
    finally:
        # The trainees' pages show the audits ("being recomputed" until they are stored); batches stored before
        # a failure too.
        pagecache.trainees_changed(trainee_id for _, trainee_id in rows)


def sessions_to_audit() -> list[int]:
    """Sessions whose turns or labels changed since their last audit (a newer revision mark), or that were
    audited by another engine version, or never; every session where there are no revision marks."""
    if not _revision_marks():
        return list(Session.objects.order_by("id").values_list("id", flat=True))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.id FROM sessions s "
            "LEFT JOIN gauge_session_revision r ON r.session_id = s.id "
            f"LEFT JOIN {AuditedRevision._meta.db_table} m ON m.session_id = s.id "
            "WHERE m.session_id IS NULL OR m.engine_version <> %s OR m.revision < COALESCE(r.revision, 0) "
            "ORDER BY s.id",
            [engine_version()],
        )
        return [session_id for (session_id,) in cursor.fetchall()]


def trajectory_nightly(*, day: dt.date, full: bool = False, processes: int | None = None) -> dict[str, Any]:
    """The nightly job's trajectory step: audit the sessions whose turns or labels changed since their last
    audit (``sessions_to_audit``), or every session with ``full``.

    ``day`` only labels the run; audits are per session, not per day, so the step is safe to run twice.
    The result counts what was done: ``sessions`` audited (0 on a night where nothing changed, or where
    the night's chunk tasks audited them all first).
    """
    ids = list(Session.objects.order_by("id").values_list("id", flat=True)) if full else sessions_to_audit()
    try:
        summary = _audit(ids, batch_size=BATCH_SESSIONS, processes=processes)
    finally:
        pagecache.everyone_changed()  # many trainees' session pages show the audits
    # "queued" stays in the result's shape; it is 0 since the Celery night audits a big night in chunk
    # tasks of its own (``trajectory_prepare``) before this step, rather than this step queueing parts.
    return {"day": day.isoformat(), **summary.as_dict(), "queued": 0}


def trajectory_pending(*, day: dt.date) -> list[int]:
    """The nightly chunks' part (``settings.NIGHTLY_SESSION_WORK``): the sessions this step would audit."""
    return sessions_to_audit()


def trajectory_prepare(*, day: dt.date, ids: list[int]) -> dict[str, int]:
    """Audits the sessions ``ids`` in this process (a chunk task of the night: the workers are the processes)."""
    return trajectory_audit_sessions(session_ids=ids, processes=1).as_dict()
