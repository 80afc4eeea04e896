from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GaugeConfig(AppConfig):
    name = "supervision.gauge"
    label = "gauge"
    verbose_name = _("검토 지표")
