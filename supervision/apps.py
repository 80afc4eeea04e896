from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SupervisionConfig(AppConfig):
    name = "supervision"
    verbose_name = _("수련 감독")

    def ready(self):
        from django.db.models.signals import post_delete, post_save

        from supervision import pagecache
        from supervision.models import Session

        post_save.connect(pagecache.session_saved, sender=Session, dispatch_uid="pagecache.session_saved")
        post_delete.connect(pagecache.session_saved, sender=Session, dispatch_uid="pagecache.session_deleted")
