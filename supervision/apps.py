from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SupervisionConfig(AppConfig):
    name = "supervision"
    verbose_name = _("수련 감독")
