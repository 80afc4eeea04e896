"""The nightly review and the review gauge (writes).

``gauge_compute`` is set-based: one SQL statement aggregates the sessions in scope (GROUP BY, and
window functions over client turns for transitions, silent-close runs and the last client turn) into a
tally per session; Python then works per session (never per turn) to derive the figures, and
snapshots and suggested critiques are written with one ``INSERT … SELECT FROM jsonb_to_recordset …
ON CONFLICT`` each. A session's tally is kept (``SessionTally``) with the revision of its rows it was
computed from; the aggregate runs only over sessions whose rows changed since (database triggers keep
the revisions, whoever writes), so a nightly run costs what changed plus one read of the kept tallies.
Only snapshots and suggestions whose content changed are written. Idempotent: a re-run for the same
day leaves the same rows and removes the day's snapshots that no longer apply.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import inspect
import json
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from portal.perf import without_cyclic_gc
from supervision import rules
from supervision.gauge import figures
from supervision.gauge.models import DismissedSuggestion, GaugeSnapshot, SessionTally, TargetBand
from supervision.models import CommentAuthor, CommentKind, Severity, SupervisorComment
from supervision.roles import supervises
from supervision.services import ServiceError
from taxonomy import catalogue

# Every suggestion the gauge makes has a key starting with this, so a re-run can find its own.
SUGGESTION_PREFIX = "gauge:"
SILENT_CLOSE_KEY = SUGGESTION_PREFIX + "silent_close"
CLOSED_ON_RESUMING_KEY = SUGGESTION_PREFIX + "closed_on_resuming"
BAND_KEY = SUGGESTION_PREFIX + "band:{category}"
# Band suggestions judge the session as a whole (they are pinned to its last counselor turn for storage).
SESSION_WIDE_KEY_PREFIX = BAND_KEY.partition("{")[0]


@dataclass(frozen=True)
class GaugeRun:
    day: datetime.date
    trainees: int
    sessions: int
    turns: int
    suggestions: int

    def summary(self) -> dict[str, int]:
        """The last stdout line of ``compute_gauges`` (CONTRACT.md §4)."""
        return {"trainees": self.trainees, "sessions": self.sessions, "turns": self.turns}


def nightly_review(*, day: datetime.date) -> dict[str, object]:
    """The nightly job: runs every service named in ``settings.NIGHTLY_REVIEW_STEPS`` with ``day=``.

    HOOK: later steps (tendency tags, trajectory audits) are added to that setting, not here.
    Returns each step's result keyed by its dotted path.
    """
    return {dotted: import_string(dotted)(day=day) for dotted in settings.NIGHTLY_REVIEW_STEPS}


def tallies_forget() -> int:
    """Drops every kept session tally, so the next run aggregates every session in scope from its rows
    (``compute_gauges --full``). Returns how many were dropped."""
    deleted, _by_model = SessionTally.objects.all().delete()
    return deleted


def current_bands() -> dict[str, figures.Band]:
    return {
        category: (float(low), float(high))
        for category, low, high in TargetBand.objects.values_list("category", "low", "high")
    }


class GaugeUnavailable(Exception):
    """The gauge's set-based SQL is PostgreSQL's; the embedded SQLite of `make run` cannot run it."""


def gauge_available() -> bool:
    return connection.vendor == "postgresql"


@transaction.atomic
def gauge_compute(*, day: datetime.date) -> GaugeRun:
    """Writes the snapshots dated ``day``: one per trainee over the sessions held in the
    ``GAUGE_WINDOW_DAYS`` days ending ``day`` and one per such session; then the suggested critiques.

    Sessions whose rows have not changed since the last run are not aggregated again: their kept tallies
    are read (``SessionTally``; ``tallies_forget`` makes the next run aggregate every session; a test
    holds both ways to the same result)."""
    if not gauge_available():
        raise GaugeUnavailable(
            "검토 지표는 PostgreSQL에서 계산됩니다. DATABASE_URL로 PostgreSQL을 지정해 주세요 "
            "(the review gauge needs PostgreSQL)."
        )
    with without_cyclic_gc():
        return _gauge_compute(day=day)


def _gauge_compute(*, day: datetime.date) -> GaugeRun:
    start = day - datetime.timedelta(days=settings.GAUGE_WINDOW_DAYS - 1)
    bands = current_bands()
    computed_at = timezone.now()
    sessions = _session_tallies(start=start, day=day, computed_at=computed_at)

    by_trainee: dict[int, figures.Tally] = defaultdict(figures.Tally)
    for session in sessions:
        by_trainee[session.trainee_id].add(session.tally)
    due = [DueSnapshot(trainee_id, None, tally, bands) for trainee_id, tally in by_trainee.items()]
    due += [DueSnapshot(s.trainee_id, s.session_id, s.tally, bands) for s in sessions]
    _write_snapshots(day, due, bands, computed_at)
    suggestions = _suggest(sessions, bands)
    return GaugeRun(
        day=day,
        trainees=len(by_trainee),
        sessions=len(sessions),
        turns=sum(session.tally.turns for session in sessions),
        suggestions=suggestions,
    )


# Which version of the figures' definitions a snapshot was derived with: a change to figures.py changes
# every snapshot's digest, so nothing derived the old way is reused.
def _source_digest(module) -> str:
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):  # a deployment without .py files: digests then change with the data only
        source = module.__name__
    return hashlib.sha1(source.encode()).hexdigest()


_FIGURES_SOURCE = _source_digest(figures)


class DueSnapshot:
    """A snapshot the day needs: trainee-wide (``session_id`` None) or per session.

    Its figures are a function of the tally and the bands alone (``figures.snapshot_figures``), so
    ``digest`` identifies them without computing them: equal digests, equal figures.
    """

    __slots__ = ("digest", "session_id", "tally", "trainee_id")

    def __init__(self, trainee_id: int, session_id: int | None, tally: figures.Tally, bands) -> None:
        self.trainee_id, self.session_id, self.tally = trainee_id, session_id, tally
        self.digest = hashlib.sha1(
            repr((_FIGURES_SOURCE, trainee_id, session_id, sorted(bands.items()), tally.canonical())).encode()
        ).hexdigest()

    @property
    def key(self) -> tuple[int, int | None]:
        return self.trainee_id, self.session_id


@dataclass
class SessionAggregate:
    session_id: int
    trainee_id: int
    tally: figures.Tally
    silent_close_turns: list[int]
    last_client_turn: int | None
    acknowledged: bool | None
    last_counselor_turn: int | None
    revision: int = 0
    suggestions_digest: str = ""

    def events(self) -> dict:
        """Where the session's events happened (the turns its suggestions go on), for ``SessionTally``."""
        return {
            "silent_close_turns": self.silent_close_turns,
            "last_client_turn": self.last_client_turn,
            "acknowledged": self.acknowledged,
            "last_counselor_turn": self.last_counselor_turn,
        }

    @classmethod
    def empty(cls, session_id: int) -> SessionAggregate:
        """A session before any of the statement's rows for it are folded in (or one without turns)."""
        return cls(session_id, 0, figures.Tally(sessions=1), [], None, None, None)

    @classmethod
    def kept(cls, session_id: int, trainee_id: int, tally: str, events: str, suggestions_digest: str):
        """From a ``SessionTally`` row as a raw cursor returns it (Django leaves jsonb as text)."""
        tally, events = json.loads(tally), json.loads(events)
        return cls(
            session_id,
            trainee_id,
            figures.Tally.from_json(tally),
            events["silent_close_turns"],
            events["last_client_turn"],
            events["acknowledged"],
            events["last_counselor_turn"],
            suggestions_digest=suggestions_digest,
        )


