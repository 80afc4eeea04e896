from django.apps import AppConfig


class FeedbackConfig(AppConfig):
    name = "supervision.feedback"
    label = "feedback"
    verbose_name = "수련생 피드백"
    default_auto_field = "django.db.models.BigAutoField"
