"""Small builders shared by the tag tests (synthetic data only)."""

from __future__ import annotations

import datetime

from supervision.models import Session

T0 = datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC)


def make_sessions(trainee, count: int, prefix: str | None = None) -> list[Session]:
    prefix = prefix or f"TAG_{trainee.username}"
    return [
        Session.objects.create(code=f"{prefix}_{n:02d}", trainee=trainee, source="test_synthetic")
        for n in range(1, count + 1)
    ]


def category_entry(status: str, share: float, band=(0.25, 0.45), count: int = 10) -> dict:
    return {"count": count, "share": share, "band": list(band), "status": status}


def snapshot(session_id: int | None = None, rq_band: str = "fair", **categories) -> dict:
    """A per-session snapshot in the CONTRACT §6 shape; categories default to balanced (mid-band)."""
    cats = {code: category_entry("within", 0.35) for code in ("RELATIONAL", "EXPLORATORY", "INTERVENTION")}
    cats.update({"STABILIZING": category_entry("within", 0.15, (0.05, 0.25))})
    cats.update({"STRUCTURING": category_entry("within", 0.1, (0.05, 0.2))})
    cats.update(categories)
    return {
        "trainee": 1,
        "date": "2026-03-02",
        "session": session_id,
        "turns": 40,
        "counselor_turns": 20,
        "categories": cats,
        "techniques": {},
        "rq_ratio": 1.2,
        "rq_band": rq_band,
        "critiques": {"minor": 0, "moderate": 0, "major": 0},
        "intent_deviation_rate": 0.0,
        "dialog_acts": {"silent_close_events": 0, "closing_acknowledged": 1, "closed_on_resuming_client": 0},
        "client_state_transitions": {},
    }
