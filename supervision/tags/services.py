"""The one place that changes tendency tags: evidence, contradictions, the lifecycle and its history.

Lifecycle (U-tag document; DESIGN.md "Tendency tags"; CONTRACT §6):

- evidence creates the tag as an *observation*; two pieces from different sessions (counted since the
  current observation cycle began) promote it to *hypothesis*;
- a hypothesis becomes *verified* when, since it last entered hypothesis status,
  ``UTAG_VERIFY_AFTER_DAYS`` have passed, at least one new piece of evidence has arrived and no
  contradiction was recorded, and it has ``UTAG_VERIFY_MIN_EVIDENCE`` pieces in all — checked when
  evidence arrives and by the nightly step ``tags_nightly_check``;
- a contradiction of severity low is recorded only; medium demotes verified → hypothesis; high demotes
  a verified tag or a hypothesis to observation (a reset: a new observation cycle begins).

Every status change writes a ``TagTransition`` row. Recording the same (tag, session, event) twice adds
nothing, so the nightly job can be re-run.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, F, Max, Min, Q
from django.utils import timezone

from supervision import pagecache, rules
from supervision.gauge import figures
from supervision.models import Session
from supervision.safety.selectors import events_of_all_trainees
from supervision.services import ServiceError
from supervision.tags import catalogue
from supervision.tags.models import (
    ContradictionSeverity,
    Origin,
    Status,
    TagContradiction,
    TagEvidence,
    TagTransition,
    TraineeTag,
)
from taxonomy import catalogue as taxonomy

MAX_EVENT_CHARS = 1000

# Values of the gauge snapshot (CONTRACT §6) this module reads, named where the gauge defines them.
BAND_UNDER, BAND_WITHIN, BAND_OVER = figures.UNDER, figures.WITHIN, figures.OVER
RQ_BELOW_FAIR, RQ_FAIR, RQ_GOOD = figures.BELOW_FAIR, figures.FAIR, figures.GOOD


class TagInputError(ServiceError):
    """Bad input, tied to the field it came from so the API can name it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Recorded:
    """What a recording service did: the tag, and whether a new row was written."""

    tag: TraineeTag
    created: bool


def tag_definition(name: str) -> catalogue.TagDef:
    definition = catalogue.TAGS_BY_NAME.get(name)
    if definition is None:
        raise TagInputError("tag", f"알 수 없는 태그 '{name}'입니다. 태그 목록(CONTRACT §6)에 있는 이름을 쓰세요.")
    return definition


def _clean_event(event: str) -> str:
    text = (event or "").strip()
    if not text:
        raise TagInputError("event", "근거(event)를 적어 주세요.")
    if len(text) > MAX_EVENT_CHARS:
        raise TagInputError("event", f"근거(event)는 {MAX_EVENT_CHARS}자 이내로 적어 주세요.")
    if problem := rules.personal_identifier_problem(text):
        raise TagInputError("event", problem)
    return text


def _session_problem(session_id: int | None, trainee_id: int, owners: dict[int, int]) -> None:
    if session_id is not None and owners.get(session_id) != trainee_id:
        raise TagInputError("session", f"회기 {session_id}는 이 수련생의 회기가 아닙니다.")


@dataclass(eq=False)
class _Held:
    """One tag in a ``TagBook``: its row and what the lifecycle reads of its evidence and contradictions,
    as loaded (aggregates, not the history) plus what the book recorded since."""

    row: TraineeTag
    evidence_count: int = 0
    last_evidence_at: datetime.datetime | None = None  # the latest stored piece
    last_contradiction_at: datetime.datetime | None = None
    # The earliest stored piece after ``first_after_since`` (the hypothesis_since it was read for).
    first_after: datetime.datetime | None = None
    first_after_since: datetime.datetime | None = None
    # Sessions of the stored pieces of the current observation cycle (None: not read, the tag was not in
    # observation when loaded).
    cycle_sessions: set[int] | None = None
    # (session_id, event) of the stored pieces on the book's sessions, and of the pieces recorded since
    evidence_keys: set[tuple[int | None, str]] = field(default_factory=set)
    contradiction_keys: set[tuple[int | None, str]] = field(default_factory=set)
    recorded: list[TagEvidence] = field(default_factory=list)
    contradicted: list[TagContradiction] = field(default_factory=list)
    touched: bool = False


