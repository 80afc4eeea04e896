from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TransitionsConfig(AppConfig):
    name = "supervision.transitions"
    label = "transitions"
    verbose_name = _("상태 전이(페르소나 정답)")
