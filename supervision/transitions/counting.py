"""The counting rule of CONTRACT §10 and the figures built on its counts. No database access here: the golden
table (``selectors``) and persona files (``reading``) both feed this module, and the SQL form of the rule in
``selectors`` is proven equal to ``session_triples`` by ``tests/test_counting_sql.py``.

Rule: within one session, by ``seq``, take the client turns that carry at least one client state. For two
consecutive such turns P then C, the move is the set of technique categories (``by="category"``) or codes
(``by="technique"``) on the counselor turns between them; an empty move skips the pair. Every triple
(s, m, s′) with s a state of P, m in the move and s′ a state of C counts 1. A context is (s, m); its support
is the sum of its counts and P(s′ | s, m) its count over the support.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator

from taxonomy import catalogue

BY_CATEGORY, BY_TECHNIQUE = "category", "technique"
BY_CHOICES = (BY_CATEGORY, BY_TECHNIQUE)
DEFAULT_MIN_SUPPORT = 5
# CONTRACT §10: a triple is "unrealistic" / "missing" from this probability on; the lists hold at most ten.
NOTABLE_P = 0.2
LIST_CAP = 10
DIGITS = 4
# The 95 % interval of each cell: Wilson's score interval for a binomial share (count of the support).
WILSON_Z = 1.959963984540054

Triple = tuple[str, str, str]
# One turn as the rule sees it: (speaker, technique codes, client-state codes).
TurnLabels = tuple[str, Collection[str], Collection[str]]

_CATEGORY_OF = {t.code: t.category for t in catalogue.TECHNIQUES}


def move_of(techniques: Iterable[str], by: str) -> set[str]:
    """A counselor turn's part of a move: its techniques' categories, or the codes themselves."""
    if by == BY_CATEGORY:
        return {_CATEGORY_OF[code] for code in techniques}
    return set(techniques)


def session_triples(turns: Iterable[TurnLabels], by: str) -> Iterator[Triple]:
    """The triples of one session, its turns given in ``seq`` order."""
    previous: Collection[str] | None = None
    move: set[str] = set()
    counselor = catalogue.COUNSELOR
    for speaker, techniques, states in turns:
        if speaker == counselor:
            if previous is not None and techniques:
                move |= move_of(techniques, by)
        elif states:  # a client turn without states is passed over: it neither pairs nor ends a move
            if previous is not None and move:
                for state in previous:
                    for step in move:
                        for following in states:
                            yield state, step, following
            previous, move = states, set()


def count_sessions(sessions: Iterable[Iterable[TurnLabels]], by: str) -> tuple[Counter, int]:
    """The counts of every triple over the sessions (each its turns in ``seq`` order), and how many there were."""
    counts: Counter = Counter()
    total = 0
    for turns in sessions:
        total += 1
        counts.update(session_triples(turns, by))
    return counts, total


def by_context(counts: Counter) -> dict[tuple[str, str], Counter]:
    contexts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for (state, step, following), n in counts.items():
        if n:
            contexts[(state, step)][following] += n
    return dict(contexts)


def wilson(count: int, support: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson's 95 % score interval for ``count`` successes in ``support`` trials (``(0, 1)`` for none)."""
    if support <= 0:
        return 0.0, 1.0
    p = count / support
    z2 = z * z
    denominator = 1 + z2 / support
    centre = (p + z2 / (2 * support)) / denominator
    half = z * math.sqrt(p * (1 - p) / support + z2 / (4 * support * support)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def table_json(counts: Counter, *, by: str, sessions: int) -> dict:
    """The ``transition_table`` JSON (CONTRACT §10) with each context's 95 % Wilson intervals beside ``next``:
    contexts by support descending, then state and move; ``transitions`` is the sum of all counts."""
    rows = []
    for (state, step), following in by_context(counts).items():
        support = sum(following.values())
        ordered = sorted(following.items(), key=lambda item: (-item[1], item[0]))
        rows.append(
            {
                "state": state,
                "move": step,
                "support": support,
                "next": dict(ordered),
                "intervals": {nxt: [round(v, DIGITS) for v in wilson(n, support)] for nxt, n in ordered},
            }
        )
    rows.sort(key=lambda row: (-row["support"], row["state"], row["move"]))
    return {"by": by, "sessions": sessions, "transitions": sum(counts.values()), "contexts": rows}


def jsd(p: dict[str, float], q: dict[str, float]) -> float:
    """Jensen–Shannon divergence, base 2, of two distributions over next states (0 = the same, 1 = disjoint)."""
    total = 0.0
    for key in p.keys() | q.keys():
        a, b = p.get(key, 0.0), q.get(key, 0.0)
        m = (a + b) / 2
        if a > 0:
            total += a * math.log2(a / m)
        if b > 0:
            total += b * math.log2(b / m)
    return max(0.0, total / 2)


def _distribution(following: Counter) -> tuple[int, dict[str, float]]:
    support = sum(following.values())
    return support, {nxt: n / support for nxt, n in following.items()}


def compare(golden: Counter, persona: Counter, *, min_support: int = DEFAULT_MIN_SUPPORT) -> dict:
    """The figures of ``score_persona`` (CONTRACT §10) for a persona's counts against the golden ones.

    A context is compared when its support is at least ``min_support`` on both sides. ``jsd`` is the mean of
    the compared contexts' divergences weighted by golden support (``null`` when none was compared);
    ``coverage`` the golden support of the compared contexts over that of every golden context with support
    ≥ ``min_support`` (``null`` when there is none). Figures are rounded to 4 decimals, and the lists are
    ordered by their rounded figures, so what is printed is in the order it says.
    """
    ours, theirs = by_context(golden), by_context(persona)
    eligible_support = 0
    compared, unrealistic, missing = [], [], []
    weighted, weight = 0.0, 0
    for context, following in ours.items():
        support, p = _distribution(following)
        if support < min_support:
            continue
        eligible_support += support
        other = theirs.get(context)
        if other is None:
            continue
        persona_support, q = _distribution(other)
        if persona_support < min_support:
            continue
        divergence = jsd(p, q)
        weighted += divergence * support
        weight += support
        state, step = context
        compared.append(
            {
                "state": state,
                "move": step,
                "golden_support": support,
                "persona_support": persona_support,
                "jsd": round(divergence, DIGITS),
            }
        )
        for nxt, share in q.items():
            if share >= NOTABLE_P and not following.get(nxt):
                unrealistic.append({"state": state, "move": step, "next": nxt, "persona_p": round(share, DIGITS)})
        for nxt, share in p.items():
            if share >= NOTABLE_P and not other.get(nxt):
                missing.append({"state": state, "move": step, "next": nxt, "golden_p": round(share, DIGITS)})
    compared.sort(key=lambda row: (-row["jsd"], row["state"], row["move"]))
    unrealistic.sort(key=lambda row: (-row["persona_p"], row["state"], row["move"], row["next"]))
    missing.sort(key=lambda row: (-row["golden_p"], row["state"], row["move"], row["next"]))
    return {
        "contexts": len(compared),
        "jsd": round(weighted / weight, DIGITS) if weight else None,
        "coverage": round(weight / eligible_support, DIGITS) if eligible_support else None,
        "compared": compared,
        "unrealistic": unrealistic[:LIST_CAP],
        "missing": missing[:LIST_CAP],
    }


def counts_to_json(counts: Counter) -> list[list]:
    """Triple counts as JSON (``[[state, move, next, n], …]``, sorted) for keeping with a saved run."""
    return sorted([state, step, nxt, n] for (state, step, nxt), n in counts.items() if n)


def counts_from_json(rows: Iterable[list]) -> Counter:
    return Counter({(state, step, nxt): n for state, step, nxt, n in rows})
