from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SafetyConfig(AppConfig):
    name = "supervision.safety"
    label = "safety"
    verbose_name = _("안전 검토")
