"""The review gauge on any database Django supports (the embedded SQLite of ``make run``).

The same per-session tallies as ``aggregate``'s set-based PostgreSQL statement, folded in Python from the
same rows read through the ORM: every definition below mirrors one branch of ``aggregate._SESSION_SQL``
and ``tests/test_two_backends.py`` holds the two to equal tallies, snapshots, suggestions and tags. The
PostgreSQL-only machinery (revision triggers, kept tallies, COPY) is not used here: every run is a full
recompute, which is what the small databases this path serves can afford.
"""

from __future__ import annotations

import datetime
import itertools
import json
from collections import defaultdict

from supervision import rules
from supervision.gauge.aggregate import SessionAggregate, fold_safety_events
from supervision.models import CommentKind, Session, SupervisorComment, Turn, TurnClientState, TurnTechnique
from taxonomy import catalogue


def session_aggregates(*, start: datetime.date, day: datetime.date) -> list[SessionAggregate]:
    """Every session with a trainee held between ``start`` and ``day``, ordered by id, with its tally."""
    scope = Session.objects.filter(trainee__isnull=False, held_on__range=(start, day))
    sessions = {
        session_id: SessionAggregate.empty(session_id)
        for session_id in scope.order_by("id").values_list("id", flat=True)
    }
    for session_id, trainee_id in scope.values_list("id", "trainee_id"):
        sessions[session_id].trainee_id = trainee_id
    turns = Turn.objects.filter(session__in=scope).order_by("session_id", "seq")
    rows = list(turns.values_list("id", "session_id", "speaker", "stage_id", "dialog_act", "text"))
    speaker_of = {turn_id: speaker for turn_id, _s, speaker, *_rest in rows}

    techniques: dict[int, list[str]] = defaultdict(list)
    for turn_id, code in TurnTechnique.objects.filter(turn__session__in=scope).values_list("turn_id", "label__code"):
        techniques[turn_id].append(code)
    states: dict[int, list[str]] = defaultdict(list)
    for turn_id, code in TurnClientState.objects.filter(turn__session__in=scope).values_list("turn_id", "label__code"):
        states[turn_id].append(code)

    by_session: dict[int, list[tuple]] = defaultdict(list)
    for row in rows:
        by_session[row[1]].append(row)
    for session_id, session_rows in by_session.items():
        _fold_turns(sessions[session_id], session_rows, techniques, states)

    critiques = SupervisorComment.objects.filter(
        turn__session__in=scope, kind=CommentKind.CRITIQUE, is_suggestion=False
    ).values_list("turn_id", "turn__session_id", "intent_deviation")
    deviation_turns: dict[int, set[int]] = defaultdict(set)
    for turn_id, session_id, deviation in critiques:
        tally = sessions[session_id].tally
        # ``->>`` of a JSON value that is not an object is null
        fields = deviation if isinstance(deviation, dict) else {}
        severity = _as_text(fields.get("severity"))
        if severity is not None:
            tally.critiques[severity] += 1
        dimension = _as_text(fields.get("dimension"))
        if dimension:
            tally.dimensions[dimension] += 1
        if deviation is not None and deviation != {} and speaker_of[turn_id] == catalogue.COUNSELOR:
            deviation_turns[session_id].add(turn_id)
    for session_id, turn_ids in deviation_turns.items():
        sessions[session_id].tally.deviation_turns = len(turn_ids)

    fold_safety_events(sessions, start=start, day=day, ids=None)
    return [sessions[session_id] for session_id in sorted(sessions)]


def _fold_turns(session: SessionAggregate, rows: list[tuple], techniques, states) -> None:
    """One session's turns, in seq order, into its tally and the turns its suggestions go on."""
    tally = session.tally
    tally.turns = len(rows)
    client = []
    for turn_id, _session_id, speaker, stage, act, text in rows:
        if speaker == catalogue.COUNSELOR:
            tally.counselor_turns += 1
            session.last_counselor_turn = turn_id
            tally.techniques.update(techniques.get(turn_id, ()))
        elif speaker == catalogue.CLIENT:
            client.append((turn_id, stage, act, rules.is_no_input(text, act)))

    # consecutive client turns (the counselor's in between skipped): every (earlier, later) label pair
    for (earlier, *_e), (later, *_l) in itertools.pairwise(client):
        for a in states.get(earlier, ()):
            for b in states.get(later, ()):
                tally.transitions[f"{a}>{b}"] += 1

    # maximal runs of no-input client turns; a client turn with words ends a run
    run: list[int] = []
    for turn_id, _stage, _act, no_input in [*client, (None, None, None, False)]:
        if no_input:
            run.append(turn_id)
            continue
        if len(run) >= catalogue.SILENT_CLOSE_RUN:
            tally.silent_close_events += 1
            session.silent_close_turns.append(run[catalogue.SILENT_CLOSE_RUN - 1])
        run = []
    session.silent_close_turns.sort()  # as the statement's fold leaves them

    if client:
        turn_id, stage, act, _no_input = client[-1]
        if stage == catalogue.CLOSING_STAGE:
            acknowledges = act in catalogue.CLOSING_ACK_ACTS
            session.last_client_turn, session.acknowledged = turn_id, acknowledges
            tally.closing_acknowledged, tally.closed_on_resuming_client = int(acknowledges), 1 - int(acknowledges)


def _as_text(value) -> str | None:
    """A JSON value as PostgreSQL's ``->>`` gives it: strings as they are, other values as JSON text."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)
