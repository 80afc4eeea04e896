from django.urls import path

from supervision.feedback import views

app_name = "feedback"
urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("sessions/<int:session_id>/", views.session_detail, name="session"),
    path("comments/read-all/", views.comments_read_all, name="comments-read-all"),
    path("comments/<int:comment_id>/read/", views.comment_read, name="comment-read"),
    path("comments/<int:comment_id>/replies/", views.comment_reply, name="comment-reply"),
]
