"""The one path that makes portal accounts, and the one that moves a trainee to another supervisor.

A username is normalised once, here (``normalize_username``: NFKC, then surrounding white space removed), and
compared case-insensitively everywhere (a database index on ``UPPER(username)`` holds the same rule, see
this app's migration). The roster import (staff, in the admin) may only *create*: an existing account —
``root_admin``, ``"root_admin "``, ``ROOT_ADMIN`` or ``ｒｏｏｔ_admin`` alike — is refused, never updated, so a
spreadsheet can never set a password, change a role or move a trainee. Server operators keep
``create_portal_user`` (create or update, CONTRACT §4) through the same normaliser; it never touches a
superuser. Reassignment is its own explicit service with history.
"""

from __future__ import annotations

import unicodedata

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from supervision.models import TraineeAssignment
from supervision.roles import Role, ensure_role_groups, roles_of
from supervision.services import ServiceError

USERNAME_MAX_LENGTH = 150


class PersonRefused(ServiceError):
    """Every reason an account write is refused, by input (``username``, ``role``, ``supervisor``,
    ``initial_password``); ``field`` is the first of them, as ``ServiceError`` callers expect."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        first = next(iter(problems))
        super().__init__(" ".join(problems[first]), field=first)
        self.problems = problems


def normalize_username(raw: object) -> str:
    """NFKC first (a full-width ``ｒｏｏｔ`` or a no-break space becomes plain), then white space trimmed."""
    return unicodedata.normalize("NFKC", "" if raw is None else str(raw)).strip()


def existing_user(username: str):
    """The account a (normalised) username names, whatever its case."""
    return get_user_model().objects.filter(username__iexact=username).first()


def _username_problems(username: str) -> list[str]:
    if not username:
        return ["사용자 이름이 비어 있습니다."]
    if len(username) > USERNAME_MAX_LENGTH:
        return [f"사용자 이름은 {USERNAME_MAX_LENGTH}자까지입니다({len(username)}자)."]
    try:
        get_user_model().username_validator(username)
    except ValidationError:
        return [
            f"'{username}'은(는) 쓸 수 없는 사용자 이름입니다. 영문·숫자·한글과 @ . + - _ 만 쓸 수 있습니다(공백 불가)."
        ]
    return []


def _supervisor(username: str):
    return (
        get_user_model()
        .objects.filter(username__iexact=normalize_username(username), groups__name=Role.SUPERVISOR)
        .first()
    )


def _password_problems(password: str, *, username: str, role: str) -> list[str]:
    # Django's validators with the role the user is about to have (staff-level accounts need longer ones).
    candidate = get_user_model()(username=username, is_staff=role != Role.TRAINEE)
    candidate._portal_roles = frozenset({role})
    try:
        validate_password(password, candidate)
    except ValidationError as exc:
        return list(exc.messages)
    return []


def portal_user_problems(
    *, username: str, role: str, supervisor_username: str | None = None, password: str | None = None, creating: bool
) -> dict[str, list[str]]:
    """Everything wrong with an account write, by input, all at once (the roster shows every one of a row's
    errors). ``username`` must already be normalised."""
    problems: dict[str, list[str]] = {}
    if found := _username_problems(username):
        problems["username"] = found
    elif creating and (clash := existing_user(username)) is not None:
        problems["username"] = [
            f"이미 있는 사용자 '{clash.username}'입니다(대소문자·앞뒤 공백·전각 문자를 구별하지 않고 비교). "
            "명단은 새 사용자만 만들며 기존 계정의 역할·배정·비밀번호는 바꾸지 않습니다. "
            "수련생의 슈퍼바이저를 바꾸려면 '수련생 배정'에서 바꾸세요."
        ]
    if role not in Role.values:
        problems["role"] = [f"알 수 없는 역할 '{role}'입니다({', '.join(Role.values)} 중 하나)."]
    if supervisor_username:
        if role in Role.values and role != Role.TRAINEE:
            problems["supervisor"] = ["슈퍼바이저는 수련생에게만 배정할 수 있습니다."]
        elif _supervisor(supervisor_username) is None:
            problems["supervisor"] = [f"슈퍼바이저 '{normalize_username(supervisor_username)}'를 찾을 수 없습니다."]
    if password and role in Role.values and (found := _password_problems(password, username=username, role=role)):
        problems["initial_password"] = found
    return problems


def _give_role(user, role: str) -> None:
    groups = ensure_role_groups()
    user.groups.remove(*[group for name, group in groups.items() if name != role])
    user.groups.add(groups[role])
    user._portal_roles = frozenset({role})


@transaction.atomic
def portal_user_create(
    *, username: str, role: str, password: str | None = None, supervisor_username: str | None = None, by=None
):
    """Creates a new account with exactly one portal role; an existing one (case-insensitively) is refused.

    Supervisors and staff get admin access (``is_staff``); trainees use only their own pages. A blank password
    leaves the account without a usable one (no log-in until staff set it)."""
    username = normalize_username(username)
    if problems := portal_user_problems(
        username=username, role=role, supervisor_username=supervisor_username, password=password, creating=True
    ):
        raise PersonRefused(problems)
    User = get_user_model()
    user = User(username=username, is_staff=role in (Role.SUPERVISOR, Role.STAFF))
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:  # created by someone else since the check: the index holds the same rule
        raise PersonRefused({"username": [f"이미 있는 사용자 '{username}'입니다."]}) from None
    _give_role(user, role)
    if role == Role.TRAINEE and supervisor_username:
        trainee_reassign(trainee=user, supervisor=_supervisor(supervisor_username), by=by, reason="명단으로 생성")
    return user


@transaction.atomic
def portal_user_create_or_update(
    *, username: str, role: str, password: str | None = None, supervisor_username: str | None = None
):
    """The server operator's path (``create_portal_user``, the demo): creates the account, or updates the
    existing one's role, password and supervisor (idempotent). Never a superuser's account."""
    username = normalize_username(username)
    user = existing_user(username)
    if user is None:
        return portal_user_create(
            username=username, role=role, password=password, supervisor_username=supervisor_username
        )
    if user.is_superuser:
        raise PersonRefused(
            {"username": [f"'{user.username}'은(는) 최고 관리자 계정이라 이 명령으로 바꾸지 않습니다."]}
        )
    if problems := portal_user_problems(
        username=username, role=role, supervisor_username=supervisor_username, password=password, creating=False
    ):
        raise PersonRefused(problems)
    user.is_staff = role in (Role.SUPERVISOR, Role.STAFF)
    if password:
        user.set_password(password)
    user.save()
    _give_role(user, role)
    if role != Role.TRAINEE:
        TraineeAssignment.objects.filter(trainee=user).delete()
    elif supervisor_username:
        supervisor = _supervisor(supervisor_username)
        current = TraineeAssignment.objects.filter(trainee=user).values_list("supervisor_id", flat=True).first()
        if current != supervisor.pk:
            trainee_reassign(trainee=user, supervisor=supervisor, reason="create_portal_user")
    return user


@transaction.atomic
def trainee_reassign(*, trainee, supervisor, by=None, reason: str = "") -> TraineeAssignment:
    """Puts a trainee in a supervisor's care (one supervisor per trainee); the assignment's history keeps who
    moved whom, when and why."""
    problems: dict[str, list[str]] = {}
    if Role.TRAINEE not in roles_of(trainee):
        problems["trainee"] = [f"'{trainee.username}'은(는) 수련생이 아닙니다."]
    if supervisor is None or Role.SUPERVISOR not in roles_of(supervisor):
        problems["supervisor"] = ["슈퍼바이저 역할의 사용자만 배정할 수 있습니다."]
    if problems:
        raise PersonRefused(problems)
    assignment = TraineeAssignment.objects.select_for_update().filter(trainee=trainee).first()
    if assignment is not None and assignment.supervisor_id == supervisor.pk:
        return assignment
    assignment = assignment or TraineeAssignment(trainee=trainee)
    assignment.supervisor = supervisor
    assignment._history_user = by
    assignment._change_reason = reason[:100]
    assignment.save()
    return assignment
