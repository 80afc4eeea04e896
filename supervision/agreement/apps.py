from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgreementConfig(AppConfig):
    name = "supervision.agreement"
    label = "agreement"
    verbose_name = _("평가 일치도")

    def ready(self):
        from supervision.signals import golden_labels_changed

        from .tasks import golden_labels_changed as refresh_reports

        golden_labels_changed.connect(refresh_reports, dispatch_uid="agreement.refresh_reports")
