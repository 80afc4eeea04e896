"""Words a service refused, kept for the form they came from.

A trainee's reply, a supervisor's answer or a safety review note that its service refuses (a pattern that looks
like a phone number, a control character, too long) is posted, refused and redirected back to the page: without
this the user would find the message and an empty box. The text waits in the user's session, one draft per kind
of form with the id of what it was about (the comment, the event), and the page puts it back in that box once
(``take``)."""

from __future__ import annotations

# A refusal for length still keeps the words to trim; the session row stays small whatever is posted.
KEPT_CHARS = 20_000


def keep(request, kind: str, target_id: int, text: str) -> None:
    request.session[f"draft:{kind}"] = {"target": target_id, "text": text[:KEPT_CHARS]}


def discard(request, kind: str) -> None:
    request.session.pop(f"draft:{kind}", None)


def take(request, kind: str) -> dict | None:
    """The kept draft, ``{"target": id, "text": …}``, removed from the session; None when there is none."""
    return request.session.pop(f"draft:{kind}", None)
