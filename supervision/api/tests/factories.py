"""Objects the API tests build on the cast: comments (with a pending AI suggestion) and safety events."""

from __future__ import annotations

from supervision.commenting import supervisor_comment_create
from supervision.models import CommentKind, Session, SupervisorComment, TurnClientState
from supervision.testing import pending_suggestion
from taxonomy.models import ClientStateDef


def add_disclosure(session: Session, seq: int = 3) -> TurnClientState:
    """A safety event (CONTRACT §8): a safety-critical state on the client turn ``seq``."""
    state = ClientStateDef.objects.get(code="suicidal_ideation_admit")
    return TurnClientState.objects.create(turn=session.turns.get(seq=seq), label=state)


def add_comments(session: Session, supervisor, *, turn=None, suggestion: bool = True) -> SupervisorComment:
    first = turn or session.turns.order_by("seq").first()
    comment = supervisor_comment_create(
        turn=first,
        kind=CommentKind.CRITIQUE,
        text="탐색 단계에서 해석이 이릅니다.",
        intent_deviation={
            "dimension": "시기",
            "expected": "reflection",
            "actual": "interpretation",
            "severity": "minor",
        },
        written_by=supervisor,
    )
    if suggestion:
        pending_suggestion(first, text="AI 제안: 침묵 뒤 종결을 확인하세요.", key="test-silent-close")
    return comment