class TagBook:
    """The tags of some trainees, locked for the current transaction and held in memory while pieces are
    recorded; ``write()`` stores what changed with a few set-wise statements. Every lifecycle rule of this
    module runs here, for one piece (the API, the admin) or thousands (the nightly job), so a night costs
    a handful of queries however much it records, and its result is the one of recording the pieces one by one.

    ``session_ids`` are the sessions pieces may name (None included when a piece may have no session):
    their trainees are checked and their stored (session, event) pairs read, so recording the same piece
    twice adds nothing.
    """

    def __init__(self, trainee_ids: Iterable[int], session_ids: Iterable[int | None] = ()) -> None:
        self.trainee_ids = sorted(set(trainee_ids))
        sessions = set(session_ids)
        with_none = None in sessions
        sessions.discard(None)
        # One writer of a trainee's tags at a time: a first piece creates the tag row, and two writers
        # creating it at once would break the (trainee, tag) constraint. Key-share locks (foreign keys to
        # the user) are not blocked.
        list(
            get_user_model()
            .objects.select_for_update(no_key=True)
            .filter(pk__in=self.trainee_ids)
            .values_list("pk", flat=True)
        )
        self.owners = dict(Session.objects.filter(pk__in=sessions).values_list("pk", "trainee_id"))
        self.held: dict[tuple[int, str], _Held] = {}
        for row in TraineeTag.objects.filter(trainee_id__in=self.trainee_ids):
            self.held[row.trainee_id, row.tag] = _Held(row)
        by_id = {held.row.pk: held for held in self.held.values()}
        of_trainees = {"trainee_tag__trainee_id__in": self.trainee_ids}
        stored = (
            TagEvidence.objects.filter(**of_trainees)
            .values("trainee_tag_id")
            .annotate(
                n=Count("id"),
                last=Max("at"),
                first_after=Min("at", filter=Q(at__gt=F("trainee_tag__hypothesis_since"))),
            )
            .order_by()
        )
        for aggregate in stored:
            held = by_id[aggregate["trainee_tag_id"]]
            held.evidence_count, held.last_evidence_at = aggregate["n"], aggregate["last"]
            held.first_after, held.first_after_since = aggregate["first_after"], held.row.hypothesis_since
        contradicted = (
            TagContradiction.objects.filter(**of_trainees).values("trainee_tag_id").annotate(last=Max("at")).order_by()
        )
        for aggregate in contradicted:
            by_id[aggregate["trainee_tag_id"]].last_contradiction_at = aggregate["last"]
        for held in self.held.values():
            if held.row.status == Status.OBSERVATION:
                held.cycle_sessions = set()
        cycle = TagEvidence.objects.filter(
            **of_trainees,
            trainee_tag__status=Status.OBSERVATION,
            at__gte=F("trainee_tag__observation_since"),
            session__isnull=False,
        )
        # order_by(): the default ordering (at, id) would make DISTINCT keep every piece of evidence
        for tag_id, session_id in cycle.order_by().values_list("trainee_tag_id", "session_id").distinct():
            by_id[tag_id].cycle_sessions.add(session_id)
        on_sessions = Q(session_id__in=sessions) | Q(session__isnull=True) if with_none else Q(session_id__in=sessions)
        for model, keys in ((TagEvidence, "evidence_keys"), (TagContradiction, "contradiction_keys")):
            stored_keys = model.objects.filter(on_sessions, **of_trainees).values_list(
                "trainee_tag_id", "session_id", "event"
            )
            for tag_id, session_id, event in stored_keys:
                getattr(by_id[tag_id], keys).add((session_id, event))
        self.transitions: list[TagTransition] = []

    # -- recording ------------------------------------------------------------------------------------

    def add_evidence(
        self,
        *,
        trainee_id: int,
        tag: str,
        event: str,
        source: str | None = None,
        session_id: int | None = None,
        origin: str = Origin.SUPERVISOR,
        recorded_by=None,
        detail: dict | None = None,
        at: datetime.datetime,
    ) -> Recorded:
        """One piece of evidence for the trainee's ``tag`` (creating the tag), and the lifecycle.

        ``source``, when given, must be the catalogue's source of the tag (a trainee can only add to declared
        tags). The same (tag, session, event) a second time changes nothing."""
        definition = tag_definition(tag)
        if source is not None and source != definition.source:
            raise TagInputError("source", f"태그 '{tag}'의 출처는 '{definition.source}'입니다('{source}'가 아님).")
        text = _clean_event(event)
        _session_problem(session_id, trainee_id, self.owners)
        held = self._held_or_new(trainee_id, definition, at=at)
        row = held.row
        if (session_id, text) in held.evidence_keys:
            return Recorded(row, False)
        held.evidence_keys.add((session_id, text))
        piece = TagEvidence(
            trainee_tag=row,
            session_id=session_id,
            event=text,
            detail=detail or {},
            at=at,
            origin=origin,
            recorded_by=recorded_by,
        )
        held.recorded.append(piece)
        if held.cycle_sessions is not None and session_id is not None and at >= row.observation_since:
            held.cycle_sessions.add(session_id)
        if row.status == Status.OBSERVATION:
            if len(self._cycle_sessions(held)) >= 2:
                self._transition(
                    held,
                    Status.HYPOTHESIS,
                    at=at,
                    reason="서로 다른 두 회기에서 근거가 확인됨",
                    by=recorded_by,
                    evidence=piece,
                )
        elif row.status == Status.HYPOTHESIS:
            self.verify_if_due(held, as_of=at, by=recorded_by, evidence=piece)
        row.last_updated = at
        held.touched = True
        return Recorded(row, True)

    def add_contradiction(
        self,
        *,
        trainee_id: int,
        tag: str,
        event: str,
        severity: str,
        session_id: int | None = None,
        origin: str = Origin.SUPERVISOR,
        recorded_by=None,
        detail: dict | None = None,
        at: datetime.datetime,
    ) -> Recorded:
        """A contradiction to an existing tag, which demotes it as its severity says.

        Raises ``TraineeTag.DoesNotExist`` when the trainee has no such tag (nothing to contradict)."""
        tag_definition(tag)
        if severity not in ContradictionSeverity.values:
            raise TagInputError(
                "severity", f"강도(severity)는 {', '.join(ContradictionSeverity.values)} 중 하나입니다."
            )
        text = _clean_event(event)
        _session_problem(session_id, trainee_id, self.owners)
        held = self.held.get((trainee_id, tag))
        if held is None:
            raise TraineeTag.DoesNotExist(f"수련생 {trainee_id}에게 '{tag}' 태그가 없습니다.")
        row = held.row
        if (session_id, text) in held.contradiction_keys:
            return Recorded(row, False)
        held.contradiction_keys.add((session_id, text))
        contradiction = TagContradiction(
            trainee_tag=row,
            session_id=session_id,
            event=text,
            severity=severity,
            detail=detail or {},
            at=at,
            origin=origin,
            recorded_by=recorded_by,
        )
        held.contradicted.append(contradiction)
        if severity == ContradictionSeverity.MEDIUM and row.status == Status.VERIFIED:
            self._transition(
                held,
                Status.HYPOTHESIS,
                at=at,
                reason="반증(보통) 기록: 검증 → 가설, 추가 관찰 필요",
                by=recorded_by,
                contradiction=contradiction,
            )
        elif severity == ContradictionSeverity.HIGH and row.status in (Status.VERIFIED, Status.HYPOTHESIS):
            self._transition(
                held,
                Status.OBSERVATION,
                at=at,
                reason="반증(높음) 기록: 관찰 단계로 되돌림",
                by=recorded_by,
                contradiction=contradiction,
            )
        row.last_updated = at
        held.touched = True
        return Recorded(row, True)

    def verify_if_due(self, held: _Held, *, as_of, by=None, evidence=None) -> bool:
        """hypothesis → verified when its time has come (see the module doc)."""
        if not self._verification_due(held, as_of=as_of):
            return False
        count = self._evidence_count(held)
        self._transition(
            held,
            Status.VERIFIED,
            at=as_of,
            reason=(
                f"가설 유지 {settings.UTAG_VERIFY_AFTER_DAYS}일 경과, 새 근거 도착, 그동안 반증 없음, "
                f"근거 {count}개(기준 {settings.UTAG_VERIFY_MIN_EVIDENCE}개 이상)"
            ),
            by=by,
            evidence=evidence,
        )
        held.touched = True
        return True

    def write(self) -> None:
        """Stores the new tags, pieces and transitions and the changed tags, in the order they happened.
        Once, at the end: the book is not read again after it."""
        helds = list(self.held.values())
        new = [h.row for h in helds if h.row.pk is None]
        created = {id(row) for row in new}
        TraineeTag.objects.bulk_create(new)
        TagEvidence.objects.bulk_create([piece for h in helds for piece in h.recorded])
        TagContradiction.objects.bulk_create([c for h in helds for c in h.contradicted])
        TagTransition.objects.bulk_create(self.transitions)
        TraineeTag.objects.bulk_update(
            [h.row for h in helds if h.touched and id(h.row) not in created],
            ["status", "observation_since", "hypothesis_since", "verified_at", "last_updated"],
            batch_size=100,  # one CASE per column per batch: PostgreSQL's cost grows with rows × branches
        )

    # -- the rules' facts -----------------------------------------------------------------------------

    def _held_or_new(self, trainee_id: int, definition: catalogue.TagDef, *, at) -> _Held:
        held = self.held.get((trainee_id, definition.name))
        if held is None:
            row = TraineeTag(
                trainee_id=trainee_id,
                tag=definition.name,
                source=definition.source,
                status=Status.OBSERVATION,
                observation_since=at,
                last_updated=at,
            )
            held = self.held[trainee_id, definition.name] = _Held(row, cycle_sessions=set(), touched=True)
            self.transitions.append(
                TagTransition(
                    trainee_tag=row, from_status="", to_status=Status.OBSERVATION, at=at, reason="첫 근거 기록"
                )
            )
        return held

    def _evidence_count(self, held: _Held) -> int:
        return held.evidence_count + len(held.recorded)

    def _cycle_sessions(self, held: _Held) -> set[int]:
        """Sessions with evidence since the current observation cycle began."""
        if held.cycle_sessions is None:
            since = held.row.observation_since
            held.cycle_sessions = {p.session_id for p in held.recorded if p.session_id is not None and p.at >= since}
            if held.row.pk is not None and held.last_evidence_at is not None and held.last_evidence_at >= since:
                held.cycle_sessions |= set(
                    held.row.evidence.filter(at__gte=since, session__isnull=False).values_list("session_id", flat=True)
                )
        return held.cycle_sessions

    def _evidence_since(self, held: _Held, since, as_of) -> bool:
        """Whether a piece was recorded in (since, as_of]."""
        if any(since < p.at <= as_of for p in held.recorded):
            return True
        if held.row.pk is None or held.last_evidence_at is None or held.last_evidence_at <= since:
            return False
        if held.first_after_since == since:
            return held.first_after is not None and held.first_after <= as_of
        return held.row.evidence.filter(at__gt=since, at__lte=as_of).exists()

    def _verification_due(self, held: _Held, *, as_of) -> bool:
        """The hypothesis → verified condition of CONTRACT §6, evaluated at ``as_of``."""
        row = held.row
        if row.status != Status.HYPOTHESIS or row.hypothesis_since is None:
            return False
        since = row.hypothesis_since
        if as_of - since < datetime.timedelta(days=settings.UTAG_VERIFY_AFTER_DAYS):
            return False
        if not self._evidence_since(held, since, as_of):
            return False
        contradicted = (held.last_contradiction_at is not None and held.last_contradiction_at > since) or any(
            c.at > since for c in held.contradicted
        )
        if contradicted:
            return False
        return self._evidence_count(held) >= settings.UTAG_VERIFY_MIN_EVIDENCE

    def _transition(self, held: _Held, to_status: str, *, at, reason: str, by=None, evidence=None, contradiction=None):
        row = held.row
        self.transitions.append(
            TagTransition(
                trainee_tag=row,
                from_status=row.status,
                to_status=to_status,
                at=at,
                reason=reason,
                evidence=evidence,
                contradiction=contradiction,
                recorded_by=by,
            )
        )
        if to_status == Status.HYPOTHESIS:
            row.hypothesis_since = at
            row.verified_at = None
        elif to_status == Status.OBSERVATION:
            row.observation_since = at
            row.hypothesis_since = None
            row.verified_at = None
            held.cycle_sessions = None  # a new cycle: read again when needed
        elif to_status == Status.VERIFIED:
            row.verified_at = at
        row.status = to_status


