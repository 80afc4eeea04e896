"""label_codes_by_turn: the label codes of some sessions' (or turns') turns, in the order they were linked."""

from __future__ import annotations

import pytest

from supervision.exporting import label_codes_by_turn
from supervision.models import Turn, TurnClientState, TurnTechnique
from supervision.testing import golden_line, import_lines

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_sessions(taxonomy_tables):
    # Codes out of alphabetical order, so the §2 list order (the order of linking) is what is checked.
    import_lines(
        [
            golden_line("LCA", 0, techniques=["validation", "empathy", "reflection"]),
            golden_line("LCA", 1, client_states=["somatic_complaint", "affect_contact"]),
            golden_line("LCA", 2, techniques=[]),
        ]
    )
    import_lines([golden_line("LCB", 0, techniques=["scaling"]), golden_line("LCB", 1)])
    return {turn.utterance_id: turn.pk for turn in Turn.objects.all()}


def test_it_reads_the_sessions_labels_in_the_order_they_were_linked(two_sessions):
    session_a = Turn.objects.get(pk=two_sessions["LCA-C-001"]).session_id

    assert label_codes_by_turn(TurnTechnique, [session_a]) == {
        two_sessions["LCA-C-001"]: ["validation", "empathy", "reflection"]
    }
    assert label_codes_by_turn(TurnClientState, [session_a]) == {
        two_sessions["LCA-K-001"]: ["somatic_complaint", "affect_contact"]
    }


def test_other_sessions_and_an_empty_selection_read_nothing(two_sessions):
    session_b = Turn.objects.get(pk=two_sessions["LCB-C-001"]).session_id

    assert label_codes_by_turn(TurnTechnique, [session_b]) == {two_sessions["LCB-C-001"]: ["scaling"]}
    assert label_codes_by_turn(TurnTechnique, []) == {}
    assert label_codes_by_turn(TurnTechnique, [0]) == {}


def test_turns_are_read_by_id_the_same_way(two_sessions):
    wanted = [two_sessions["LCA-C-001"], two_sessions["LCB-C-001"]]

    assert label_codes_by_turn(TurnTechnique, turn_ids=wanted) == {
        two_sessions["LCA-C-001"]: ["validation", "empathy", "reflection"],
        two_sessions["LCB-C-001"]: ["scaling"],
    }
