"""Resolves what people type (codes, Korean names, surface labels, speaker/stage aliases) to codes."""

from __future__ import annotations

from dataclasses import dataclass

from taxonomy import catalogue
from taxonomy.models import ClientStateDef, LabelAlias, LabelAxis, TechniqueLabelDef
from taxonomy.normalize import closest, normalize_label


@dataclass(frozen=True)
class LabelIndex:
    """One snapshot of the alias table, loaded once per import (two queries), then pure lookups."""

    techniques: dict[str, str]  # normalized alias -> code
    client_states: dict[str, str]
    technique_ids: dict[str, int]  # code -> label id
    client_state_ids: dict[str, int]

    @classmethod
    def load(cls) -> LabelIndex:
        technique_ids = dict(TechniqueLabelDef.objects.values_list("code", "id"))
        client_state_ids = dict(ClientStateDef.objects.values_list("code", "id"))
        techniques = {normalize_label(code): code for code in technique_ids}
        client_states = {normalize_label(code): code for code in client_state_ids}
        for axis, normalized, technique, state in LabelAlias.objects.values_list(
            "axis", "normalized", "technique__code", "client_state__code"
        ):
            if axis == LabelAxis.TECHNIQUE:
                techniques.setdefault(normalized, technique)
            else:
                client_states.setdefault(normalized, state)
        return cls(techniques, client_states, technique_ids, client_state_ids)

    def technique(self, item: str) -> str | None:
        return self.techniques.get(normalize_label(item))

    def client_state(self, item: str) -> str | None:
        return self.client_states.get(normalize_label(item))

    def closest_techniques(self, item: str) -> list[str]:
        return _closest_codes(item, self.techniques)

    def closest_client_states(self, item: str) -> list[str]:
        return _closest_codes(item, self.client_states)


def _closest_codes(item: str, aliases: dict[str, str], n: int = 3) -> list[str]:
    """The ``n`` codes whose code, Korean name or surface label is most like ``item`` (so a Korean typo
    such as '반엉' suggests reflection), best first."""
    codes: list[str] = []
    if not aliases:  # empty code tables (a database not seeded yet): nothing to suggest
        return codes
    for alias in closest(item, list(aliases), n=len(aliases)):
        if aliases[alias] not in codes:
            codes.append(aliases[alias])
            if len(codes) == n:
                break
    return codes


_SPEAKERS = {
    normalize_label(alias): speaker.code for speaker in catalogue.SPEAKERS for alias in (speaker.code, *speaker.aliases)
}
_STAGES = {normalize_label(alias): stage.code for stage in catalogue.STAGES for alias in (stage.code, *stage.aliases)}
_ACTS = {act.code: act.code for act in catalogue.DIALOG_ACTS}


def speaker_code(value: str) -> str | None:
    return _SPEAKERS.get(normalize_label(value))


def stage_code(value: str) -> str | None:
    return _STAGES.get(normalize_label(value))


def dialog_act_code(value: str) -> str | None:
    return _ACTS.get(value.strip().casefold())
