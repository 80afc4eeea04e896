from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TrajectoryConfig(AppConfig):
    name = "supervision.trajectory"
    label = "trajectory"
    verbose_name = _("궤적 감사")