_SESSION_SQL = """
-- One statement, one row per (kind, session, key): the per-session figures as narrow grouped rows that
-- Python folds into a tally per session (the trainee-wide tally is the sum of those; turns are never
-- re-read for it). Measured on 1,000,000 turns (EXPLAIN ANALYZE, supervision/gauge/README.md):
-- reading client turns in (session_id, seq) order through the unique index costs more than a hash join
-- and an in-memory sort, so the planner's sort is kept; the window runs over client turns only and
-- carries ids, not labels, so transitions are two hash joins on turn_client_state grouped by label id.
-- Over every session in scope, the turns each branch reads are a subquery the planner flattens into the
-- branch, not a CTE: a CTE used several times is materialized, and a CTE scan makes the planner hash the
-- turns instead of the sessions and gives up the parallel scans. Over a few sessions (the nightly run:
-- the changed ones) it is the other way round: scoped_turns reads their turns once through the index
-- into a CTE the branches share (100 of 5,000 sessions: 0.13 s against 0.23 s for four index scans).
WITH {scoped}client AS MATERIALIZED (
    -- each session's client turns in seq order (counselor turns in between do not matter to any
    -- client figure); a client turn with words starts a new island, a run is the no-input turns of one
    SELECT session_id, id, seq, no_input, closing, acknowledges,
           lag(id) OVER w AS previous_id,
           count(*) FILTER (WHERE NOT no_input) OVER w AS island,
           lead(id) OVER w IS NULL AS is_last
    FROM (
        -- stage and act ride along for the closing figure, so it needs no second look at the turns
        -- (that join scanned ~250k 정리 turns to use 5,000 of them)
        SELECT t.session_id, t.seq, t.id, {no_input} AS no_input, t.stage = %(closing_stage)s AS closing,
               COALESCE(t.dialog_act = ANY(%(ack)s), false) AS acknowledges
        FROM {turns} t
        WHERE t.speaker = %(client)s
    ) client_turns
    WINDOW w AS (PARTITION BY session_id ORDER BY seq)
),
turn_counts AS MATERIALIZED (
    SELECT t.session_id, count(*) AS turns,
           count(*) FILTER (WHERE t.speaker = %(counselor)s) AS counselor_turns,
           max(t.seq) FILTER (WHERE t.speaker = %(counselor)s) AS last_counselor_seq
    FROM {turns} t
    GROUP BY t.session_id
),
critique_rows AS MATERIALIZED (
    SELECT t.session_id, t.id AS turn_id, t.speaker, c.intent_deviation AS deviation
    FROM supervisor_comment c
    JOIN {turns} t ON t.id = c.turn_id
    WHERE c.kind = %(critique)s AND NOT c.is_suggestion
)
-- turns, counselor turns and the session's last counselor turn
SELECT 'turns', c.session_id, NULL, c.turns, c.counselor_turns, t.id
FROM turn_counts c LEFT JOIN turns t ON t.session_id = c.session_id AND t.seq = c.last_counselor_seq
UNION ALL
-- technique labels on counselor turns, grouped by label id first (then 30 codes joined in)
SELECT 'technique', per_label.session_id, l.code, per_label.n, NULL, NULL FROM (
    SELECT t.session_id, tt.label_id, count(*) AS n
    FROM turn_technique tt JOIN {turns} t ON t.id = tt.turn_id
    WHERE t.speaker = %(counselor)s
    GROUP BY t.session_id, tt.label_id
) per_label JOIN technique_label_def l ON l.id = per_label.label_id
UNION ALL
SELECT 'transition', pairs.session_id, a.code || '>' || b.code, pairs.n, NULL, NULL FROM (
    SELECT c.session_id, pa.label_id AS earlier, pb.label_id AS later, count(*) AS n
    FROM client c
    JOIN turn_client_state pa ON pa.turn_id = c.previous_id
    JOIN turn_client_state pb ON pb.turn_id = c.id
    GROUP BY c.session_id, pa.label_id, pb.label_id
) pairs JOIN client_state_def a ON a.id = pairs.earlier JOIN client_state_def b ON b.id = pairs.later
UNION ALL
-- one row per silent-close run: the turn completing it (the run-th no-input turn)
SELECT 'silent', session_id, NULL, 1, (array_agg(id ORDER BY seq))[%(run)s], NULL
FROM client WHERE no_input GROUP BY session_id, island HAVING count(*) >= %(run)s
UNION ALL
-- the last client turn when it is in the closing stage: 1 = acknowledges, 0 = resuming
SELECT 'closing', session_id, NULL, acknowledges::int, id, NULL
FROM client WHERE is_last AND closing
UNION ALL
SELECT 'severity', session_id, deviation->>'severity', count(*), NULL, NULL
FROM critique_rows WHERE deviation->>'severity' IS NOT NULL GROUP BY 2, 3
UNION ALL
SELECT 'dimension', session_id, deviation->>'dimension', count(*), NULL, NULL
FROM critique_rows WHERE COALESCE(deviation->>'dimension', '') <> '' GROUP BY 2, 3
UNION ALL
SELECT 'deviation', session_id, NULL, count(DISTINCT turn_id), NULL, NULL
FROM critique_rows
WHERE speaker = %(counselor)s AND deviation IS NOT NULL AND deviation <> '{{}}'::jsonb
GROUP BY session_id
UNION ALL
-- the session's revision, read in the same snapshot as the rows above (see SessionTally)
SELECT 'session', s.id, NULL, s.trainee_id, COALESCE(r.revision, 0), NULL
FROM sessions s LEFT JOIN gauge_session_revision r ON r.session_id = s.id WHERE {in_scope}
"""

