from django.apps import AppConfig


class ImportingConfig(AppConfig):
    name = "supervision.importing"
    label = "importing"
    verbose_name = "가져오기"
    default_auto_field = "django.db.models.BigAutoField"
