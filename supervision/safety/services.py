"""Writes of safety reviews. The admin page and the API both call ``safety_event_review``."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from supervision import rules
from supervision.models import TurnClientState
from supervision.roles import supervises
from supervision.safety.models import SafetyReview
from supervision.services import ServiceError

MAX_NOTE_CHARS = 2000


class ReviewRejected(ServiceError):
    """The note breaks a rule; ``field`` names the input it came from."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class ReviewForbidden(ServiceError):
    """Only the trainee's supervisor reviews their safety events."""


def note_problem(note: object) -> str | None:
    """What is wrong with a review note (Korean), or None. Shared by the admin form and the API."""
    if not isinstance(note, str):
        return "검토 메모(note)는 문자열이어야 합니다."
    if len(note) > MAX_NOTE_CHARS:
        return f"검토 메모(note)는 {MAX_NOTE_CHARS:,}자 이내로 적어 주세요."
    return rules.personal_identifier_problem(note)


@transaction.atomic
def safety_event_review(*, event: TurnClientState, note: str, reviewed_by) -> SafetyReview:
    """Marks the event reviewed by ``reviewed_by`` now, with ``note``; a second review replaces the note and
    the time, and the earlier version stays in the review's history (who, when, what)."""
    trainee_id = event.turn.session.trainee_id
    if not supervises(reviewed_by, trainee_id):
        raise ReviewForbidden("안전 사건을 검토할 수 있는 사람은 이 수련생의 담당 슈퍼바이저뿐입니다.")
    if problem := note_problem(note):
        raise ReviewRejected("note", problem)
    values = {"note": note.strip(), "reviewed_by": reviewed_by, "reviewed_at": timezone.now()}
    pair = {"turn_id": event.turn_id, "state_id": event.label_id}
    review = SafetyReview.objects.select_for_update().filter(**pair).first()
    try:
        with transaction.atomic():
            review = _saved(review or SafetyReview(**pair), values, reviewed_by)
    except IntegrityError:  # another first review of the same event committed meanwhile: this one follows it
        review = _saved(SafetyReview.objects.select_for_update().get(**pair), values, reviewed_by)
    return review


def _saved(review: SafetyReview, values: dict, user) -> SafetyReview:
    for name, value in values.items():
        setattr(review, name, value)
    review._history_user = user  # the history names the reviewer whether a request, a task or a test writes
    review.save()
    return review
