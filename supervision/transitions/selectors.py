"""Reads: the golden sessions' transition counts (CONTRACT §10), narrowed to the sessions a viewer may see,
and the saved persona runs.

On PostgreSQL the counts come from one set-based statement (``_TRIPLES_SQL``); elsewhere (the embedded SQLite
of ``make run``) from one streaming pass of ``counting.session_triples`` over the sessions, a batch at a time.
Neither holds every turn in memory. ``tests/test_counting_sql.py`` proves the two equal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator

from django.db import connection
from django.db.models import QuerySet

from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.roles import is_supervisor, sees_everything, trainee_filter
from taxonomy import catalogue

from . import counting
from .models import PersonaRun

STREAM_SESSIONS_PER_BATCH = 200


def golden_sessions(*, user=None, trainees: Collection[str] = ()) -> QuerySet[Session]:
    """The golden sessions in view: all for the command line (``user=None``) and for staff, a supervisor's
    trainees' for a supervisor (``roles.trainee_filter``, the one scoping rule); ``trainees`` narrows to
    those usernames."""
    sessions = Session.objects.all()
    if user is not None:
        sessions = sessions.filter(trainee_filter(user, "trainee"))
    if trainees:
        sessions = sessions.filter(trainee__username__in=sorted(trainees))
    return sessions.order_by()


def golden_counts(*, by: str, user=None, trainees: Collection[str] = ()) -> tuple[Counter, int]:
    """The triple counts over the golden sessions in view, and how many sessions those are."""
    sessions = golden_sessions(user=user, trainees=trainees)
    total = sessions.count()
    if not total:
        return Counter(), 0
    if connection.vendor == "postgresql":
        return _counts_sql(sessions, by), total
    return counting.count_sessions(_streamed_sessions(sessions), by)[0], total


# The running count of labelled client turns up to each turn of a session numbers the gaps between them: the
# counselor turns with count k lie between the k-th and the (k+1)-th labelled client turn, so the move of the
# pair (k, k+1) is their techniques (their categories, or the codes), once each.
_TRIPLES_SQL = """
WITH scoped AS (
    SELECT t.id, t.session_id, t.speaker,
           SUM(CASE WHEN t.speaker = %(client)s
                     AND EXISTS (SELECT 1 FROM turn_client_state x WHERE x.turn_id = t.id) THEN 1 ELSE 0 END)
               OVER (PARTITION BY t.session_id ORDER BY t.seq ROWS UNBOUNDED PRECEDING) AS k
      FROM turns t
     WHERE t.session_id IN ({sessions})
),
moves AS (
    SELECT DISTINCT n.session_id, n.k, {move} AS move
      FROM scoped n
      JOIN turn_technique tt ON tt.turn_id = n.id
      JOIN technique_label_def d ON d.id = tt.label_id
     WHERE n.speaker = %(counselor)s AND n.k > 0
),
states AS (
    SELECT n.session_id, n.k, d.code AS state
      FROM scoped n
      JOIN turn_client_state x ON x.turn_id = n.id
      JOIN client_state_def d ON d.id = x.label_id
     WHERE n.speaker = %(client)s
)
SELECT p.state, m.move, c.state, COUNT(*)
  FROM moves m
  JOIN states p ON p.session_id = m.session_id AND p.k = m.k
  JOIN states c ON c.session_id = m.session_id AND c.k = m.k + 1
 GROUP BY 1, 2, 3
"""


def _counts_sql(sessions: QuerySet[Session], by: str) -> Counter:
    inner, inner_params = sessions.values("pk").query.sql_with_params()
    # The session filter's own parameters are positional; the statement's are named: bind them all by name.
    named = {f"s{i}": value for i, value in enumerate(inner_params)}
    inner = inner % tuple(f"%({name})s" for name in named)
    sql = _TRIPLES_SQL.format(sessions=inner, move="d.category" if by == counting.BY_CATEGORY else "d.code")
    with connection.cursor() as cursor:
        cursor.execute(sql, {"client": catalogue.CLIENT, "counselor": catalogue.COUNSELOR, **named})
        return Counter({(state, step, nxt): n for state, step, nxt, n in cursor.fetchall()})


def _streamed_sessions(sessions: QuerySet[Session]) -> Iterator[list[counting.TurnLabels]]:
    """Each session's turns in ``seq`` order with their labels, a batch of sessions (three queries) at a time."""
    ids = list(sessions.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), STREAM_SESSIONS_PER_BATCH):
        batch = ids[start : start + STREAM_SESSIONS_PER_BATCH]
        techniques: dict[int, list[str]] = {}
        states: dict[int, list[str]] = {}
        for model, found in ((TurnTechnique, techniques), (TurnClientState, states)):
            links = model.objects.filter(turn__session_id__in=batch).order_by().values_list("turn_id", "label__code")
            for turn_id, code in links:
                found.setdefault(turn_id, []).append(code)
        current, turns = None, []
        rows = Turn.objects.filter(session_id__in=batch).order_by("session_id", "seq")
        for pk, session_id, speaker in rows.values_list("pk", "session_id", "speaker"):
            if session_id != current:
                if turns:
                    yield turns
                current, turns = session_id, []
            turns.append((speaker, techniques.get(pk, ()), states.get(pk, ())))
        if turns:
            yield turns


def persona_runs_visible(user) -> QuerySet[PersonaRun]:
    """Saved persona runs: staff, superusers and supervisors see them all (a run scores a simulated client,
    not a trainee); anyone else none."""
    runs = PersonaRun.objects.select_related("uploaded_by").order_by("-created_at", "-id")
    if user is None or sees_everything(user) or is_supervisor(user):
        return runs
    return runs.none()
