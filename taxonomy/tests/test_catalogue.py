import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import DatabaseError, connection, transaction

from taxonomy import catalogue
from taxonomy.checks import catalogue_drift
from taxonomy.models import ClientStateDef, StageDef, TechniqueLabelDef

V10_TECHNIQUES = [
    "empathy", "reflection", "validation", "holding", "self_disclosure", "affect_conveyance", "humor",
    "exploration", "facilitative_question", "risk_assessment", "consent_motivation_check", "opinion_check",
    "confrontation", "interpretation",
    "stabilization", "hope_instillation", "reinforcement", "normalization",
    "principle_explanation", "psychoeducation", "homework",
]  # fmt: skip
V11_TECHNIQUES = [
    "clarification", "scaling", "chain_analysis", "cognitive_restructuring", "behavioral_alternative",
    "commitment_strategy", "here_and_now_focus", "restatement", "skills_coaching",
]  # fmt: skip
V10_STATES = [
    "involuntary", "defensive", "suicidal_ideation_admit", "negative_self_perception", "conflicted",
    "lack_of_confidence", "affect_contact", "thought_organizing", "responds_to_exploration", "expresses_plan",
    "defense_loosening",
]  # fmt: skip
V11_STATES = [
    "compliant_surface", "externalizing", "seeks_guidance", "apparent_competence", "active_passivity",
    "self_harm_disclosure", "somatic_complaint", "affect_masking", "focus_drift_fusion",
]  # fmt: skip


def test_it_pins_the_v1_1_lists_in_document_order():
    assert catalogue.TAXONOMY_VERSION == "1.1.0"
    assert list(catalogue.STAGE_CODES) == ["라포", "탐색", "개입", "정리"]
    assert list(catalogue.SPEAKER_CODES) == ["counselor", "client"]
    assert list(catalogue.CATEGORY_CODES) == ["RELATIONAL", "EXPLORATORY", "INTERVENTION", "STABILIZING", "STRUCTURING"]
    assert list(catalogue.TECHNIQUE_CODES) == V10_TECHNIQUES + V11_TECHNIQUES
    assert list(catalogue.CLIENT_STATE_CODES) == V10_STATES + V11_STATES
    assert list(catalogue.COMMENT_KIND_CODES) == ["rationale", "critique"]
    assert list(catalogue.DIALOG_ACT_CODES) == [
        "inform", "affirm", "confirm", "deny", "negate", "correct", "question", "request", "request_alt",
        "repeat", "help", "greeting", "thank", "goodbye", "silence", "null",
    ]  # fmt: skip


def test_it_knows_the_version_each_label_arrived_in():
    assert [t.code for t in catalogue.TECHNIQUES if t.since == "1.1.0"] == V11_TECHNIQUES
    assert [s.code for s in catalogue.CLIENT_STATES if s.since == "1.1.0"] == V11_STATES
    assert all(t.example and t.source_family for t in catalogue.TECHNIQUES if t.since == "1.1.0")


def test_it_places_the_v1_1_techniques_in_their_document_categories():
    categories = {t.code: t.category for t in catalogue.TECHNIQUES}
    assert categories["restatement"] == "RELATIONAL"
    assert categories["skills_coaching"] == "STABILIZING"
    assert categories["cognitive_restructuring"] == "INTERVENTION"
    assert categories["clarification"] == "EXPLORATORY"


def test_it_marks_exactly_the_two_safety_critical_states():
    assert catalogue.SAFETY_CRITICAL_STATES == {"suicidal_ideation_admit", "self_harm_disclosure"}


def test_it_knows_the_closing_acknowledgement_acts():
    assert catalogue.CLOSING_ACK_ACTS == {"affirm", "goodbye", "thank", "silence"}


@pytest.mark.django_db
def test_it_seeds_the_tables_exactly_as_the_catalogue():
    assert list(StageDef.objects.values_list("code", flat=True)) == ["라포", "탐색", "개입", "정리"]
    assert list(TechniqueLabelDef.objects.values_list("code", flat=True)) == V10_TECHNIQUES + V11_TECHNIQUES
    assert list(ClientStateDef.objects.values_list("code", flat=True)) == V10_STATES + V11_STATES
    assert TechniqueLabelDef.objects.get(code="skills_coaching").category == "STABILIZING"
    assert set(ClientStateDef.objects.filter(safety_critical=True).values_list("code", flat=True)) == {
        "suicidal_ideation_admit",
        "self_harm_disclosure",
    }
    assert catalogue_drift() == []
    call_command("check", "--database", "default")


@pytest.mark.django_db
def test_the_system_check_catches_a_table_that_drifted_from_the_catalogue():
    TechniqueLabelDef.objects.filter(code="humor").update(ko="농담", category="STRUCTURING")
    assert any("humor" in problem for problem in catalogue_drift())
    with pytest.raises(SystemCheckError, match=r"taxonomy\.E001"):
        call_command("check", "--database", "default")


@pytest.mark.django_db
def test_it_refuses_to_rename_a_code_in_the_database():
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        TechniqueLabelDef.objects.filter(code="empathy").update(code="empathy2")


@pytest.mark.django_db
def test_it_refuses_to_delete_a_code_in_the_database():
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM label_alias WHERE client_state_id IN (SELECT id FROM client_state_def)")
        cursor.execute("DELETE FROM client_state_def WHERE code = 'conflicted'")
    assert ClientStateDef.objects.filter(code="conflicted").exists()
