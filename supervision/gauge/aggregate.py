"""The per-session tally the review gauge is derived from (reads the turns; keeps the result).

One SQL statement aggregates the sessions in scope (GROUP BY, and window functions over client turns for
transitions, silent-close runs and the last client turn) into narrow rows that Python folds into a
``figures.Tally`` per session, never per turn. A session's tally is kept (``SessionTally``) with the
revision of its rows it was computed from; the statement runs only over sessions whose rows changed since
(database triggers keep the revisions, whoever writes).
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone

from supervision import rules
from supervision.gauge import figures
from supervision.gauge.models import SessionTally
from supervision.models import CommentKind
from supervision.safety.selectors import events_of_all_trainees
from taxonomy import catalogue


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
-- re-read for it). The plan choices below are explained with figures in supervision/gauge/README.md:
-- reading client turns in (session_id, seq) order through the unique index costs more than a hash join
-- and an in-memory sort, so the planner's sort is kept; the window runs over client turns only and
-- carries ids, not labels, so transitions are two hash joins on turn_client_state grouped by label id.
-- Over every session in scope, the turns each branch reads are a subquery the planner flattens into the
-- branch, not a CTE: a CTE used several times is materialized, and a CTE scan makes the planner hash the
-- turns instead of the sessions and gives up the parallel scans. Over a few sessions (the nightly run:
-- the changed ones) it is the other way round: scoped_turns reads their turns once through the index
-- into a CTE the branches share instead of four index scans.
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
_TALLY_FORMAT = 2  # 2: the safety events are folded in


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
        # (with it on the sessions only, the planner scanned every turn once per branch)
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
    return digest([_TALLY_FORMAT, sql, params])


def digest(value) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()


def session_tallies(
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


def tallies_pending(*, day: datetime.date) -> list[int]:
    """The nightly chunks' part (``settings.NIGHTLY_SESSION_WORK``): the sessions in ``day``'s scope whose
    tally is not kept or stale, which ``session_tallies`` would aggregate (none off PostgreSQL, where the
    portable path recomputes every session in the step itself)."""
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.id FROM sessions s "
            "LEFT JOIN gauge_session_revision r ON r.session_id = s.id "
            "LEFT JOIN gauge_session_tally g ON g.session_id = s.id "
            "  AND g.sql_digest = %(digest)s AND g.revision >= COALESCE(r.revision, 0) "
            f"WHERE {_IN_SCOPE} AND g.session_id IS NULL ORDER BY s.id",
            {"start": _window_start(day), "day": day, "digest": tally_sql_digest()},
        )
        return [session_id for (session_id,) in cursor.fetchall()]


def tallies_prepare(*, day: datetime.date, ids: list[int]) -> dict[str, int]:
    """Aggregates and keeps the tallies of the sessions ``ids`` (those in ``day``'s scope), as the gauge step
    would for stale sessions; the step then reads them as kept. Call inside a transaction."""
    fresh = _session_aggregates(start=_window_start(day), day=day, ids=list(ids))
    _keep_tallies(fresh.values(), timezone.now())
    return {"sessions": len(fresh)}


def _window_start(day: datetime.date) -> datetime.date:
    return day - datetime.timedelta(days=settings.GAUGE_WINDOW_DAYS - 1)


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
    fold_safety_events(sessions, start=start, day=day, ids=ids)
    result = {}
    for session_id in sorted(scoped):
        session = sessions.get(session_id) or SessionAggregate.empty(session_id)
        session.trainee_id, session.revision = scoped[session_id]
        session.silent_close_turns.sort()
        result[session_id] = session
    return result


def fold_safety_events(
    sessions: dict[int, SessionAggregate], *, start: datetime.date, day: datetime.date, ids: list[int] | None
) -> None:
    """Adds the safety events of the sessions in scope to their tallies, read through the one definition of
    an event and its answer (``supervision.safety.selectors``) rather than written again in the statement."""
    events = events_of_all_trainees().filter(
        turn__session__trainee__isnull=False, turn__session__held_on__range=(start, day)
    )
    if ids is not None:
        events = events.filter(turn__session_id__in=ids)
    for session_id, latency in events.order_by().values_list("session_id", "latency"):
        session = sessions.get(session_id)
        if session is None:
            session = sessions[session_id] = SessionAggregate.empty(session_id)
        session.tally.add_safety_event(latency)


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


def tallies_forget() -> int:
    """Drops every kept session tally, so the next run aggregates every session in scope from its rows
    (``compute_gauges --full``). Returns how many were dropped."""
    deleted, _by_model = SessionTally.objects.all().delete()
    return deleted


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