# Bumped when the Python that folds the statement's rows into a tally changes meaning (with the statement's
# text and constants it makes up ``SessionTally.sql_digest``: kept tallies of another version are recomputed).
_TALLY_FORMAT = 1


_IN_SCOPE = "s.trainee_id IS NOT NULL AND s.held_on BETWEEN %(start)s AND %(day)s"


def _aggregate_statement(*, some: bool) -> tuple[str, dict]:
    """The aggregate statement over the sessions in scope (``some``: only those in ``%(ids)s``), and its
    constant parameters."""
    no_input, no_input_params = rules.no_input_sql("t.text", "t.dialog_act")
    # The no-input expression carries positional parameters; inline them as named ones.
    names = ("silence_act", "wordless")
    for name in names:
        no_input = no_input.replace("%s", f"%({name})s", 1)
    params = {
        **dict(zip(names, no_input_params, strict=True)),
        "counselor": catalogue.COUNSELOR,
        "client": catalogue.CLIENT,
        "run": catalogue.SILENT_CLOSE_RUN,
        "ack": sorted(catalogue.CLOSING_ACK_ACTS),
        "closing_stage": catalogue.CLOSING_STAGE,
        "critique": CommentKind.CRITIQUE,
    }
    if some:
        # the id list on the turns too, so the planner reads them through the (session_id, seq) index
        # (with it on the sessions only, it scanned all 1M turns four times: 0.41 s for 100 sessions)
        in_scope = _IN_SCOPE + " AND s.id = ANY(%(ids)s)"
        scoped = (
            "scoped_turns AS MATERIALIZED (SELECT t.id, t.session_id, t.seq, t.speaker, t.stage, t.dialog_act, "
            f"t.text FROM turns t JOIN sessions s ON s.id = t.session_id AND {in_scope} "
            "WHERE t.session_id = ANY(%(ids)s)), "
        )
        turns = "scoped_turns"
    else:
        in_scope, scoped = _IN_SCOPE, ""
        turns = f"(SELECT t.* FROM turns t JOIN sessions s ON s.id = t.session_id AND {in_scope})"
    return _SESSION_SQL.format(no_input=no_input, in_scope=in_scope, scoped=scoped, turns=turns), params