@transaction.atomic
def tag_evidence_add(
    *,
    trainee_id: int,
    tag: str,
    event: str,
    source: str | None = None,
    session_id: int | None = None,
    origin: str = Origin.SUPERVISOR,
    recorded_by=None,
    detail: dict | None = None,
    at: datetime.datetime | None = None,
) -> Recorded:
    """Adds one piece of evidence to the trainee's ``tag`` (creating the tag) and applies the lifecycle
    (``TagBook.add_evidence``)."""
    book = TagBook([trainee_id], [session_id])
    done = book.add_evidence(
        trainee_id=trainee_id,
        tag=tag,
        event=event,
        source=source,
        session_id=session_id,
        origin=origin,
        recorded_by=recorded_by,
        detail=detail,
        at=at or timezone.now(),
    )
    book.write()
    pagecache.trainees_changed([trainee_id])
    return done


@transaction.atomic
def tag_contradiction_record(
    *,
    trainee_id: int,
    tag: str,
    event: str,
    severity: str,
    session_id: int | None = None,
    origin: str = Origin.SUPERVISOR,
    recorded_by=None,
    detail: dict | None = None,
    at: datetime.datetime | None = None,
) -> Recorded:
    """Records a contradiction to an existing tag and demotes it as its severity says
    (``TagBook.add_contradiction``; ``TraineeTag.DoesNotExist`` when there is no such tag)."""
    book = TagBook([trainee_id], [session_id])
    done = book.add_contradiction(
        trainee_id=trainee_id,
        tag=tag,
        event=event,
        severity=severity,
        session_id=session_id,
        origin=origin,
        recorded_by=recorded_by,
        detail=detail,
        at=at or timezone.now(),
    )
    book.write()
    pagecache.trainees_changed([trainee_id])
    return done


