"""The three roles of the portal, held as auth groups, and who may see which trainee's work.

Every queryset an outsider could reach is narrowed by ``visible_trainees``/selectors built on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    SUPERVISOR = "supervisor", _("슈퍼바이저")
    TRAINEE = "trainee", _("수련생")
    STAFF = "staff", _("자료 담당 스태프")


# Admin permissions per role ("app_label.codename"); trainees never use the admin.
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    Role.SUPERVISOR: (
        "supervision.view_session",
        "supervision.view_turn",
        "supervision.change_turn",
        "supervision.view_turntechnique",
        "supervision.add_turntechnique",
        "supervision.delete_turntechnique",
        "supervision.view_turnclientstate",
        "supervision.add_turnclientstate",
        "supervision.delete_turnclientstate",
        "supervision.view_supervisorcomment",
        "supervision.add_supervisorcomment",
        "supervision.change_supervisorcomment",
        "supervision.delete_supervisorcomment",
        "supervision.view_traineeassignment",
        "taxonomy.view_techniquelabeldef",
        "taxonomy.view_clientstatedef",
        "taxonomy.view_stagedef",
        "taxonomy.view_labelalias",
        "tags.view_traineetag",
        "tags.change_traineetag",
        "tags.view_tagevidence",
        "tags.add_tagevidence",
        "tags.view_tagcontradiction",
        "tags.add_tagcontradiction",
        "tags.view_tagtransition",
        "gauge.view_gaugesnapshot",
        "gauge.view_targetband",
        "gauge.view_suggestedcomment",
        "safety.view_safetyreview",
        "safety.add_safetyreview",
        "safety.change_safetyreview",
        "agreement.view_annotationrun",
        "agreement.view_adjudicationdecision",
        "agreement.add_adjudicationdecision",
        "supervision.view_labelchange",
        "transitions.view_personarun",
    ),
    Role.STAFF: (
        "supervision.view_session",
        "supervision.add_session",
        "supervision.change_session",
        "supervision.delete_session",
        "supervision.view_turn",
        "supervision.change_turn",
        "supervision.view_turntechnique",
        "supervision.view_turnclientstate",
        "supervision.view_supervisorcomment",
        "supervision.view_traineeassignment",
        # assigning a trainee, or moving one to another supervisor (kept in the assignment's history)
        "supervision.add_traineeassignment",
        "supervision.change_traineeassignment",
        "taxonomy.view_techniquelabeldef",
        "taxonomy.view_clientstatedef",
        "taxonomy.view_stagedef",
        "taxonomy.view_labelalias",
        "taxonomy.add_labelalias",
        "taxonomy.change_labelalias",
        "taxonomy.delete_labelalias",
        "tags.view_traineetag",
        "tags.view_tagevidence",
        "tags.view_tagcontradiction",
        "tags.view_tagtransition",
        "gauge.view_gaugesnapshot",
        "gauge.view_targetband",
        "safety.view_safetyreview",
        "agreement.view_annotationrun",
        "agreement.add_annotationrun",
        "agreement.view_adjudicationdecision",
        "supervision.view_labelchange",
        "transitions.view_personarun",
        "transitions.add_personarun",
        # Log-in locks (django-axes): see them and lift them.
        "axes.view_accessattempt",
        "axes.delete_accessattempt",
        "axes.view_accessfailurelog",
    ),
    Role.TRAINEE: (),
}


def ensure_role_groups() -> dict[str, Group]:
    """Creates the role groups and grants their permissions (idempotent). Every account created goes
    through here: the permissions are read in one query, not one per codename."""
    dotted = {name for perms in ROLE_PERMISSIONS.values() for name in perms}
    wanted = models.Q()
    for app_label, codename in (name.split(".") for name in dotted):
        wanted |= models.Q(content_type__app_label=app_label, codename=codename)
    permissions = {
        f"{permission.content_type.app_label}.{permission.codename}": permission
        for permission in Permission.objects.filter(wanted).select_related("content_type")
    }
    groups = {}
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        if perms:
            group.permissions.add(*[permissions[name] for name in perms if name in permissions])
        groups[role] = group
    return groups


def roles_of(user) -> frozenset[str]:
    """The user's role names, cached on the user object for the request."""
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    cached = getattr(user, "_portal_roles", None)
    if cached is None:
        cached = frozenset(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
        user._portal_roles = cached
    return cached


def sees_everything(user) -> bool:
    """Staff and superusers: they see every trainee's work, and they alone import transcripts."""
    return bool(getattr(user, "is_superuser", False)) or Role.STAFF in roles_of(user)


def is_supervisor(user) -> bool:
    return Role.SUPERVISOR in roles_of(user)


def is_trainee(user) -> bool:
    return Role.TRAINEE in roles_of(user)


def visible_trainees(user) -> models.QuerySet:
    """The trainees whose sessions, gauges and tags this user may see."""
    User = get_user_model()
    trainees = User.objects.filter(groups__name=Role.TRAINEE)
    if sees_everything(user):
        return trainees
    allowed = models.Q(pk__in=[])
    if is_supervisor(user):
        allowed |= models.Q(assignment__supervisor=user)
    if is_trainee(user):
        allowed |= models.Q(pk=user.pk)
    return trainees.filter(allowed)


def trainee_filter(user, field: str = "trainee") -> models.Q:
    """A Q object restricting rows whose ``field`` is a trainee to those ``user`` may see."""
    if sees_everything(user):
        return models.Q()
    allowed = models.Q(pk__in=[])
    if is_supervisor(user):
        allowed |= models.Q(**{f"{field}__assignment__supervisor": user})
    if is_trainee(user):
        allowed |= models.Q(**{field: user})
    return allowed


def supervises(user, trainee_id: int | None) -> bool:
    """True when ``user`` is the trainee's assigned supervisor (superusers too; staff only read)."""
    if getattr(user, "is_superuser", False):
        return True  # a session with no trainee yet too
    return trainee_id in supervised_among(user, [trainee_id])


def supervised_among(user, trainee_ids: Iterable[int | None]) -> set[int]:
    """The trainees of ``trainee_ids`` that ``user`` supervises, in one query (``supervises`` for many)."""
    wanted = {trainee_id for trainee_id in trainee_ids if trainee_id is not None}
    if not wanted:
        return set()
    if getattr(user, "is_superuser", False):
        return wanted
    if not is_supervisor(user):
        return set()
    from supervision.models import TraineeAssignment

    return set(
        TraineeAssignment.objects.filter(trainee_id__in=sorted(wanted), supervisor=user).values_list(
            "trainee_id", flat=True
        )
    )
