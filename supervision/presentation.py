"""Colours and Korean names for chips, charts and timelines: the one place the admin and the trainee
pages take them from. Codes come from the catalogue; palettes are zipped onto catalogue order, so a label
appended to the catalogue gets a colour without this module spelling any code.

Every colour pair keeps at least 4.5:1 contrast between text and background (WCAG AA).
"""

from __future__ import annotations

from dataclasses import dataclass

from taxonomy import catalogue


@dataclass(frozen=True)
class Swatch:
    background: str
    text: str
    stroke: str  # chart strokes and chip borders


# Technique categories in catalogue order: relational, exploratory, intervention, stabilizing, structuring.
_CATEGORY_PALETTE = (
    Swatch("#e3ecff", "#1d3f8f", "#3057b9"),
    Swatch("#dff5ea", "#135c38", "#1f8a53"),
    Swatch("#fde8dc", "#8a3510", "#c4561d"),
    Swatch("#f1e6fb", "#5b2a86", "#7e45b5"),
    Swatch("#fff3c9", "#6b4f00", "#a67c00"),
)
CATEGORY_SWATCH: dict[str, Swatch] = {
    category.code: _CATEGORY_PALETTE[i % len(_CATEGORY_PALETTE)] for i, category in enumerate(catalogue.CATEGORIES)
}
CATEGORY_KO: dict[str, str] = {category.code: category.ko for category in catalogue.CATEGORIES}
CLIENT_STATE_SWATCH = Swatch("#eef0f4", "#2f3645", "#5a6272")
SAFETY_CRITICAL_SWATCH = Swatch("#fde2e1", "#8c1512", "#c62828")
FALLBACK_SWATCH = Swatch("#eef0f4", "#2f3645", "#5a6272")

# Severities in catalogue order: minor, moderate, major.
_SEVERITY_PALETTE = (
    Swatch("#fff6d6", "#6b4f00", "#c9a227"),
    Swatch("#ffe6cc", "#8a3d00", "#e07b00"),
    Swatch("#fde2e1", "#8c1512", "#c62828"),
)
SEVERITY_SWATCH: dict[str, Swatch] = dict(zip(catalogue.CRITIQUE_SEVERITIES, _SEVERITY_PALETTE, strict=True))
SEVERITY_KO: dict[str, str] = dict(zip(catalogue.CRITIQUE_SEVERITIES, ("경미", "보통", "중대"), strict=True))

# Stages in catalogue order: 라포, 탐색, 개입, 정리.
_STAGE_PALETTE = ("#7aa2e3", "#5cb08a", "#e08a5a", "#a58bd6")
STAGE_COLOUR: dict[str, str] = {
    stage.code: _STAGE_PALETTE[i % len(_STAGE_PALETTE)] for i, stage in enumerate(catalogue.STAGES)
}
STAGE_KO: dict[str, str] = {stage.code: stage.ko for stage in catalogue.STAGES}

TECHNIQUE_KO: dict[str, str] = {t.code: t.ko for t in catalogue.TECHNIQUES}
TECHNIQUE_CATEGORY: dict[str, str] = {t.code: t.category for t in catalogue.TECHNIQUES}
CLIENT_STATE_KO: dict[str, str] = {s.code: s.ko for s in catalogue.CLIENT_STATES}

STATUS_KO = {"under": "과소", "within": "범위 안", "over": "과다"}
# Tendency-tag statuses as a trainee reads them (the admin keeps the code beside the word).
TAG_STATUS_KO = {"observation": "관찰", "hypothesis": "가설", "verified": "검증됨"}


def technique_chip_class(code: str) -> str:
    """The palette class of a technique chip (``.chip.cat-<CATEGORY>`` in /palette.css)."""
    category = TECHNIQUE_CATEGORY.get(code)
    return f"chip cat-{category}" if category in CATEGORY_SWATCH else "chip"


def client_state_chip_class(code: str) -> str:
    return "chip state critical" if code in catalogue.SAFETY_CRITICAL_STATES else "chip state"


def percent(share: float) -> str:
    """A share as the gauge shows it everywhere (charts, suggestions): 0.05 → "5%", 0.333 → "33%"."""
    return f"{round(share * 100)}%"