def run_moment(day: datetime.date) -> datetime.datetime:
    """The instant a run "for ``day``" stands at: the end of that day, never later than now."""
    zone = timezone.get_current_timezone()
    end = datetime.datetime.combine(day, datetime.time.max).replace(tzinfo=zone)
    return min(timezone.now(), end)


@transaction.atomic
def tags_nightly_check(*, day: datetime.date) -> dict:
    """Verifies every hypothesis whose time has come (as of the end of ``day``); idempotent."""
    as_of = run_moment(day)
    cutoff = as_of - datetime.timedelta(days=settings.UTAG_VERIFY_AFTER_DAYS)
    due = TraineeTag.objects.filter(status=Status.HYPOTHESIS, hypothesis_since__lte=cutoff)
    candidates = list(due.values_list("trainee_id", "tag"))
    if not candidates:
        return {"checked": 0, "verified": 0}
    book = TagBook({trainee for trainee, _ in candidates})
    verified = 0
    for key in candidates:
        held = book.held.get(key)
        if held is not None and book.verify_if_due(held, as_of=as_of):
            held.row.last_updated = as_of
            verified += 1
    book.write()
    return {"checked": len(candidates), "verified": verified}


# --- Evidence from the nightly review gauge --------------------------------------------------------
#
# Severity rule for a balanced session (category status "within") against an existing over/under tag:
#   medium — the share sits on the far side of the band's midpoint from the tag's direction (an
#            `overuses_<c>` tag meets a session in the lower half of the band, `underuses_<c>` one in
#            the upper half): the session plainly does not show the tendency;
#   low    — the share is within the band but on the tag's side of the midpoint (near the edge the
#            tag is about), or the band is missing: a minor deviation;
#   high   — the session shows the opposite deviation (`under` against `overuses_<c>`, `over` against
#            `underuses_<c>`): the tag's core premise is denied by behaviour.
# The same reading for the other observed tags: `rq_below_fair` meets low in a `fair` session and
# medium in a `good` one; `skips_risk_assessment` meets medium in a session whose safety events
# (CONTRACT §8) were all answered by a risk assessment in time (evidence: one of them was not). A declared `prioritizes_<c>` meets low (recorded
# only: it makes the tag "conflicted", never demotes it) in a session where <c> was under its band.


