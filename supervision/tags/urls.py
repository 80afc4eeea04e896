"""The trainee's tag pages, mounted under ``/feedback/`` (the tag API is in ``supervision/api/urls.py``)."""

from django.urls import path

from supervision.tags import views

feedback_urlpatterns = [
    path("tags/", views.tags_page, name="tags-page"),
    path("tags/declare/", views.tag_declare, name="tags-declare"),
]
