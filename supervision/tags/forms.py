from django import forms
from django.utils.translation import gettext_lazy as _

from supervision.models import Session
from supervision.tags.selectors import declarable_tags
from supervision.tags.services import MAX_EVENT_CHARS


class DeclareForm(forms.Form):
    """A trainee states their own focus: a declared tag, in their words, optionally tied to a session."""

    tag = forms.ChoiceField(label=_("집중하려는 점"), error_messages={"required": _("집중하려는 점을 골라 주세요.")})
    event = forms.CharField(
        label=_("내 말로 적기"),
        max_length=MAX_EVENT_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("예: 이번 달에는 내담자와의 관계 형성에 더 시간을 쓰고 싶다."),
        error_messages={"required": _("빈 선언은 기록하지 않습니다. 내 초점을 한 문장으로 적어 주세요.")},
    )
    session = forms.ModelChoiceField(
        label=_("관련 회기(선택)"),
        queryset=Session.objects.none(),
        required=False,
        empty_label=_("선택 안 함 (회기와 관계없이)"),  # not Django's "---------"
    )

    def __init__(self, *args, trainee, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tag"].choices = [(t.name, f"{t.ko} ({t.name})") for t in declarable_tags()]
        self.fields["session"].queryset = Session.objects.filter(trainee=trainee).order_by("-held_on", "code")