def _band_position(entry: dict) -> float | None:
    band = entry.get("band")
    share = entry.get("share")
    try:
        low, high = float(band[0]), float(band[1])
        share = float(share)
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    if high <= low:
        return None
    return (share - low) / (high - low)


def _balanced_severity(direction: str, entry: dict) -> str:
    position = _band_position(entry)
    if position is None:
        return ContradictionSeverity.LOW
    far_side = position <= 0.5 if direction == BAND_OVER else position >= 0.5
    return ContradictionSeverity.MEDIUM if far_side else ContradictionSeverity.LOW


def _share_text(entry: dict) -> str:
    share, band = entry.get("share"), entry.get("band")
    try:
        return f" (비율 {float(share):.2f}, 목표 범위 {float(band[0]):.2f}–{float(band[1]):.2f})"
    except (TypeError, ValueError, IndexError, KeyError):
        return ""


def risk_assessment_skipped(session_ids: Iterable[int]) -> dict[int, bool]:
    """Per session with safety events (CONTRACT §8): True when one of them went unanswered — so order
    counts: an assessment long after the disclosure, or before it, does not clear it; False when every
    event was answered. Sessions without events are left out. One query for any number of sessions."""
    session_ids = list(session_ids)
    if not session_ids:  # the usual second read of an ordinary night: no query (building it alone is 20 ms)
        return {}
    answered: dict[int, bool] = {}
    events = events_of_all_trainees().filter(turn__session_id__in=session_ids).order_by()
    for session_id, was_answered in events.values_list("session_id", "answered"):
        answered[session_id] = answered.get(session_id, True) and was_answered
    return {session_id: not every for session_id, every in answered.items()}


