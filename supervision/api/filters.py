"""Query-string filters shared by the API's lists."""

from __future__ import annotations

import django_filters
from django import forms
from django.core.exceptions import ValidationError

from supervision.roles import visible_trainees


class TraineeField(forms.ModelChoiceField):
    """A trainee named by user id or by username, among the trainees the user may see."""

    default_error_messages = {
        "invalid_choice": "수련생 '%(value)s'를 찾을 수 없습니다(볼 수 있는 수련생의 id나 아이디를 적어 주세요)."
    }

    def to_python(self, value):
        if value in self.empty_values:
            return None
        value = str(value).strip()
        key = "pk" if value.isascii() and value.isdigit() and len(value) < 10 else "username"
        try:
            return self.queryset.get(**{key: value})
        except (ValueError, TypeError, self.queryset.model.DoesNotExist):
            raise ValidationError(
                self.error_messages["invalid_choice"], code="invalid_choice", params={"value": value}
            ) from None


class TraineeFilter(django_filters.ModelChoiceFilter):
    """``?trainee=<id or username>``; anyone the user may not see is a 400, like a made-up id."""

    field_class = TraineeField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("queryset", lambda request: visible_trainees(request.user if request else None))
        kwargs.setdefault("label", "수련생 id 또는 아이디")
        super().__init__(*args, **kwargs)


class TrueFalseFilter(django_filters.TypedChoiceFilter):
    """``true`` or ``false`` (CONTRACT §5); anything else is a 400 naming the parameter."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("choices", (("true", "true"), ("false", "false")))
        kwargs.setdefault("coerce", lambda value: value == "true")
        super().__init__(*args, **kwargs)