@functools.cache
def tally_sql_digest() -> str:
    """Identifies what a kept tally was computed with: the statement, its constants and the fold."""
    sql, params = _aggregate_statement(some=False)
    return _digest([_TALLY_FORMAT, sql, params])


def _digest(value) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()


def _session_tallies(
    *, start: datetime.date, day: datetime.date, computed_at: datetime.datetime
) -> list[SessionAggregate]:
    """Every session in scope, ordered by id: kept tallies where the session's rows have not changed since
    (same revision, same statement), the others aggregated now from their rows and kept for next time."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.id, s.trainee_id, g.tally, g.events, g.suggestions_digest FROM sessions s "
            "LEFT JOIN gauge_session_revision r ON r.session_id = s.id "
            "LEFT JOIN gauge_session_tally g ON g.session_id = s.id "
            "  AND g.sql_digest = %(digest)s AND g.revision >= COALESCE(r.revision, 0) "
            f"WHERE {_IN_SCOPE} ORDER BY s.id",
            {"start": start, "day": day, "digest": tally_sql_digest()},
        )
        rows = cursor.fetchall()
    stale = [session_id for session_id, _trainee, tally, _events, _suggested in rows if tally is None]
    if not stale:
        fresh = {}
    else:
        # every session (a first run, or after tallies_forget): the statement's own scope, no id list
        fresh = _session_aggregates(start=start, day=day, ids=None if len(stale) == len(rows) else stale)
        _keep_tallies(fresh.values(), computed_at)
    return [
        fresh[session_id]
        if tally is None
        else SessionAggregate.kept(session_id, trainee_id, tally, events, suggestions_digest)
        for session_id, trainee_id, tally, events, suggestions_digest in rows
        if tally is not None or session_id in fresh  # a session held after the first read is left to the next run
    ]


def _session_aggregates(
    *, start: datetime.date, day: datetime.date, ids: list[int] | None
) -> dict[int, SessionAggregate]:
    sql, params = _aggregate_statement(some=ids is not None)
    params.update(start=start, day=day, ids=ids)
    with connection.cursor() as cursor:
        # The client-turn sort must not spill to disk; JIT compilation costs more than it saves on this
        # statement (both local to this transaction).
        cursor.execute("SET LOCAL work_mem = '256MB'; SET LOCAL jit = off")
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    sessions: dict[int, SessionAggregate] = {}
    scoped = {}
    for kind, session_id, key, n, turn_id, other in rows:
        if kind == "session":
            scoped[session_id] = (n, turn_id)
            continue
        session = sessions.get(session_id)
        if session is None:
            session = sessions[session_id] = SessionAggregate.empty(session_id)
        tally = session.tally
        if kind == "turns":
            tally.turns, tally.counselor_turns, session.last_counselor_turn = n, turn_id, other
        elif kind == "technique":
            tally.techniques[key] = n
        elif kind == "transition":
            tally.transitions[key] = n
        elif kind == "silent":
            tally.silent_close_events += 1
            session.silent_close_turns.append(turn_id)
        elif kind == "closing":
            session.last_client_turn, session.acknowledged = turn_id, bool(n)
            tally.closing_acknowledged, tally.closed_on_resuming_client = n, 1 - n
        elif kind == "severity":
            tally.critiques[key] = n
        elif kind == "dimension":
            tally.dimensions[key] = n
        elif kind == "deviation":
            tally.deviation_turns = n
    result = {}
    for session_id in sorted(scoped):
        session = sessions.get(session_id) or SessionAggregate.empty(session_id)
        session.trainee_id, session.revision = scoped[session_id]
        session.silent_close_turns.sort()
        result[session_id] = session
    return result


def _keep_tallies(sessions, computed_at: datetime.datetime) -> None:
    """Upserts the tallies just computed; their suggestions are written afresh (empty digest)."""
    rows = [
        {
            "session_id": s.session_id,
            "revision": s.revision,
            "sql_digest": tally_sql_digest(),
            "tally": s.tally.as_json(),
            "events": s.events(),
            "suggestions_digest": "",
            "computed_at": computed_at,
        }
        for s in sessions
    ]
    if not rows:
        return
    columns = list(rows[0])
    payload, definition = _recordset(SessionTally, rows, columns)
    names = ", ".join(columns)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != "session_id")
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {SessionTally._meta.db_table} ({names}) "
            f"SELECT {names} FROM jsonb_to_recordset(%s::jsonb) AS r({definition}) "
            f"ON CONFLICT (session_id) DO UPDATE SET {updates}",
            [payload],
        )


def _recordset(model, rows: list[dict], columns: list[str]) -> tuple[str, str]:
    """A JSON parameter and the ``AS r(column type, …)`` list that turns it back into typed rows."""
    fields = {f.column: f for f in model._meta.concrete_fields}
    definition = ", ".join(f"{column} {fields[column].db_type(connection)}" for column in columns)
    payload = json.dumps([{c: row[c] for c in columns} for row in rows], default=_json_default, ensure_ascii=False)
    return payload, definition


def _json_default(value):
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {value!r}")


def _write_snapshots(day: datetime.date, due: list[DueSnapshot], bands, computed_at: datetime.datetime) -> None:
    """Makes the day's snapshots exactly ``due``, writing only what is new or changed.

    - A snapshot of the day with the same digest is left alone (a same-day re-run writes nothing).
    - A per-session snapshot whose figures an earlier day's snapshot already has (the session and the
      bands unchanged since: the usual case on a new night) is copied from it inside the database.
    - The others are computed and written with one COPY (3,172 rows: 0.07 s, where
      ``INSERT … SELECT FROM jsonb_to_recordset`` took 0.19 s, nearly all of it parsing JSON).
    - A changed snapshot of the day is deleted and written again; the day's snapshots of trainees or
      sessions no longer in scope are deleted.
    """
    existing = {
        (trainee_id, session_id): (pk, digest)
        for pk, trainee_id, session_id, digest in GaugeSnapshot.objects.filter(date=day).values_list(
            "pk", "trainee_id", "session_id", "figures_digest"
        )
    }
    needed, replaced = [], []
    for snapshot in due:
        pk, digest = existing.pop(snapshot.key, (None, None))
        if digest != snapshot.digest:
            needed.append(snapshot)
            if pk is not None:
                replaced.append(pk)
    gone = replaced + [pk for pk, _digest in existing.values()]  # the rest: no longer in scope
    if gone:
        GaugeSnapshot.objects.filter(pk__in=gone).delete()
    copied = _copy_earlier_snapshots(day, [s for s in needed if s.session_id is not None], computed_at)
    _insert_snapshots(day, [s for s in needed if s.session_id not in copied], bands, computed_at)


# every column a snapshot's figures are stored in
_FIGURE_COLUMNS = [
    f.column
    for f in GaugeSnapshot._meta.concrete_fields
    if f.column not in ("id", "trainee_id", "session_id", "date", "computed_at")
]


def _copy_earlier_snapshots(day: datetime.date, due: list[DueSnapshot], computed_at: datetime.datetime) -> set[int]:
    """Copies, dated ``day``, the newest earlier snapshot with the same digest of each session in ``due``
    that has one; returns the sessions copied."""
    if not due:
        return set()
    columns = ", ".join(_FIGURE_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {GaugeSnapshot._meta.db_table} (trainee_id, session_id, date, computed_at, {columns}) "
            f"SELECT DISTINCT ON (g.session_id) g.trainee_id, g.session_id, %(day)s, %(now)s, {', '.join(f'g.{c}' for c in _FIGURE_COLUMNS)} "
            f"FROM jsonb_to_recordset(%(due)s::jsonb) AS w(trainee_id bigint, session_id bigint, digest text) "
            # (trainee_id, session_id, date) is the unique index per-session snapshots are found by
            f"JOIN {GaugeSnapshot._meta.db_table} g ON g.trainee_id = w.trainee_id AND g.session_id = w.session_id "
            "  AND g.date < %(day)s AND g.figures_digest = w.digest "
            "ORDER BY g.session_id, g.date DESC "
            "RETURNING session_id",
            {
                "day": day,
                "now": computed_at,
                "due": json.dumps(
                    [{"trainee_id": s.trainee_id, "session_id": s.session_id, "digest": s.digest} for s in due]
                ),
            },
        )
        return {session_id for (session_id,) in cursor.fetchall()}


def _insert_snapshots(day: datetime.date, due: list[DueSnapshot], bands, computed_at: datetime.datetime) -> None:
    if not due:
        return
    json_columns = {f.column for f in GaugeSnapshot._meta.concrete_fields if isinstance(f, models.JSONField)}
    dumps = functools.partial(json.dumps, ensure_ascii=False)
    columns = ["trainee_id", "session_id", "date", "computed_at", *_FIGURE_COLUMNS]
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(f"COPY {GaugeSnapshot._meta.db_table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for snapshot in due:
            values = {**figures.snapshot_figures(snapshot.tally, bands), "figures_digest": snapshot.digest}
            copy.write_row(
                [
                    snapshot.trainee_id,
                    snapshot.session_id,
                    day,
                    computed_at,
                    *(dumps(values[c]) if c in json_columns else values[c] for c in _FIGURE_COLUMNS),
                ]
            )


# ---------------------------------------------------------------------------------------------------
# Suggested critiques


# The wording of the suggestions. It is part of every session's suggestion digest, so a change of wording
# rewrites every pending suggestion on the next run.
SUGGESTION_WORDING = {
    SILENT_CLOSE_KEY: (
        f"내담자의 무응답이 {catalogue.SILENT_CLOSE_RUN}회 이상 이어졌습니다(연속 무응답 종료, silent close). "
        "침묵을 다루는 개입(홀딩, 정서 반영, 확인 질문)이 있었는지 검토해 주세요.",
        {"dimension": "대화행위 (dialog_act)", "severity": Severity.MODERATE.value},
    ),
    CLOSED_ON_RESUMING_KEY: (
        "정리 단계의 마지막 내담자 발화가 종결 수긍이 아니라 이야기를 이어가려는 신호인데 회기가 끝났습니다"
        "(closed on a resuming client). 내담자의 마지막 말을 다루었는지 검토해 주세요.",
        {"dimension": "종결 (closing)", "severity": Severity.MODERATE.value},
    ),
    BAND_KEY: (
        "이 회기의 {code} 기법 비율 {share:.2f}이(가) 목표 범위 {low:.2f}–{high:.2f}를 벗어났습니다({word}, {status}).",
        {"dimension": "기법 균형 (technique balance)", "severity": Severity.MINOR.value},
    ),
}
_WORDING_DIGEST = _digest(SUGGESTION_WORDING)


@dataclass(frozen=True)
class _SessionEvents:
    """What a session's suggestions are made of (their wording aside)."""

    silent_close_turns: tuple[int, ...]
    resuming_turn: int | None
    band_turn: int | None
    off_band: tuple[tuple[str, str, float, float, float], ...]  # (category, status, share, low, high)

    @property
    def count(self) -> int:
        return len(self.silent_close_turns) + (self.resuming_turn is not None) + len(self.off_band)

    def suggestions(self) -> list[dict]:
        made = [_suggestion(turn_id, SILENT_CLOSE_KEY) for turn_id in self.silent_close_turns]
        if self.resuming_turn is not None:
            made.append(_suggestion(self.resuming_turn, CLOSED_ON_RESUMING_KEY))
        for code, status, share, low, high in self.off_band:
            word = "부족" if status == figures.UNDER else "과다"
            made.append(
                _suggestion(
                    self.band_turn,
                    BAND_KEY,
                    key=BAND_KEY.format(category=code),
                    fill={"code": code, "share": share, "low": low, "high": high, "word": word, "status": status},
                    expected=f"{code} {low:.2f}–{high:.2f}",
                    actual=f"{code} {share:.2f}",
                )
            )
        return made


