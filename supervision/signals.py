"""Signals between the core and the capabilities built on it, so the core imports none of them.

``golden_labels_changed`` — the golden labels (or the turns) of some sessions were written and the write is
committed: ``session_ids`` names them. Sent by the label service and the transcript import, from
``transaction.on_commit``; a receiver must not raise (the write is done, whoever sent it has answered).

``turns_rewritten`` — the words, cues or stage of turns of some sessions were edited after their import (the
admin's turn form) and the edit is committed: ``session_ids`` names them and ``turn_ids`` the turns edited.
What was read from the old words (the label suggester's suggestions) is to be read again. Same rules as above.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.db import transaction
from django.dispatch import Signal

golden_labels_changed = Signal()
turns_rewritten = Signal()


def _send_on_commit(signal: Signal, sender, session_ids: Iterable[int], **extra) -> None:
    session_ids = sorted(set(session_ids))
    if session_ids:
        transaction.on_commit(partial(signal.send, sender=sender, session_ids=session_ids, **extra))


def golden_labels_written(sender, session_ids: Iterable[int]) -> None:
    """Sends ``golden_labels_changed`` for these sessions once the current transaction commits."""
    _send_on_commit(golden_labels_changed, sender, session_ids)


def turns_rewritten_in(sender, session_ids: Iterable[int], turn_ids: Iterable[int]) -> None:
    """Sends ``turns_rewritten`` for these turns of these sessions once the current transaction commits."""
    _send_on_commit(turns_rewritten, sender, session_ids, turn_ids=sorted(set(turn_ids)))
