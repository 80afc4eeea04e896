"""A refused reply's words, kept for the form they came from.

A trainee's reply or a supervisor's answer that its service refuses (a pattern that looks like a phone number,
a control character, too long) is posted, refused and redirected back to the page: without this the user would
find the message and an empty box. The text waits in the user's session, one draft per kind of form, and the
page puts it back in that comment's box once (``take``)."""

from __future__ import annotations

# A refusal for length still keeps the words to trim; the session row stays small whatever is posted.
KEPT_CHARS = 20_000


def keep(request, kind: str, comment_id: int, text: str) -> None:
    request.session[f"draft:{kind}"] = {"comment": comment_id, "text": text[:KEPT_CHARS]}


def discard(request, kind: str) -> None:
    request.session.pop(f"draft:{kind}", None)


def take(request, kind: str) -> dict | None:
    """The kept draft, ``{"comment": id, "text": …}``, removed from the session; None when there is none."""
    return request.session.pop(f"draft:{kind}", None)