def session_skips_risk_assessment(session_id: int) -> bool | None:
    """``risk_assessment_skipped`` of one session; None when it has no safety event."""
    return risk_assessment_skipped([session_id]).get(session_id)


RECORD_PHASES = ("both", "evidence", "contradictions")


@transaction.atomic
def tags_record_gauge_evidence(
    *, trainee_id: int, session_id: int, snapshot: dict, day: datetime.date, record: str = "both"
) -> dict:
    """Turns one PER-SESSION gauge snapshot (CONTRACT §6 shape) into observed evidence and contradictions
    (``record_gauge_pieces``). Returns ``{"evidence": n, "contradictions": n}`` counting new rows only."""
    if record not in RECORD_PHASES:
        raise ValueError(f"record must be one of {RECORD_PHASES}, not {record!r}")
    book = TagBook([trainee_id], [session_id])
    if book.owners.get(session_id) != trainee_id:
        raise TagInputError("session", f"회기 {session_id}는 수련생 {trainee_id}의 회기가 아닙니다.")
    counts = record_gauge_pieces(
        book,
        trainee_id=trainee_id,
        session_id=session_id,
        snapshot=snapshot,
        at=run_moment(day),
        record=record,
        skipped=session_skips_risk_assessment(session_id),
    )
    book.write()
    return counts


