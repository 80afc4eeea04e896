from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TaxonomyConfig(AppConfig):
    name = "taxonomy"
    verbose_name = _("라벨 분류 체계")

    def ready(self) -> None:
        from taxonomy import checks  # noqa: F401  (registers the catalogue/table drift check)
