"""The one module of role permissions for the API, composed with ``|`` and ``&``.

Reading is decided by the selectors (every queryset is already narrowed to the trainees the user may
see, so another trainee's object is simply not found: 404). These classes decide writes: a role that
may not write answers 403. Object-level checks receive the object the write is about — a comment, or
for a new comment the turn it goes on — and find its trainee with ``trainee_id_of``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework.permissions import BasePermission, IsAuthenticated

from supervision.commenting import comment_change_problem
from supervision.models import Session, SupervisorComment, Turn
from supervision.roles import is_supervisor, is_trainee, sees_everything, supervises

__all__ = [
    "IsAuthenticated",
    "IsAuthor",
    "IsStaffOrSuperuser",
    "IsSupervisor",
    "IsTrainee",
    "IsTraineeThemself",
    "SupervisesTrainee",
    "trainee_id_of",
]


def trainee_id_of(obj) -> int | None:
    """The trainee an object belongs to (the objects an endpoint may hand to an object check)."""
    if isinstance(obj, SupervisorComment):
        return obj.turn.session.trainee_id
    if isinstance(obj, Turn):
        return obj.session.trainee_id
    if isinstance(obj, Session):
        return obj.trainee_id
    if isinstance(obj, get_user_model()):
        return obj.pk
    trainee_id = getattr(obj, "trainee_id", None)
    if trainee_id is None:
        raise TypeError(f"no trainee known for {type(obj).__name__}")
    return trainee_id


class IsStaffOrSuperuser(BasePermission):
    """Staff importers and superusers (they see everything)."""

    def has_permission(self, request, view):
        return sees_everything(request.user)


class IsTrainee(BasePermission):
    def has_permission(self, request, view):
        return is_trainee(request.user)


class IsTraineeThemself(IsTrainee):
    """The trainee the object belongs to."""

    def has_object_permission(self, request, view, obj):
        return trainee_id_of(obj) == request.user.pk


class IsSupervisor(BasePermission):
    """The supervisor role (superusers count as supervisors of everyone, as in ``roles.supervises``)."""

    def has_permission(self, request, view):
        return bool(request.user.is_superuser) or is_supervisor(request.user)


class SupervisesTrainee(IsSupervisor):
    """The supervisor assigned to the trainee the object belongs to."""

    def has_object_permission(self, request, view, obj):
        return supervises(request.user, trainee_id_of(obj))


class IsAuthor(BasePermission):
    """The comment's author rule, decided by the comment service (the admin applies the same one)."""

    def has_object_permission(self, request, view, obj):
        return comment_change_problem(user=request.user, comment=obj) is None


# What each endpoint requires beyond the role-narrowed querysets; views look their action up here.
READ = IsAuthenticated
COMMENT_WRITE = IsAuthenticated & SupervisesTrainee
COMMENT_CHANGE = IsAuthenticated & IsAuthor
