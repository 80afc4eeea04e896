from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SuggestingConfig(AppConfig):
    name = "supervision.suggesting"
    label = "suggesting"
    verbose_name = _("AI 라벨 제안")

    def ready(self):
        from supervision.signals import turns_rewritten

        from .services import turns_rewritten as resuggest

        turns_rewritten.connect(resuggest, dispatch_uid="suggesting.resuggest_rewritten_turns")
