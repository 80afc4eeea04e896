"""The tag catalogue: names of CONTRACT §6, derived from the taxonomy, append-only, Korean descriptions."""

import pytest
from django.db import IntegrityError
from django.utils import timezone

from supervision.tags import catalogue
from supervision.tags.models import TraineeTag

# v1 names in order. The catalogue may only grow at the end: never rename, reorder or remove.
PINNED_V1 = [
    *[f"overuses_{c}" for c in ("relational", "exploratory", "intervention", "stabilizing", "structuring")],
    *[f"underuses_{c}" for c in ("relational", "exploratory", "intervention", "stabilizing", "structuring")],
    "rq_below_fair",
    "skips_risk_assessment",
    *[f"prioritizes_{c}" for c in ("relational", "exploratory", "intervention", "stabilizing", "structuring")],
]


def test_it_keeps_the_v1_names_as_a_prefix():
    assert list(catalogue.TAG_NAMES[: len(PINNED_V1)]) == PINNED_V1
    assert len(set(catalogue.TAG_NAMES)) == len(catalogue.TAG_NAMES)


def test_it_marks_only_prioritizes_tags_as_declared():
    assert catalogue.DECLARED_TAG_NAMES == tuple(n for n in PINNED_V1 if n.startswith("prioritizes_"))


def test_it_describes_every_tag_in_korean():
    for tag in catalogue.TAGS:
        assert any("가" <= ch <= "힣" for ch in tag.ko), tag.name


def test_it_refuses_a_name_outside_the_catalogue_in_the_database(cast):
    now = timezone.now()
    with pytest.raises(IntegrityError):
        TraineeTag.objects.create(
            trainee=cast.trainee_a, tag="likes_cats", source="observed", observation_since=now, last_updated=now
        )
