"""The review-gauge figures, derived from per-session tallies (no database access here).

Definitions (also in ``supervision/gauge/README.md``). "In scope" is one session for a per-session
snapshot, or the trainee's sessions held in the ``GAUGE_WINDOW_DAYS`` days ending the snapshot's date
for a trainee-wide one.

- ``turns`` / ``counselor_turns``: turns, and counselor turns, of the sessions in scope.
- ``techniques``: every technique code of the catalogue → number of counselor turns carrying it.
- ``categories[c].count``: technique labels of category ``c`` on counselor turns in scope;
  ``share`` = count / all technique labels on those turns (a turn with two labels counts twice);
  ``null`` when there are no labels at all. ``status``: ``under`` when share < band low, ``over`` when
  share > band high, else ``within`` (the band ends are inside); ``null`` without a share or a band.
  Status is decided on the exact fraction; the stored share is rounded to 4 decimals.
- ``rq_ratio`` = reflections / questions (MITI 4.2.1; the sets are ``catalogue.REFLECTION_TECHNIQUES``
  and ``catalogue.QUESTION_TECHNIQUES``). With 0 questions the ratio is undefined and stored as
  ``null``; ``rq_band`` is then ``good`` when there was at least one reflection (any number of
  reflections per zero questions clears every threshold) and ``null`` when there were neither.
  Otherwise ``rq_band`` is ``good`` (≥ 2), ``fair`` (≥ 1) or ``below_fair`` (< 1).
- ``critiques``: accepted critiques (``kind=critique``, ``is_suggestion=False``; an imported golden
  critique counts as accepted) on turns in scope, by ``intent_deviation.severity`` — a critique
  without a severity is in no bucket. ``critique_dimensions``: the same, by ``dimension``.
- ``intent_deviation_rate`` = counselor turns carrying at least one accepted critique with a
  non-empty ``intent_deviation`` / counselor turns in scope; counting turns (not critiques) keeps it a
  rate between 0 and 1 when a supervisor writes two critiques on one turn. ``null`` with 0 counselor turns.
- ``client_state_transitions["a>b"]``: for every pair of consecutive client turns of a session (the
  counselor's turns in between are skipped), one count per (label of the earlier, label of the later)
  pair; a client turn without labels yields no pair. ``a>a`` (a state that persists) is counted.
  Only pairs that occur are listed.
- ``silent_close_events``: maximal runs of ≥ ``catalogue.SILENT_CLOSE_RUN`` consecutive client
  no-input turns (``rules.is_no_input``); counselor turns in between do not break a run, a client turn
  with words does. A run of 5 is one event.
- ``closing_acknowledged`` / ``closed_on_resuming_client``: sessions whose last client turn is in the
  closing stage (정리) and carries an act of ``catalogue.CLOSING_ACK_ACTS`` / any other act, ``null``
  or none. A session whose last client turn is not in 정리 counts in neither.
- ``safety``: ``events`` — safety events (CONTRACT §8: one per client turn and safety-critical state) on
  the turns in scope; ``answered`` — those a risk assessment answered within ``SAFETY_RESPONSE_TURNS``
  counselor turns; ``median_latency`` — the median position of that answer among the following counselor
  turns (1 = the very next), ``null`` when none was answered.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from taxonomy import catalogue

UNDER, WITHIN, OVER = "under", "within", "over"
BELOW_FAIR, FAIR, GOOD = "below_fair", "fair", "good"
# MITI 4.2.1 reflection-to-question thresholds (DESIGN.md, "Review gauge"): the charts and the tags read these.
MITI_FAIR, MITI_GOOD = 1.0, 2.0
RQ_BAND_KO = {
    BELOW_FAIR: f"기준 미달 (below fair < {MITI_FAIR:g}:1)",
    FAIR: f"적정 (fair ≥ {MITI_FAIR:g}:1)",
    GOOD: f"우수 (good ≥ {MITI_GOOD:g}:1)",
}
RQ_BAND_SHORT_KO = {BELOW_FAIR: "기준 미달", FAIR: "적정", GOOD: "우수"}
DIGITS = 4

Band = tuple[float, float]


@dataclass
class Tally:
    """The additive counts of one session; a trainee-wide tally is the sum of its sessions'."""

    sessions: int = 0
    turns: int = 0
    counselor_turns: int = 0
    techniques: Counter = field(default_factory=Counter)
    critiques: Counter = field(default_factory=Counter)
    dimensions: Counter = field(default_factory=Counter)
    deviation_turns: int = 0
    silent_close_events: int = 0
    closing_acknowledged: int = 0
    closed_on_resuming_client: int = 0
    transitions: Counter = field(default_factory=Counter)
    # safety events (CONTRACT §8): how many, how many answered, and the answers' latencies ("1" → count)
    safety_events: int = 0
    safety_answered: int = 0
    safety_latencies: Counter = field(default_factory=Counter)

    _INTEGERS = (
        "sessions",
        "turns",
        "counselor_turns",
        "deviation_turns",
        "silent_close_events",
        "closing_acknowledged",
        "closed_on_resuming_client",
        "safety_events",
        "safety_answered",
    )
    _COUNTERS = ("techniques", "critiques", "dimensions", "transitions", "safety_latencies")

    def add(self, other: Tally) -> None:
        for name in self._INTEGERS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in self._COUNTERS:
            getattr(self, name).update(getattr(other, name))

    def add_safety_event(self, latency: int | None) -> None:
        self.safety_events += 1
        if latency is not None:
            self.safety_answered += 1
            self.safety_latencies[str(latency)] += 1

    def as_json(self) -> dict:
        """The tally as JSON (``SessionTally.tally``); counters keep only the keys that occur."""
        return {
            f.name: dict(getattr(self, f.name)) if f.name in self._COUNTERS else getattr(self, f.name)
            for f in fields(self)
        }

    def canonical(self) -> str:
        """The same text for equal tallies, however their counters were filled."""
        return json.dumps(self.as_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: Mapping) -> Tally:
        return cls(**{name: Counter(value) if name in cls._COUNTERS else value for name, value in data.items()})


