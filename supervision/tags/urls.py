"""``urlpatterns``: the API of CONTRACT §5, mounted under ``/api/v1/``;
``feedback_urlpatterns``: the trainee's tag pages, mounted under ``/feedback/``."""

from django.urls import path

from supervision.tags import api, views

urlpatterns = [
    path("trainees/<int:trainee_id>/tags/", api.TraineeTagsView.as_view(), name="tags-list"),
    path("trainees/<int:trainee_id>/tags/conflicted/", api.TraineeConflictedTagsView.as_view(), name="tags-conflicted"),
    path(
        "trainees/<int:trainee_id>/tags/<str:tag>/contradictions/",
        api.TagContradictionsView.as_view(),
        name="tags-contradictions",
    ),
]

feedback_urlpatterns = [
    path("tags/", views.tags_page, name="tags-page"),
    path("tags/declare/", views.tag_declare, name="tags-declare"),
]
