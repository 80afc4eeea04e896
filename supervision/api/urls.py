"""Mounted at /api/v1/ (namespace ``api``). Other apps add their routes to ``urlpatterns`` in portal/urls.py."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from supervision.api import views

app_name = "api"

router = SimpleRouter()
router.register("sessions", views.SessionViewSet, basename="session")
router.register("comments", views.CommentViewSet, basename="comment")

urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="auth-token"),
    path("auth/logout/", views.LogoutView.as_view(), name="auth-logout"),
    path("taxonomy/", views.TaxonomyView.as_view(), name="taxonomy"),
    *router.urls,
]
