from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SuggestingConfig(AppConfig):
    name = "supervision.suggesting"
    label = "suggesting"
    verbose_name = _("AI 라벨 제안")
