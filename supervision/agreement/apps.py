from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgreementConfig(AppConfig):
    name = "supervision.agreement"
    label = "agreement"
    verbose_name = _("평가 일치도")
