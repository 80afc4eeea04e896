"""The label suggester's part of the night: every turn carries the suggestion of the model version the portal
serves.

Each import suggests its own turns, so an ordinary night finds nothing to do. A retrained model, once deployed,
is a new version with a run of its own and no rows in it: the sessions imported before would show supervisors
no suggestions, their suggested safety events would leave the 안전 검토 queue and the audits of sessions
nobody labelled would fall back to the text, until someone ran ``suggest_labels``. The first night after the
deploy suggests them again, the earlier version's run staying as it was (the agreement report keeps both);
re-suggesting a session queues its audit, as ``suggest_labels --session`` does. The step comes before the
audits and the safety step in ``settings.NIGHTLY_REVIEW_STEPS``, and its per-session part before theirs in
``settings.NIGHTLY_SESSION_WORK`` (a chunk runs a session's parts in that order)."""

from __future__ import annotations

import datetime

from django.conf import settings

from .loading import current_model
from .selectors import sessions_without_suggestions
from .services import suggestions_refresh


def suggestions_nightly(*, day: datetime.date) -> dict[str, object]:
    """Suggests, with the model version in use, every session it has not rated, ``NIGHTLY_CHUNK_SESSIONS``
    sessions a transaction (a big first night is never one long transaction). Returns ``{"model_version",
    "sessions", "turns"}`` (0 and 0 on an ordinary night; ``model_version`` ``None`` without a usable model)."""
    pending = sessions_without_suggestions()
    model = current_model()
    sessions = turns = 0
    size = settings.NIGHTLY_CHUNK_SESSIONS
    for start in range(0, len(pending), size):
        done = suggestions_refresh(session_ids=pending[start : start + size], model=model)
        sessions, turns = sessions + done["sessions"], turns + done["turns"]
    version = model.version if model else None
    return {"day": day.isoformat(), "model_version": version, "sessions": sessions, "turns": turns}


def suggestions_pending(*, day: datetime.date) -> list[int]:
    """The nightly chunks' part (``settings.NIGHTLY_SESSION_WORK``): the sessions this step would suggest."""
    return sessions_without_suggestions()


def suggestions_prepare(*, day: datetime.date, ids: list[int]) -> dict[str, object]:
    """Suggests the sessions ``ids`` (a chunk of the night) with the model version in use."""
    return suggestions_refresh(session_ids=ids)