def _session_events(session: SessionAggregate, categories: dict[str, dict]) -> _SessionEvents:
    off_band = ()
    if session.last_counselor_turn is not None:
        off_band = tuple(
            (code, c["status"], c["share"], *c["band"])
            for code, c in categories.items()
            if c["status"] in (figures.UNDER, figures.OVER)
        )
    return _SessionEvents(
        silent_close_turns=tuple(session.silent_close_turns),
        resuming_turn=session.last_client_turn if session.acknowledged is False else None,
        band_turn=session.last_counselor_turn,
        off_band=off_band,
    )


def _suggest(sessions: list[SessionAggregate], bands) -> int:
    """Suggests a critique (author ``ai``, ``is_suggestion``) on the turn where each event happened:

    - a silent close: on the client turn that completes the run (the ``SILENT_CLOSE_RUN``-th no-input turn);
    - a session closed on a resuming client: on that last client turn;
    - a category outside its band in a session: on the session's last counselor turn (the balance is
      the session's as a whole, so it is pinned where the session ends).

    Pending suggestions of the gauge that no longer apply are removed; accepted ones are never touched;
    dismissed ones (``DismissedSuggestion``) are not suggested again. Only sessions whose events or the
    wording differ from what was last written for them (``SessionTally.suggestions_digest``: reset
    whenever the session's rows change) are written. Returns the number of suggestions made in scope.
    """
    made, wanted, digests = 0, [], {}
    for session in sessions:
        events = _session_events(session, figures.categories(session.tally.techniques, bands))
        made += events.count
        digest = hashlib.sha1(repr((_WORDING_DIGEST, events)).encode()).hexdigest()
        if digest != session.suggestions_digest:
            wanted += events.suggestions()
            digests[session.session_id] = digest
    if digests:
        _write_suggestions(wanted, digests)
    return made


