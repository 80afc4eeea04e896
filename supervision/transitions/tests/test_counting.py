"""The counting rule of CONTRACT §10 on hand-made sessions, pure and over the golden sessions."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.management import call_command

from supervision.transitions import counting, services
from supervision.transitions.tests.conftest import (
    TA01,
    TA01_BY_CATEGORY,
    TA01_BY_TECHNIQUE,
    TB01,
    TB01_BY_CATEGORY,
)


def turns_of(spec):
    return [
        ("counselor" if letter == "C" else "client", labels if letter == "C" else [], labels if letter == "K" else [])
        for letter, labels in spec
    ]


def test_it_counts_every_case_of_the_rule_on_one_session():
    assert Counter(counting.session_triples(turns_of(TA01), "category")) == Counter(TA01_BY_CATEGORY)
    assert Counter(counting.session_triples(turns_of(TA01), "technique")) == Counter(TA01_BY_TECHNIQUE)


def test_it_skips_a_pair_without_a_counselor_turn_between():
    assert Counter(counting.session_triples(turns_of(TB01), "category")) == Counter(TB01_BY_CATEGORY)


def test_it_counts_the_product_of_multi_label_states_and_moves():
    spec = [
        ("K", ["defensive", "involuntary"]),
        ("C", ["empathy", "confrontation"]),
        ("K", ["affect_contact", "defensive"]),
    ]
    counts = Counter(counting.session_triples(turns_of(spec), "category"))
    assert sum(counts.values()) == 2 * 2 * 2
    assert counts[("involuntary", "INTERVENTION", "defensive")] == 1


def test_it_counts_a_repeated_triple_once_per_pair_and_sums_over_pairs():
    spec = [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defensive"]), ("C", ["reflection"]), ("K", ["defensive"])]
    counts, sessions = counting.count_sessions([turns_of(spec), turns_of(spec)], "category")
    assert counts == Counter({("defensive", "RELATIONAL", "defensive"): 4})
    assert sessions == 2


def test_it_never_pairs_turns_across_sessions():
    first = [("K", ["defensive"]), ("C", ["empathy"])]
    second = [("K", ["affect_contact"])]
    assert counting.count_sessions([turns_of(first), turns_of(second)], "category")[0] == Counter()


def test_it_builds_the_table_in_the_contract_order_with_wilson_intervals():
    counts = Counter(
        {("b", "X", "n1"): 3, ("b", "X", "n2"): 1, ("a", "Y", "n1"): 4, ("a", "X", "n1"): 4, ("c", "X", "n1"): 1}
    )
    table = counting.table_json(counts, by="category", sessions=3)
    assert table["transitions"] == 13 and table["sessions"] == 3 and table["by"] == "category"
    assert [(c["state"], c["move"], c["support"]) for c in table["contexts"]] == [
        ("a", "X", 4),
        ("a", "Y", 4),
        ("b", "X", 4),
        ("c", "X", 1),
    ]
    b = table["contexts"][2]
    assert b["next"] == {"n1": 3, "n2": 1}
    # Wilson's 95 % interval of 3 of 4, worked out by hand: 0.3006 to 0.9544.
    assert b["intervals"]["n1"] == [0.3006, 0.9544]
    assert b["intervals"]["n2"] == [0.0456, 0.6994]
    assert table["contexts"][3]["intervals"]["n1"] == [0.2065, 1.0]


def test_it_counts_the_golden_sessions_by_the_same_rule(hand_made):
    table = services.transition_table(by="category")
    got = Counter({(c["state"], c["move"], n): k for c in table["contexts"] for n, k in c["next"].items()})
    assert got == Counter(TA01_BY_CATEGORY) + Counter(TB01_BY_CATEGORY)
    assert table["sessions"] == 2 and table["transitions"] == 6
    by_technique = services.transition_table(by="technique")
    got = Counter({(c["state"], c["move"], n): k for c in by_technique["contexts"] for n, k in c["next"].items()})
    assert got == Counter(TA01_BY_TECHNIQUE) + Counter({("involuntary", "empathy", "defense_loosening"): 1})


def test_it_narrows_the_table_to_trainees_and_to_a_supervisors_trainees(hand_made, cast):
    only_b = services.transition_table(trainees=["trainee_b"])
    assert only_b["sessions"] == 1 and only_b["transitions"] == 1
    as_supervisor_a = services.transition_table(user=cast.supervisor_a)
    assert as_supervisor_a["sessions"] == 1 and as_supervisor_a["transitions"] == 5
    assert services.transition_table(user=cast.staff)["transitions"] == 6
    assert services.transition_table(user=cast.trainee_a, trainees=["trainee_b"])["sessions"] == 0


def test_the_command_prints_the_table_as_its_last_line(hand_made, capsys):
    call_command("transition_table", "--by", "technique", "--trainee", "trainee_a")
    table = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert table["by"] == "technique" and table["sessions"] == 1 and table["transitions"] == 9
    top = table["contexts"][0]
    assert set(top) == {"state", "move", "support", "next", "intervals"}
    assert top["state"] == "defensive" and top["support"] == 2


@pytest.mark.parametrize("by", counting.BY_CHOICES)
def test_an_empty_portal_has_an_empty_table(db, by):
    assert services.transition_table(by=by) == {"by": by, "sessions": 0, "transitions": 0, "contexts": []}
