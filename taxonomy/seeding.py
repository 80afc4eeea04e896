"""Writes the catalogue into the code tables. Used by data migrations and by tests that flush tables.

Seeding only inserts and updates descriptive fields; it never renames or deletes a code, so running it
again (or in a later migration after a label was appended) is always safe.
"""

from __future__ import annotations

from django.apps import apps as global_apps

from taxonomy import catalogue
from taxonomy.normalize import normalize_label


def technique_aliases(technique: catalogue.Technique) -> list[str]:
    return [technique.code, technique.ko, *technique.surface_labels]


def client_state_aliases(state: catalogue.ClientState) -> list[str]:
    return [state.code, state.ko, *state.surface_labels]


def sync_catalogue(apps=global_apps) -> None:
    """Brings the code tables in line with the catalogue. Reads each table once and writes only the rows that
    are missing or differ, in bulk: the test suite calls it for every test that starts from the cast, where
    a query per row (about 360 of them) cost 0.15 s a test."""
    StageDef = apps.get_model("taxonomy", "StageDef")
    TechniqueLabelDef = apps.get_model("taxonomy", "TechniqueLabelDef")
    ClientStateDef = apps.get_model("taxonomy", "ClientStateDef")
    LabelAlias = apps.get_model("taxonomy", "LabelAlias")

    _sync_rows(
        StageDef,
        {
            stage.code: {"ko": stage.ko, "definition": stage.definition, "position": position}
            for position, stage in enumerate(catalogue.STAGES)
        },
    )
    techniques = _sync_rows(
        TechniqueLabelDef,
        {
            technique.code: {
                "ko": technique.ko,
                "category": technique.category,
                "definition": technique.definition,
                "surface_labels": list(technique.surface_labels),
                "example": technique.example,
                "source_family": list(technique.source_family),
                "since": technique.since,
                "position": position,
            }
            for position, technique in enumerate(catalogue.TECHNIQUES)
        },
    )
    states = _sync_rows(
        ClientStateDef,
        {
            state.code: {
                "ko": state.ko,
                "definition": state.definition,
                "surface_labels": list(state.surface_labels),
                "example": state.example,
                "source_family": list(state.source_family),
                "since": state.since,
                "safety_critical": state.safety_critical,
                "position": position,
            }
            for position, state in enumerate(catalogue.CLIENT_STATES)
        },
    )
    wanted = [
        ("technique", alias, {"technique_id": techniques[technique.code].pk, "client_state_id": None})
        for technique in catalogue.TECHNIQUES
        for alias in technique_aliases(technique)
    ] + [
        ("client_state", alias, {"technique_id": None, "client_state_id": states[state.code].pk})
        for state in catalogue.CLIENT_STATES
        for alias in client_state_aliases(state)
    ]
    _seed_aliases(LabelAlias, wanted)


def _sync_rows(model, wanted: dict[str, dict]) -> dict:
    """Creates the rows of ``wanted`` (code → descriptive fields) that are missing and updates those whose
    fields differ; returns every wanted row by code."""
    rows = {row.code: row for row in model.objects.filter(code__in=list(wanted))}
    missing, changed, fields = [], [], set()
    for code, values in wanted.items():
        row = rows.get(code)
        if row is None:
            missing.append(model(code=code, **values))
            continue
        differing = [name for name, value in values.items() if getattr(row, name) != value]
        for name in differing:
            setattr(row, name, values[name])
        if differing:
            changed.append(row)
            fields.update(differing)
    if changed:
        model.objects.bulk_update(changed, sorted(fields))
    for row in model.objects.bulk_create(missing):
        rows[row.code] = row
    return rows


def _seed_aliases(LabelAlias, wanted: list[tuple[str, str, dict]]) -> None:
    """Adds the aliases not yet there; one that already points at another label is an error in the
    catalogue (an alias names one code on its axis)."""
    targets = {
        (axis, normalized): {"technique_id": technique_id, "client_state_id": client_state_id}
        for axis, normalized, technique_id, client_state_id in LabelAlias.objects.values_list(
            "axis", "normalized", "technique_id", "client_state_id"
        )
    }
    new = []
    for axis, alias, target in wanted:
        key = (axis, normalize_label(alias))
        found = targets.get(key)
        if found is None:
            targets[key] = target
            new.append(LabelAlias(axis=axis, alias=alias, normalized=key[1], seeded=True, **target))
        elif found != target:
            raise ValueError(f"alias {alias!r} already points at another {axis} label")
    LabelAlias.objects.bulk_create(new)
