from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PeopleConfig(AppConfig):
    """Portal accounts: the one path that creates people, and trainee reassignment."""

    name = "supervision.people"
    label = "people"
    verbose_name = _("사용자")
