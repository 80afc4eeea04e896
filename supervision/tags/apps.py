from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TagsConfig(AppConfig):
    name = "supervision.tags"
    label = "tags"
    verbose_name = _("경향 태그")
