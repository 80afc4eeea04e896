"""The critiques the gauge suggests (author ``ai``) and the supervisor's answer to them (writes)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from supervision import pagecache, presentation
from supervision.gauge import figures
from supervision.gauge.aggregate import SessionAggregate, digest
from supervision.gauge.models import DismissedSuggestion, SessionTally
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
    # The category by its Korean name with the code after it, and shares as the gauge chart shows them (%).
    BAND_KEY: (
        "이 회기의 {name}({code}) 기법 비율이 {share}로, 목표 범위 {low}–{high}보다 {direction}({word}, {status}).",
        {"dimension": "기법 균형 (technique balance)", "severity": Severity.MINOR.value},
    ),
}
_WORDING_DIGEST = digest(SUGGESTION_WORDING)


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
            word, direction = ("부족", "낮습니다") if status == figures.UNDER else ("과다", "높습니다")
            category = f"{presentation.CATEGORY_KO.get(code, code)}({code})"
            share_pct, low_pct, high_pct = (presentation.percent(x) for x in (share, low, high))
            made.append(
                _suggestion(
                    self.band_turn,
                    BAND_KEY,
                    key=BAND_KEY.format(category=code),
                    fill={
                        "name": presentation.CATEGORY_KO.get(code, code),
                        "code": code,
                        "share": share_pct,
                        "low": low_pct,
                        "high": high_pct,
                        "word": word,
                        "direction": direction,
                        "status": status,
                    },
                    expected=f"{category} {low_pct}–{high_pct}",
                    actual=f"{category} {share_pct}",
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


def suggest(sessions: list[SessionAggregate], bands) -> int:
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
        if connection.vendor == "postgresql":
            _write_suggestions(wanted, digests)
        else:
            _write_suggestions_portable(wanted, digests)
    return made


def _write_suggestions(wanted: list[dict], digests: dict[int, str]) -> None:
    """Makes the pending gauge suggestions of the sessions in ``digests`` exactly ``wanted`` and records
    the digests those sessions' suggestions now have."""
    now = timezone.now()
    table = SupervisorComment._meta.db_table
    columns = ["turn_id", "kind", "text", "intent_deviation", "author", "is_suggestion", "suggestion_key"]
    names = ", ".join([*columns, "created_at", "updated_at"])
    # What already exists is decided in SQL, not by reading every pending suggestion back into Python:
    # the wanted rows arrive as one JSON array.
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


def _write_suggestions_portable(wanted: list[dict], digests: dict[int, str]) -> None:
    """``_write_suggestions`` through the ORM, for the embedded database of `make run` (no kept tallies
    there, so no digests to record): the same rows, decided the same way."""
    pending = SupervisorComment.objects.filter(
        turn__session_id__in=list(digests), is_suggestion=True, suggestion_key__startswith=SUGGESTION_PREFIX
    )
    keys = {(w["turn_id"], w["suggestion_key"]) for w in wanted}
    pending.exclude(
        pk__in=[pk for pk, *key in pending.values_list("pk", "turn_id", "suggestion_key") if tuple(key) in keys]
    ).delete()
    dismissed = set(
        DismissedSuggestion.objects.filter(turn_id__in={w["turn_id"] for w in wanted}).values_list(
            "turn_id", "suggestion_key"
        )
    )
    existing = {
        (c.turn_id, c.suggestion_key): c
        for c in SupervisorComment.objects.filter(turn_id__in={w["turn_id"] for w in wanted}).exclude(suggestion_key="")
    }
    for w in wanted:
        key = (w["turn_id"], w["suggestion_key"])
        if key in dismissed:
            continue
        comment = existing.get(key)
        if comment is None:
            SupervisorComment.objects.create(
                turn_id=w["turn_id"],
                kind=CommentKind.CRITIQUE,
                text=w["text"],
                intent_deviation=w["intent_deviation"],
                author=CommentAuthor.AI,
                is_suggestion=True,
                suggestion_key=w["suggestion_key"],
            )
        elif comment.is_suggestion and (comment.text, comment.intent_deviation) != (w["text"], w["intent_deviation"]):
            comment.text, comment.intent_deviation = w["text"], w["intent_deviation"]
            comment.save(update_fields=["text", "intent_deviation", "updated_at"])


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
    pagecache.sessions_changed([comment.turn.session_id])  # now shown to the trainee
    return comment


@transaction.atomic
def suggestion_dismiss(*, comment: SupervisorComment, user) -> None:
    """Deletes the suggestion and remembers it, so the next nightly run does not suggest it again."""
    _reviewable_suggestion(comment, user)
    DismissedSuggestion.objects.get_or_create(
        turn_id=comment.turn_id, suggestion_key=comment.suggestion_key, defaults={"dismissed_by": user}
    )
    comment.delete()
