from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=True)
def check_secret_key_is_set(app_configs=None, **kwargs):
    if settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY:
        return [
            Error(
                "DJANGO_SECRET_KEY is not set: the development key is in use.",
                hint="Set DJANGO_SECRET_KEY to a long random value in production.",
                id="portal.E001",
            )
        ]
    return []
