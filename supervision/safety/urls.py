"""Mounted under ``/api/v1/`` by ``portal/urls.py``."""

from django.urls import path

from supervision.safety import api

urlpatterns = [
    path("safety-events/", api.SafetyEventList.as_view(), name="safety-event-list"),
    path("safety-events/<int:event_id>/review/", api.SafetyEventReview.as_view(), name="safety-event-review"),
]
