"""The tendency-tag catalogue (CONTRACT §6): the only place that spells a tag name.

Names are derived from the taxonomy's technique categories, so a category appended there yields its
tags here. The list is append-only: a new tag is appended (with ``since``), never renamed or removed —
stored tags keep their name forever, and ``tests/test_tag_catalogue.py`` pins the v1 names as a prefix.
Adding a tag changes the model's check constraint, so ``makemigrations tags`` writes the migration.
"""

from __future__ import annotations

from dataclasses import dataclass

from taxonomy import catalogue

OBSERVED = "observed"
DECLARED = "declared"


@dataclass(frozen=True)
class TagDef:
    name: str
    source: str  # observed: derived from the sessions; declared: the trainee's stated focus
    ko: str  # Korean description shown to users
    category: str | None = None  # upper-case taxonomy category the tag is about, if any
    since: str = "1.0.0"


def _category_tags() -> list[TagDef]:
    over, under = [], []
    for category in catalogue.CATEGORIES:
        c = category.code.lower()
        over.append(
            TagDef(
                f"overuses_{c}",
                OBSERVED,
                f"{category.ko} 기법 비율이 목표 범위보다 높은 회기가 이어짐",
                category.code,
            )
        )
        under.append(
            TagDef(
                f"underuses_{c}",
                OBSERVED,
                f"{category.ko} 기법 비율이 목표 범위보다 낮은 회기가 이어짐",
                category.code,
            )
        )
    return over + under


def _declared_tags() -> list[TagDef]:
    return [
        TagDef(
            f"prioritizes_{category.code.lower()}",
            DECLARED,
            f"{category.ko} 기법에 집중하겠다고 스스로 밝힘",
            category.code,
        )
        for category in catalogue.CATEGORIES
    ]


TAGS: tuple[TagDef, ...] = (
    *_category_tags(),
    TagDef("rq_below_fair", OBSERVED, "반영 대 질문 비율이 MITI 기준 '적정'(1:1)에 못 미친 회기가 이어짐"),
    TagDef(
        "skips_risk_assessment",
        OBSERVED,
        "자살·자해 관련 내담자 상태가 나온 회기에서 위험사정 기법이 보이지 않음",
    ),
    *_declared_tags(),
)

TAGS_BY_NAME = {t.name: t for t in TAGS}
TAG_NAMES = tuple(t.name for t in TAGS)
DECLARED_TAG_NAMES = tuple(t.name for t in TAGS if t.source == DECLARED)

# Named tags the gauge translation refers to (kept here so no other module spells a tag name).
RQ_BELOW_FAIR = "rq_below_fair"
SKIPS_RISK_ASSESSMENT = "skips_risk_assessment"


def overuses(category_code: str) -> str:
    return f"overuses_{category_code.lower()}"


def underuses(category_code: str) -> str:
    return f"underuses_{category_code.lower()}"


def prioritizes(category_code: str) -> str:
    return f"prioritizes_{category_code.lower()}"
