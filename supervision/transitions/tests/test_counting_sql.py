"""The rule exists twice: ``counting.session_triples`` (persona files, and the golden sessions off PostgreSQL)
and the set-based statement of ``selectors``. Both must count the same triples."""

from __future__ import annotations

import random

import pytest

from supervision.transitions import counting, selectors
from supervision.transitions.tests.conftest import import_spec
from taxonomy import catalogue


def random_spec(rng: random.Random, turns: int) -> list[tuple[str, list[str]]]:
    spec = []
    for _ in range(turns):
        if rng.random() < 0.55:
            spec.append(("C", rng.sample(catalogue.TECHNIQUE_CODES, rng.choice((0, 1, 1, 2, 3)))))
        else:
            spec.append(("K", rng.sample(catalogue.CLIENT_STATE_CODES, rng.choice((0, 1, 1, 2)))))
    return spec


@pytest.mark.parametrize("by", counting.BY_CHOICES)
def test_the_statement_and_the_streaming_pass_count_the_same(cast, by):
    rng = random.Random(34)
    specs = {f"RS{i:02d}": random_spec(rng, rng.randint(1, 40)) for i in range(25)}
    for i, (code, spec) in enumerate(specs.items()):
        import_spec(code, spec, "trainee_a" if i % 2 else "trainee_b")
    expected, _ = counting.count_sessions(
        [
            [("counselor" if c == "C" else "client", ls if c == "C" else [], ls if c == "K" else []) for c, ls in spec]
            for spec in specs.values()
        ],
        by,
    )
    assert sum(expected.values()) > 100  # the sample exercises the rule
    sessions = selectors.golden_sessions()
    assert selectors._counts_sql(ids_of(sessions), by) == expected
    assert counting.count_sessions(selectors._streamed_sessions(sessions), by)[0] == expected
    for user in (cast.supervisor_a, cast.supervisor_b):
        scoped = selectors.golden_sessions(user=user)
        assert (
            selectors._counts_sql(ids_of(scoped), by)
            == counting.count_sessions(selectors._streamed_sessions(scoped), by)[0]
        )


def ids_of(sessions) -> list[int]:
    return list(sessions.values_list("pk", flat=True))