def share(count: int, total: int) -> float | None:
    return count / total if total else None


def band_status(value: float | None, band: Band | None) -> str | None:
    if value is None or band is None:
        return None
    low, high = band
    if value < low:
        return UNDER
    if value > high:
        return OVER
    return WITHIN


def rq(reflections: int, questions: int) -> tuple[float | None, str | None]:
    """(ratio, MITI band); see the module docstring for the zero-question case."""
    if questions == 0:
        return None, (GOOD if reflections else None)
    ratio = reflections / questions
    return ratio, rq_band(ratio)


def rq_band(ratio: float) -> str:
    """The MITI band of a reflection-to-question ratio."""
    if ratio >= MITI_GOOD:
        return GOOD
    return FAIR if ratio >= MITI_FAIR else BELOW_FAIR


def category_counts(techniques: Mapping[str, int]) -> dict[str, int]:
    counts = dict.fromkeys(catalogue.CATEGORY_CODES, 0)
    for code, n in techniques.items():
        counts[catalogue.TECHNIQUES_BY_CODE[code].category] += n
    return counts


def categories(techniques: Mapping[str, int], bands: Mapping[str, Band]) -> dict[str, dict]:
    """``{category: {"count", "share", "band", "status"}}`` for every catalogue category, in order."""
    counts = category_counts(techniques)
    total = sum(counts.values())
    result = {}
    for code, count in counts.items():
        exact = share(count, total)
        band = bands.get(code)
        result[code] = {
            "count": count,
            "share": None if exact is None else round(exact, DIGITS),
            "band": list(band) if band else None,
            "status": band_status(exact, band),
        }
    return result


def median_latency(latencies: Mapping[str, int]) -> float | None:
    """The median of the answered events' latencies (a multiset kept as ``{"latency": count}``)."""
    values = sorted(int(latency) for latency, n in latencies.items() for _ in range(n))
    return float(statistics.median(values)) if values else None


def snapshot_figures(tally: Tally, bands: Mapping[str, Band]) -> dict:
    """The stored figures of one snapshot (model field names of ``GaugeSnapshot``)."""
    reflections = sum(tally.techniques[c] for c in catalogue.REFLECTION_TECHNIQUES)
    questions = sum(tally.techniques[c] for c in catalogue.QUESTION_TECHNIQUES)
    ratio, rq_band = rq(reflections, questions)
    deviation = share(tally.deviation_turns, tally.counselor_turns)
    return {
        "sessions": tally.sessions,
        "turns": tally.turns,
        "counselor_turns": tally.counselor_turns,
        "technique_labels": sum(tally.techniques.values()),
        "categories": categories(tally.techniques, bands),
        "techniques": {code: tally.techniques[code] for code in catalogue.TECHNIQUE_CODES},
        "reflections": reflections,
        "questions": questions,
        "rq_ratio": None if ratio is None else round(ratio, DIGITS),
        "rq_band": rq_band or "",
        "critiques": {severity: tally.critiques[severity] for severity in catalogue.CRITIQUE_SEVERITIES},
        "critique_dimensions": dict(sorted(tally.dimensions.items())),
        "intent_deviation_turns": tally.deviation_turns,
        "intent_deviation_rate": None if deviation is None else round(deviation, DIGITS),
        "silent_close_events": tally.silent_close_events,
        "closing_acknowledged": tally.closing_acknowledged,
        "closed_on_resuming_client": tally.closed_on_resuming_client,
        "client_state_transitions": dict(sorted(tally.transitions.items())),
        "safety": {
            "events": tally.safety_events,
            "answered": tally.safety_answered,
            "median_latency": median_latency(tally.safety_latencies),
        },
        "bands": {code: list(band) for code, band in bands.items()},
    }