def _write_suggestions(wanted: list[dict], digests: dict[int, str]) -> None:
    """Makes the pending gauge suggestions of the sessions in ``digests`` exactly ``wanted`` and records
    the digests those sessions' suggestions now have."""
    now = timezone.now()
    table = SupervisorComment._meta.db_table
    columns = ["turn_id", "kind", "text", "intent_deviation", "author", "is_suggestion", "suggestion_key"]
    names = ", ".join([*columns, "created_at", "updated_at"])
    # What already exists is decided in SQL, not by reading every pending suggestion back into Python:
    # the wanted rows arrive as one JSON array (json.dumps is C; adapting four Python lists of 37.5k
    # items to SQL arrays took 0.5 s).
    # - pending gauge suggestions in scope that this run no longer makes are deleted;
    # - a wanted row is inserted only when it is new or a pending one says something else (on a nightly
    #   re-run most say the same and are left alone); accepted ones are never touched, dismissed ones
    #   never come back.
    # One statement: the DELETE sees the same snapshot as the INSERT, and the rows it removes are by
    # definition not wanted, so the two never meet.
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH written AS (UPDATE {SessionTally._meta.db_table} g SET suggestions_digest = d.digest "
            "  FROM jsonb_each_text(%(digests)s::jsonb) AS d(session_id, digest)"
            "  WHERE g.session_id = d.session_id::bigint"
            "), wanted AS MATERIALIZED ("
            "  SELECT turn_id, suggestion_key, text, intent_deviation"
            "  FROM jsonb_to_recordset(%(wanted)s::jsonb)"
            "    AS w(turn_id bigint, suggestion_key text, text text, intent_deviation jsonb)"
            "), stale AS ("
            f"  DELETE FROM {table} c USING turns t"
            "  WHERE t.id = c.turn_id AND t.session_id = ANY(%(sessions)s) AND c.is_suggestion"
            "    AND c.suggestion_key LIKE %(prefix)s"
            # NOT IN over the materialized list is a hashed subplan whatever the (often stale: the
            # nightly run itself churns suggestions) row estimate for pending suggestions says;
            # NOT EXISTS got a nested loop over 37.5k × 37.5k rows. Neither column is ever null.
            "    AND (c.turn_id, c.suggestion_key) NOT IN (SELECT w.turn_id, w.suggestion_key FROM wanted w)"
            ") "
            f"INSERT INTO {table} ({names}) "
            "SELECT w.turn_id, %(kind)s, w.text, w.intent_deviation, %(author)s, true, w.suggestion_key, %(now)s, %(now)s "
            f"FROM wanted w LEFT JOIN {table} c ON c.turn_id = w.turn_id AND c.suggestion_key = w.suggestion_key "
            "WHERE (c.id IS NULL OR c.is_suggestion AND (c.text, c.intent_deviation) IS DISTINCT FROM (w.text, w.intent_deviation)) "
            f"AND NOT EXISTS (SELECT 1 FROM {DismissedSuggestion._meta.db_table} d "
            "WHERE d.turn_id = w.turn_id AND d.suggestion_key = w.suggestion_key) "
            "ON CONFLICT (turn_id, suggestion_key) WHERE NOT (suggestion_key = '') DO UPDATE "
            "SET text = EXCLUDED.text, intent_deviation = EXCLUDED.intent_deviation, updated_at = EXCLUDED.updated_at "
            f"WHERE {table}.is_suggestion",
            {
                "wanted": json.dumps(wanted, ensure_ascii=False),
                "digests": json.dumps(digests),
                "sessions": list(digests),
                "prefix": SUGGESTION_PREFIX + "%",
                "kind": CommentKind.CRITIQUE,
                "author": CommentAuthor.AI,
                "now": now,
            },
        )


