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
    StageDef = apps.get_model("taxonomy", "StageDef")
    TechniqueLabelDef = apps.get_model("taxonomy", "TechniqueLabelDef")
    ClientStateDef = apps.get_model("taxonomy", "ClientStateDef")
    LabelAlias = apps.get_model("taxonomy", "LabelAlias")

    for position, stage in enumerate(catalogue.STAGES):
        StageDef.objects.update_or_create(
            code=stage.code, defaults={"ko": stage.ko, "definition": stage.definition, "position": position}
        )
    for position, technique in enumerate(catalogue.TECHNIQUES):
        label, _ = TechniqueLabelDef.objects.update_or_create(
            code=technique.code,
            defaults={
                "ko": technique.ko,
                "category": technique.category,
                "definition": technique.definition,
                "surface_labels": list(technique.surface_labels),
                "example": technique.example,
                "source_family": list(technique.source_family),
                "since": technique.since,
                "position": position,
            },
        )
        _seed_aliases(LabelAlias, "technique", technique_aliases(technique), technique=label)
    for position, state in enumerate(catalogue.CLIENT_STATES):
        label, _ = ClientStateDef.objects.update_or_create(
            code=state.code,
            defaults={
                "ko": state.ko,
                "definition": state.definition,
                "surface_labels": list(state.surface_labels),
                "example": state.example,
                "source_family": list(state.source_family),
                "since": state.since,
                "safety_critical": state.safety_critical,
                "position": position,
            },
        )
        _seed_aliases(LabelAlias, "client_state", client_state_aliases(state), client_state=label)


def _seed_aliases(LabelAlias, axis: str, aliases: list[str], **target) -> None:
    for alias in aliases:
        normalized = normalize_label(alias)
        existing = LabelAlias.objects.filter(axis=axis, normalized=normalized).first()
        if existing is None:
            LabelAlias.objects.create(axis=axis, alias=alias, normalized=normalized, seeded=True, **target)
        elif existing.technique_id != _pk(target.get("technique")) or existing.client_state_id != _pk(
            target.get("client_state")
        ):
            raise ValueError(f"alias {alias!r} already points at another {axis} label")


def _pk(obj):
    return obj.pk if obj is not None else None
