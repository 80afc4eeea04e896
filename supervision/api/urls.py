"""Every route of the API, mounted at /api/v1/ (namespace ``api``): one router for the viewsets, one list
of paths for the rest, one naming scheme (``api:<resource>-<action>``)."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from supervision.agreement.api import AnnotationRunViewSet
from supervision.api import views
from supervision.gauge.api import GaugeSnapshotList
from supervision.safety import api as safety_api
from supervision.tags import api as tags_api
from supervision.transitions import api as transitions_api

app_name = "api"

router = SimpleRouter()
router.register("sessions", views.SessionViewSet, basename="session")
router.register("comments", views.CommentViewSet, basename="comment")
router.register("annotation-runs", AnnotationRunViewSet, basename="annotation-run")
router.register("persona-runs", transitions_api.PersonaRunViewSet, basename="persona-run")

urlpatterns = [
    path("", views.ApiRootView.as_view(), name="root"),
    path("auth/token/", views.TokenView.as_view(), name="auth-token"),
    path("auth/logout/", views.LogoutView.as_view(), name="auth-logout"),
    path("taxonomy/", views.TaxonomyView.as_view(), name="taxonomy"),
    path("gauges/", GaugeSnapshotList.as_view(), name="gauge-list"),
    path("trainees/<int:trainee_id>/tags/", tags_api.TraineeTagsView.as_view(), name="tags-list"),
    path(
        "trainees/<int:trainee_id>/tags/conflicted/",
        tags_api.TraineeConflictedTagsView.as_view(),
        name="tags-conflicted",
    ),
    path(
        "trainees/<int:trainee_id>/tags/<str:tag>/contradictions/",
        tags_api.TagContradictionsView.as_view(),
        name="tags-contradictions",
    ),
    path("safety-events/", safety_api.SafetyEventList.as_view(), name="safety-event-list"),
    path("safety-events/<int:event_id>/review/", safety_api.SafetyEventReview.as_view(), name="safety-event-review"),
    path("transitions/", transitions_api.TransitionTableView.as_view(), name="transitions"),
    *router.urls,
]
