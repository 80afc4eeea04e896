"""The admin's comment form applies the same checks as the API and the transcript form."""

import pytest

from supervision.admin import CommentForm


@pytest.mark.parametrize(
    ("data", "field", "fragment"),
    [
        ({"kind": "critique", "text": "연락처 010-0000-0000 남김"}, "text", "전화번호"),
        ({"kind": "critique", "text": "가" * 10_001}, "text", "10,000"),
        ({"kind": "rationale", "text": "근거", "severity": "major"}, None, "critique"),
        ({"kind": "critique", "text": "   "}, "text", ""),
    ],
)
def test_it_rejects_what_the_comment_service_rejects(db, data, field, fragment):
    form = CommentForm(data=data)
    assert not form.is_valid()
    errors = form.errors.get(field or "__all__")
    assert errors, form.errors
    assert fragment in " ".join(errors)


def test_it_stores_the_structured_critique_as_intent_deviation(db):
    form = CommentForm(
        data={"kind": "critique", "text": "재구성이 필요했음", "dimension": "개입 시점",
              "expected": "cognitive_restructuring", "actual": "validation", "severity": "moderate"}
    )  # fmt: skip
    assert form.is_valid(), form.errors
    assert form.instance.intent_deviation == {
        "dimension": "개입 시점", "expected": "cognitive_restructuring", "actual": "validation", "severity": "moderate",
    }  # fmt: skip
