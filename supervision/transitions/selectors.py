"""Reads: the golden sessions' transition counts (CONTRACT §10), narrowed to the sessions a viewer may see,
and the saved persona runs.

On PostgreSQL the counts come from one set-based statement (``_TRIPLES_SQL``); elsewhere (the embedded SQLite
of ``make run``) from one streaming pass of ``counting.session_triples`` over the sessions, a batch at a time.
Neither holds every turn in memory. ``tests/test_counting_sql.py`` proves the two equal.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection, Iterator

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import BigIntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from supervision.gauge.models import SessionRevision
from supervision.models import Session, Turn, TurnClientState, TurnTechnique
from supervision.roles import is_supervisor, sees_everything, trainee_filter
from taxonomy import catalogue
from taxonomy.models import ClientStateDef, TechniqueLabelDef

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
    """The triple counts over the golden sessions in view, and how many sessions those are.

    On PostgreSQL the counts are kept in the cache under the state of the sessions they were counted over
    (``_sessions_state``): every turn or label write gives its session a new revision mark, so a kept table is
    used only while nothing it counted has changed. Counting 500,000 turns takes seconds; the persona scoring
    and the supervisors' page read the same table again and again.
    """
    sessions = golden_sessions(user=user, trainees=trainees)
    if connection.vendor != "postgresql":
        total = sessions.count()
        return (counting.count_sessions(_streamed_sessions(sessions), by)[0] if total else Counter()), total
    ids, state = _sessions_state(sessions)
    if not ids:
        return Counter(), 0
    key = f"transitions:counts:{COUNTS_CACHE_FORMAT}:{by}:{connection.settings_dict['NAME']}:{state}"
    kept = cache.get(key)
    if kept is not None:
        return counting.counts_from_json(kept), len(ids)
    counts = _counts_sql(ids, by)
    cache.set(key, counting.counts_to_json(counts), COUNTS_CACHE_SECONDS)
    return counts, len(ids)


COUNTS_CACHE_SECONDS = 7 * 24 * 3600
COUNTS_CACHE_FORMAT = 1  # raise it when the rule or the kept shape changes


def _sessions_state(sessions: QuerySet[Session]) -> tuple[list[int], str]:
    """The sessions' ids and a digest of (id, creation time, revision mark) of each, in one query. The mark
    changes with every write to the session's turns or labels (PostgreSQL triggers, ``gauge.SessionRevision``);
    the creation time tells a session from one of another (test) database that reused its id."""
    mark = SessionRevision.objects.filter(session_id=OuterRef("pk")).values("revision")[:1]
    rows = list(
        sessions.annotate(mark=Coalesce(Subquery(mark, output_field=BigIntegerField()), Value(0)))
        .order_by("pk")
        .values_list("pk", "created_at", "mark")
    )
    digest = hashlib.blake2b(repr(rows).encode(), digest_size=16).hexdigest()
    return [pk for pk, _created, _mark in rows], digest


# The running count of labelled client turns up to each turn of a session numbers the gaps between them: the
# counselor turns with count k lie between the k-th and the (k+1)-th labelled client turn, so the move of the
# pair (k, k+1) is their techniques (as categories, or the codes), once each. Labels travel as small integers
# (the label ids, and a number per category) and become codes afterwards: grouping and sorting on them is
# cheaper than on text.
_TRIPLES_SQL = """
WITH scoped AS (
    SELECT t.id, t.session_id, t.speaker = %(client)s AS is_client,
           SUM(CASE WHEN t.speaker = %(client)s
                     AND EXISTS (SELECT 1 FROM turn_client_state x WHERE x.turn_id = t.id) THEN 1 ELSE 0 END)
               OVER (PARTITION BY t.session_id ORDER BY t.seq ROWS UNBOUNDED PRECEDING) AS k
      FROM turns t
     WHERE t.session_id = ANY(%(sessions)s)
),
moves AS (
    SELECT DISTINCT n.session_id, n.k, mv.move
      FROM scoped n
      JOIN turn_technique tt ON tt.turn_id = n.id
      JOIN unnest(%(technique_ids)s::int[], %(moves)s::int[]) AS mv(label_id, move) ON mv.label_id = tt.label_id
     WHERE NOT n.is_client AND n.k > 0
),
states AS (
    SELECT n.session_id, n.k, x.label_id AS state
      FROM scoped n
      JOIN turn_client_state x ON x.turn_id = n.id
     WHERE n.is_client
)
SELECT p.state, m.move, c.state, COUNT(*)
  FROM moves m
  JOIN states p ON p.session_id = m.session_id AND p.k = m.k
  JOIN states c ON c.session_id = m.session_id AND c.k = m.k + 1
 GROUP BY 1, 2, 3
"""


def _counts_sql(session_ids: list[int], by: str) -> Counter:
    techniques = list(TechniqueLabelDef.objects.values_list("id", "code", "category"))
    names = sorted({code if by == counting.BY_TECHNIQUE else category for _pk, code, category in techniques})
    number = {name: i for i, name in enumerate(names)}
    moves = [number[code if by == counting.BY_TECHNIQUE else category] for _pk, code, category in techniques]
    states = dict(ClientStateDef.objects.values_list("id", "code"))
    params = {
        "client": catalogue.CLIENT,
        "sessions": session_ids,
        "technique_ids": [pk for pk, _code, _category in techniques],
        "moves": moves,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        # The planner cannot see through the window's running count and guesses a few hundred rows: it then
        # compiled the statement (JIT, a second of 5) and sorted on disk. Both settings end with the transaction.
        cursor.execute("SET LOCAL jit = off")
        cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(_TRIPLES_SQL, params)
        return Counter({(states[p], names[m], states[c]): n for p, m, c, n in cursor.fetchall()})


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