def record_gauge_pieces(
    book: TagBook,
    *,
    trainee_id: int,
    session_id: int,
    snapshot: dict,
    at: datetime.datetime,
    record: str,
    skipped: bool | None,
) -> dict:
    """One per-session snapshot's evidence and contradictions, recorded in ``book`` (the session is one of
    its sessions). ``skipped``: ``session_skips_risk_assessment`` of the session.

    Idempotent: every event text is derived from the session and the category alone, so a re-run finds
    the rows it wrote. ``record`` is ``"evidence"``, ``"contradictions"`` or ``"both"``: the nightly step
    records every snapshot's evidence before any contradiction, so a contradiction meets every tag the
    night created, whatever the order of the snapshots.
    """
    counts = {"evidence": 0, "contradictions": 0}

    def evidence(tag: str, event: str, detail: dict) -> None:
        if record == "contradictions":
            return
        done = book.add_evidence(
            trainee_id=trainee_id,
            tag=tag,
            event=event,
            session_id=session_id,
            origin=Origin.GAUGE,
            detail=detail,
            at=at,
        )
        counts["evidence"] += done.created

    def contradiction(tag: str, event: str, severity: str, detail: dict) -> None:
        if (trainee_id, tag) not in book.held or record == "evidence":
            return
        done = book.add_contradiction(
            trainee_id=trainee_id,
            tag=tag,
            event=event,
            severity=severity,
            session_id=session_id,
            origin=Origin.GAUGE,
            detail=detail,
            at=at,
        )
        counts["contradictions"] += done.created

    categories = snapshot.get("categories") or {}
    for category in taxonomy.CATEGORIES:
        entry = categories.get(category.code)
        if not isinstance(entry, dict):
            continue
        status = entry.get("status")
        detail = {k: entry.get(k) for k in ("count", "share", "band", "status")}
        shares = _share_text(entry)
        over, under = catalogue.overuses(category.code), catalogue.underuses(category.code)
        if status == BAND_OVER:
            evidence(over, f"{category.ko} 기법 비율이 목표 범위보다 높았음", detail)
            contradiction(
                under, f"{category.ko} 기법 비율이 목표 범위보다 높았음{shares}", ContradictionSeverity.HIGH, detail
            )
        elif status == BAND_UNDER:
            evidence(under, f"{category.ko} 기법 비율이 목표 범위보다 낮았음", detail)
            contradiction(
                over, f"{category.ko} 기법 비율이 목표 범위보다 낮았음{shares}", ContradictionSeverity.HIGH, detail
            )
            contradiction(
                catalogue.prioritizes(category.code),
                f"{category.ko} 기법 비율이 목표 범위보다 낮았음{shares}",
                ContradictionSeverity.LOW,
                detail,
            )
        elif status == BAND_WITHIN:
            event = f"{category.ko} 기법 비율이 목표 범위 안이었음{shares}"
            contradiction(over, event, _balanced_severity(BAND_OVER, entry), detail)
            contradiction(under, event, _balanced_severity(BAND_UNDER, entry), detail)

    rq_band = snapshot.get("rq_band")
    rq_detail = {"rq_ratio": snapshot.get("rq_ratio"), "rq_band": rq_band}
    if rq_band == RQ_BELOW_FAIR:
        evidence(catalogue.RQ_BELOW_FAIR, f"반영 대 질문 비율이 {figures.MITI_FAIR:g}:1에 못 미쳤음", rq_detail)
    elif rq_band == RQ_FAIR:
        contradiction(
            catalogue.RQ_BELOW_FAIR,
            f"반영 대 질문 비율이 적정({figures.MITI_FAIR:g}:1 이상)이었음",
            ContradictionSeverity.LOW,
            rq_detail,
        )
    elif rq_band == RQ_GOOD:
        contradiction(
            catalogue.RQ_BELOW_FAIR,
            f"반영 대 질문 비율이 양호({figures.MITI_GOOD:g}:1 이상)였음",
            ContradictionSeverity.MEDIUM,
            rq_detail,
        )

    if skipped is True:
        evidence(catalogue.SKIPS_RISK_ASSESSMENT, "안전 핵심 내담자 상태가 나왔으나 위험사정 발화가 없었음", {})
    elif skipped is False:
        contradiction(
            catalogue.SKIPS_RISK_ASSESSMENT,
            "안전 핵심 내담자 상태가 나온 회기에서 위험사정을 했음",
            ContradictionSeverity.MEDIUM,
            {},
        )
    return counts
