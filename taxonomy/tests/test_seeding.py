"""sync_catalogue: the data migrations' and the test cast's way to the catalogue's code tables."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from taxonomy import catalogue
from taxonomy.checks import catalogue_drift
from taxonomy.models import ClientStateDef, LabelAlias, TechniqueLabelDef
from taxonomy.seeding import client_state_aliases, sync_catalogue, technique_aliases

ALL_ALIASES = {a for t in catalogue.TECHNIQUES for a in technique_aliases(t)} | {
    a for s in catalogue.CLIENT_STATES for a in client_state_aliases(s)
}


@pytest.mark.django_db
def test_it_restores_a_drifted_description_and_a_lost_alias_and_touches_nothing_else():
    TechniqueLabelDef.objects.filter(code="humor").update(ko="농담", definition="")
    lost = LabelAlias.objects.filter(technique__code="empathy", alias="공감")
    assert lost.exists()
    lost.delete()
    curated = LabelAlias.objects.create(
        axis="technique",
        alias="같이 느끼기",
        normalized="같이느끼기",
        technique=TechniqueLabelDef.objects.get(code="empathy"),
    )

    sync_catalogue()

    assert catalogue_drift() == []
    assert LabelAlias.objects.filter(technique__code="empathy", alias="공감", seeded=True).exists()
    assert LabelAlias.objects.filter(pk=curated.pk).exists()  # staff's own aliases stay


@pytest.mark.django_db
def test_a_second_run_only_reads():
    sync_catalogue()
    with CaptureQueriesContext(connection) as queries:
        sync_catalogue()
    statements = [q["sql"].split()[0] for q in queries.captured_queries]
    assert statements and set(statements) == {"SELECT"}, statements
    assert len(statements) <= 4


@pytest.mark.django_db
def test_it_refuses_an_alias_that_already_names_another_label():
    LabelAlias.objects.filter(technique__code="empathy", alias="공감").delete()
    LabelAlias.objects.create(
        axis="technique", alias="공감", normalized="공감", technique=TechniqueLabelDef.objects.get(code="humor")
    )
    with pytest.raises(ValueError, match="공감"):
        sync_catalogue()


@pytest.mark.django_db(transaction=True)
def test_it_fills_empty_tables():
    # As a transactional test's flush leaves them (TRUNCATE: the code tables refuse DELETE).
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE label_alias, technique_label_def, client_state_def, stage_def CASCADE")
    assert not TechniqueLabelDef.objects.exists() and not LabelAlias.objects.exists()

    sync_catalogue()

    assert catalogue_drift() == []
    assert ClientStateDef.objects.count() == len(catalogue.CLIENT_STATES)
    assert set(LabelAlias.objects.values_list("alias", flat=True)) == ALL_ALIASES
