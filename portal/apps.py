from axes.apps import AppConfig as AxesAppConfig
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    default = True  # the module holds another AppConfig (below): this one is the portal's
    name = "portal"
    verbose_name = "포털"

    def ready(self) -> None:
        from portal import checks, lockout, sessions  # noqa: F401


class LoginLockoutConfig(AxesAppConfig):
    """django-axes (the log-in lockout) under a Korean heading in the admin: its own catalogue has no Korean."""

    default = False
    verbose_name = _("로그인 잠금")
