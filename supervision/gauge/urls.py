"""Mounted under ``/api/v1/`` by ``portal/urls.py``."""

from django.urls import path

from supervision.gauge.api import GaugeSnapshotList

urlpatterns = [path("gauges/", GaugeSnapshotList.as_view(), name="gauge-list")]
