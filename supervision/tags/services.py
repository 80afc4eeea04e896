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
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from supervision import rules
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


def _session_of_trainee(session_id: int | None, trainee_id: int) -> int | None:
    if session_id is None:
        return None
    if not Session.objects.filter(pk=session_id, trainee_id=trainee_id).exists():
        raise TagInputError("session", f"회기 {session_id}는 이 수련생의 회기가 아닙니다.")
    return session_id


def _transition(tag: TraineeTag, to_status: str, *, at, reason: str, by=None, evidence=None, contradiction=None):
    TagTransition.objects.create(
        trainee_tag=tag,
        from_status=tag.status,
        to_status=to_status,
        at=at,
        reason=reason,
        evidence=evidence,
        contradiction=contradiction,
        recorded_by=by,
    )
    if to_status == Status.HYPOTHESIS:
        tag.hypothesis_since = at
        tag.verified_at = None
    elif to_status == Status.OBSERVATION:
        tag.observation_since = at
        tag.hypothesis_since = None
        tag.verified_at = None
    elif to_status == Status.VERIFIED:
        tag.verified_at = at
    tag.status = to_status


def _verification_due(tag: TraineeTag, *, as_of) -> bool:
    """The hypothesis → verified condition of CONTRACT §6, evaluated at ``as_of``."""
    if tag.status != Status.HYPOTHESIS or tag.hypothesis_since is None:
        return False
    since = tag.hypothesis_since
    if as_of - since < datetime.timedelta(days=settings.UTAG_VERIFY_AFTER_DAYS):
        return False
    if not tag.evidence.filter(at__gt=since, at__lte=as_of).exists():
        return False
    if tag.contradictions.filter(at__gt=since).exists():
        return False
    return tag.evidence.count() >= settings.UTAG_VERIFY_MIN_EVIDENCE


def _verify_if_due(tag: TraineeTag, *, as_of, by=None, evidence=None) -> bool:
    if not _verification_due(tag, as_of=as_of):
        return False
    _transition(
        tag,
        Status.VERIFIED,
        at=as_of,
        reason=(
            f"가설 유지 {settings.UTAG_VERIFY_AFTER_DAYS}일 경과, 새 근거 도착, 그동안 반증 없음, "
            f"근거 {tag.evidence.count()}개(기준 {settings.UTAG_VERIFY_MIN_EVIDENCE}개 이상)"
        ),
        by=by,
        evidence=evidence,
    )
    return True


def _locked_tag(trainee_id: int, name: str, *, at) -> tuple[TraineeTag, bool]:
    """The trainee's tag row, locked for this transaction; created as an observation when new."""
    definition = tag_definition(name)
    tag, created = TraineeTag.objects.select_for_update().get_or_create(
        trainee_id=trainee_id,
        tag=name,
        defaults={
            "source": definition.source,
            "status": Status.OBSERVATION,
            "observation_since": at,
            "last_updated": at,
        },
    )
    if created:
        TagTransition.objects.create(
            trainee_tag=tag, from_status="", to_status=Status.OBSERVATION, at=at, reason="첫 근거 기록"
        )
    return tag, created


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
    """Adds one piece of evidence to the trainee's ``tag`` (creating the tag) and applies the lifecycle.

    ``source``, when given, must be the catalogue's source of the tag (a trainee can only add to declared
    tags). The same (tag, session, event) a second time changes nothing.
    """
    definition = tag_definition(tag)
    if source is not None and source != definition.source:
        raise TagInputError("source", f"태그 '{tag}'의 출처는 '{definition.source}'입니다('{source}'가 아님).")
    text = _clean_event(event)
    session_id = _session_of_trainee(session_id, trainee_id)
    at = at or timezone.now()
    row, _ = _locked_tag(trainee_id, tag, at=at)
    if row.evidence.filter(session_id=session_id, event=text).exists():
        return Recorded(row, False)
    piece = TagEvidence.objects.create(
        trainee_tag=row,
        session_id=session_id,
        event=text,
        detail=detail or {},
        at=at,
        origin=origin,
        recorded_by=recorded_by,
    )
    if row.status == Status.OBSERVATION:
        sessions = (
            row.evidence.filter(at__gte=row.observation_since, session__isnull=False)
            .values("session_id")
            .distinct()
            .count()
        )
        if sessions >= 2:
            _transition(
                row,
                Status.HYPOTHESIS,
                at=at,
                reason="서로 다른 두 회기에서 근거가 확인됨",
                by=recorded_by,
                evidence=piece,
            )
    elif row.status == Status.HYPOTHESIS:
        _verify_if_due(row, as_of=at, by=recorded_by, evidence=piece)
    row.last_updated = at
    row.save()
    return Recorded(row, True)


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
    """Records a contradiction to an existing tag and demotes it as its severity says.

    Raises ``TraineeTag.DoesNotExist`` when the trainee has no such tag (nothing to contradict).
    """
    tag_definition(tag)
    if severity not in ContradictionSeverity.values:
        raise TagInputError("severity", f"강도(severity)는 {', '.join(ContradictionSeverity.values)} 중 하나입니다.")
    text = _clean_event(event)
    session_id = _session_of_trainee(session_id, trainee_id)
    at = at or timezone.now()
    row = TraineeTag.objects.select_for_update().get(trainee_id=trainee_id, tag=tag)
    if row.contradictions.filter(session_id=session_id, event=text).exists():
        return Recorded(row, False)
    contradiction = TagContradiction.objects.create(
        trainee_tag=row,
        session_id=session_id,
        event=text,
        severity=severity,
        detail=detail or {},
        at=at,
        origin=origin,
        recorded_by=recorded_by,
    )
    if severity == ContradictionSeverity.MEDIUM and row.status == Status.VERIFIED:
        _transition(
            row,
            Status.HYPOTHESIS,
            at=at,
            reason="반증(보통) 기록: 검증 → 가설, 추가 관찰 필요",
            by=recorded_by,
            contradiction=contradiction,
        )
    elif severity == ContradictionSeverity.HIGH and row.status in (Status.VERIFIED, Status.HYPOTHESIS):
        _transition(
            row,
            Status.OBSERVATION,
            at=at,
            reason="반증(높음) 기록: 관찰 단계로 되돌림",
            by=recorded_by,
            contradiction=contradiction,
        )
    row.last_updated = at
    row.save()
    return Recorded(row, True)


