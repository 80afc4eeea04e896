"""Mounted under ``/api/v1/`` by ``portal/urls.py``."""

from rest_framework.routers import SimpleRouter

from supervision.agreement.api import AnnotationRunViewSet

router = SimpleRouter()
router.register("annotation-runs", AnnotationRunViewSet, basename="annotation-run")

urlpatterns = router.urls