def _suggestion(turn_id: int, kind: str, *, key: str | None = None, fill: dict | None = None, **deviation) -> dict:
    text, fixed = SUGGESTION_WORDING[kind]
    return {
        "turn_id": turn_id,
        "text": text.format(**fill) if fill else text,
        "intent_deviation": {**fixed, **deviation},
        "suggestion_key": key or kind,
    }


def _reviewable_suggestion(comment: SupervisorComment, user) -> None:
    if not comment.is_suggestion:
        raise ServiceError("이미 처리된 논평입니다(AI 제안이 아님).")
    if not supervises(user, comment.turn.session.trainee_id):
        raise ServiceError("이 수련생의 슈퍼바이저만 AI 제안을 승인하거나 기각할 수 있습니다.")


@transaction.atomic
def suggestion_accept(*, comment: SupervisorComment, user) -> SupervisorComment:
    """The supervisor takes the suggestion over: from now on it is theirs, counted, exported and shown."""
    _reviewable_suggestion(comment, user)
    comment.author = CommentAuthor.SUPERVISOR
    comment.is_suggestion = False
    comment.written_by = user
    comment.full_clean()
    comment.save()
    return comment


@transaction.atomic
def suggestion_dismiss(*, comment: SupervisorComment, user) -> None:
    """Deletes the suggestion and remembers it, so the next nightly run does not suggest it again."""
    _reviewable_suggestion(comment, user)
    DismissedSuggestion.objects.get_or_create(
        turn_id=comment.turn_id, suggestion_key=comment.suggestion_key, defaults={"dismissed_by": user}
    )
    comment.delete()