def run_moment(day: datetime.date) -> datetime.datetime:
    """The instant a run "for ``day``" stands at: the end of that day, never later than now."""
    zone = timezone.get_current_timezone()
    end = datetime.datetime.combine(day, datetime.time.max).replace(tzinfo=zone)
    return min(timezone.now(), end)


def tags_nightly_check(*, day: datetime.date) -> dict:
    """Verifies every hypothesis whose time has come (as of the end of ``day``); idempotent."""
    as_of = run_moment(day)
    cutoff = as_of - datetime.timedelta(days=settings.UTAG_VERIFY_AFTER_DAYS)
    candidates = list(
        TraineeTag.objects.filter(status=Status.HYPOTHESIS, hypothesis_since__lte=cutoff).values_list("pk", flat=True)
    )
    verified = 0
    for pk in candidates:
        with transaction.atomic():
            row = TraineeTag.objects.select_for_update().get(pk=pk)
            if _verify_if_due(row, as_of=as_of):
                row.last_updated = as_of
                row.save()
                verified += 1
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


def session_skips_risk_assessment(session_id: int) -> bool | None:
    """True when a safety event of the session (CONTRACT §8) went unanswered — so order counts: an
    assessment long after the disclosure, or before it, does not clear it; False when every event was
    answered; None when the session has none."""
    answered = list(events_of_all_trainees(session_id=session_id).values_list("answered", flat=True))
    if not answered:
        return None
    return not all(answered)


RECORD_PHASES = ("both", "evidence", "contradictions")


@transaction.atomic
def tags_record_gauge_evidence(
    *, trainee_id: int, session_id: int, snapshot: dict, day: datetime.date, record: str = "both"
) -> dict:
    """Turns one PER-SESSION gauge snapshot (CONTRACT §6 shape) into observed evidence and contradictions.

    Idempotent: every event text is derived from the session and the category alone, so a re-run finds
    the rows it wrote. Returns ``{"evidence": n, "contradictions": n}`` counting new rows only.
    ``record`` is ``"evidence"``, ``"contradictions"`` or ``"both"``: the nightly step records every
    snapshot's evidence before any contradiction, so a contradiction meets every tag the night created,
    whatever the order of the snapshots.
    """
    if record not in RECORD_PHASES:
        raise ValueError(f"record must be one of {RECORD_PHASES}, not {record!r}")
    if not Session.objects.filter(pk=session_id, trainee_id=trainee_id).exists():
        raise TagInputError("session", f"회기 {session_id}는 수련생 {trainee_id}의 회기가 아닙니다.")
    at = run_moment(day)
    existing = set(TraineeTag.objects.filter(trainee_id=trainee_id).values_list("tag", flat=True))
    counts = {"evidence": 0, "contradictions": 0}

    def evidence(tag: str, event: str, detail: dict) -> None:
        if record == "contradictions":
            return
        done = tag_evidence_add(
            trainee_id=trainee_id,
            tag=tag,
            event=event,
            session_id=session_id,
            origin=Origin.GAUGE,
            detail=detail,
            at=at,
        )
        counts["evidence"] += done.created
        existing.add(tag)

    def contradiction(tag: str, event: str, severity: str, detail: dict) -> None:
        if tag not in existing or record == "evidence":
            return
        done = tag_contradiction_record(
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

    # the events are read only when they can add something: evidence, or a contradiction of an existing tag
    wanted = record != "contradictions" or catalogue.SKIPS_RISK_ASSESSMENT in existing
    skipped = session_skips_risk_assessment(session_id) if wanted else None
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
