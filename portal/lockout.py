"""Log-in lockout (django-axes): after ``AXES_FAILURE_LIMIT`` failed log-ins for one username, on any of the
three log-ins (``/accounts/login/``, ``/admin/login/``, ``POST /api/v1/auth/token/``), that username is refused —
even with the right password — for ``LOGIN_LOCKOUT_MINUTES`` or until staff lift the lock in the admin.
Counted per username only: other people at the same computer or address keep logging in.
"""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from axes.signals import user_locked_out
from axes.utils import reset
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.db.models import Sum
from django.dispatch import receiver
from django.http import JsonResponse
from django.shortcuts import render

# From this failure on, a wrong password also says how many tries are left before the lock (issue 33: the
# first nine failures looked identical, and the tenth locked without warning).
WARN_FROM_FAILURE = 7


def failures_so_far(username: str) -> int:
    from axes.models import AccessAttempt

    total = AccessAttempt.objects.filter(username=username).aggregate(n=Sum("failures_since_start"))["n"]
    return total or 0


def lockout_warning(username: str | None) -> str | None:
    """The warning after a failed log-in, from the ``WARN_FROM_FAILURE``th one until the lock."""
    if not username:
        return None
    failures, limit = failures_so_far(username), settings.AXES_FAILURE_LIMIT
    if not WARN_FROM_FAILURE <= failures < limit:
        return None
    return (
        f"이 아이디로 로그인에 {failures}번 잇달아 실패했습니다. {limit - failures}번 더 틀리면 "
        f"{settings.LOGIN_LOCKOUT_MINUTES}분 동안 잠깁니다. 비밀번호가 기억나지 않으면 포털 담당 스태프에게 문의하세요."
    )


class WarnsBeforeLockout:
    """For the log-in forms: a wrong password from the 7th failure on says the lock is near."""

    lockout_warning: str | None = None

    def get_invalid_login_error(self):
        error = super().get_invalid_login_error()
        self.lockout_warning = lockout_warning(self.cleaned_data.get("username"))
        if self.lockout_warning:
            return ValidationError(f"{error.message % (error.params or {})} {self.lockout_warning}", code=error.code)
        return error


class LoginForm(WarnsBeforeLockout, AuthenticationForm):
    pass


class AdminLoginForm(WarnsBeforeLockout, AdminAuthenticationForm):
    pass


def lockout_message() -> str:
    return (
        f"로그인에 {settings.AXES_FAILURE_LIMIT}번 잇달아 실패해 이 아이디는 {settings.LOGIN_LOCKOUT_MINUTES}분 동안 "
        "잠겼습니다. 그동안은 비밀번호가 맞아도 로그인할 수 없습니다. 급하면 수련 기관의 포털 담당 스태프(관리자)에게 "
        "잠금 해제를 요청하세요."
    )


@receiver(user_locked_out, dispatch_uid="portal.lockout.flag_the_django_request")
def flag_the_django_request(sender, request=None, **kwargs):
    """The token endpoint authenticates with DRF's Request, on which axes sets its flag; AxesMiddleware looks
    at Django's request underneath, so the flag goes there too."""
    inner = getattr(request, "_request", None)
    if inner is not None:
        inner.axes_locked_out = True
        inner.axes_credentials = getattr(request, "axes_credentials", None)


class LockoutBackend(AxesStandaloneBackend):
    """Axes' gate, for the log-ins that come over HTTP (the three above all pass their request). A call with
    no request at all is code on the server itself (a shell, the test client's ``login``), which axes would
    otherwise refuse outright; there is no one to lock out there."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class LockoutResettingModelBackend(ModelBackend):
    """Django's backend; a successful log-in also clears that username's failures, so only *consecutive*
    failures lock. Axes does this itself on ``user_logged_in``, which the token endpoint never sends."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and settings.AXES_RESET_ON_SUCCESS:
            reset(username=user.get_username())
        return user


def lockout_response(request, original_response=None, credentials=None):
    """``AXES_LOCKOUT_CALLABLE``: JSON for the API, the Korean page for the two log-in forms."""
    message = lockout_message()
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"detail": message, "code": "locked_out"}, status=403, json_dumps_params={"ensure_ascii": False}
        )
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    return render(request, "registration/locked_out.html", {"message": message, "username": username[:150]}, status=403)
