"""A system check that fails when the code tables and the catalogue disagree.

Tagged ``database`` so it runs with ``manage.py check --database default`` and before ``migrate``;
it stays silent while the tables do not exist yet (a fresh database before its first migration).
"""

from __future__ import annotations

from django.core.checks import Error, Tags, register
from django.db import DatabaseError, connections

from taxonomy import catalogue


def catalogue_drift() -> list[str]:
    """Human-readable differences between the DB code tables and ``taxonomy.catalogue``."""
    from taxonomy.models import ClientStateDef, StageDef, TechniqueLabelDef

    problems: list[str] = []
    expected_stages = [s.code for s in catalogue.STAGES]
    stages = list(StageDef.objects.order_by("position").values_list("code", flat=True))
    if stages != expected_stages:
        problems.append(f"stage_def holds {stages}, the catalogue {expected_stages}")

    rows = list(TechniqueLabelDef.objects.order_by("position").values_list("code", "category", "ko", "since"))
    expected = [(t.code, t.category, t.ko, t.since) for t in catalogue.TECHNIQUES]
    problems += _compare("technique_label_def", rows, expected)

    rows = list(ClientStateDef.objects.order_by("position").values_list("code", "ko", "since", "safety_critical"))
    expected = [(s.code, s.ko, s.since, s.safety_critical) for s in catalogue.CLIENT_STATES]
    problems += _compare("client_state_def", rows, expected)
    return problems


def _compare(table: str, rows: list[tuple], expected: list[tuple]) -> list[str]:
    problems = []
    for index in range(max(len(rows), len(expected))):
        got = rows[index] if index < len(rows) else None
        want = expected[index] if index < len(expected) else None
        if got != want:
            problems.append(f"{table} position {index}: table has {got}, catalogue has {want}")
    return problems


@register(Tags.database)
def check_catalogue_matches_tables(app_configs=None, databases=None, **kwargs):
    if not databases or "default" not in databases:
        return []
    try:
        tables = connections["default"].introspection.table_names()
    except DatabaseError:
        return []
    if "technique_label_def" not in tables:
        return []
    try:
        problems = catalogue_drift()
    except DatabaseError:  # tables from an older migration state: migrate will bring them in line
        return []
    return [
        Error(
            f"The taxonomy code tables disagree with taxonomy.catalogue v{catalogue.TAXONOMY_VERSION}: {p}",
            hint="Labels are append-only: add a data migration that calls taxonomy.seeding.sync_catalogue.",
            id="taxonomy.E001",
        )
        for p in problems
    ]
