"""Session hygiene for the shared computers of a training centre.

- ``IdleTimeoutMiddleware``: a browser session left alone for ``SESSION_IDLE_MINUTES`` is logged out on its
  next request (the page then asks for a log-in again, and says why).
- ``RoleMinimumLengthValidator``: passwords of at least 12 characters for supervisors, staff and superusers
  (anyone who is not only a trainee), 8 for trainees.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import ValidationError
from django.dispatch import receiver

LAST_SEEN = "portal_last_seen"
# Writing the session on every request would cost a database write per page; once a minute is enough.
TOUCH_EVERY_SECONDS = 60


@receiver(user_logged_in, dispatch_uid="portal.sessions.seen_at_log_in")
def seen_at_log_in(sender, request=None, **kwargs):
    """The log-in writes the session anyway: the idle clock starts there, not with a write on the next page."""
    session = getattr(request, "session", None)
    if session is not None:
        session[LAST_SEEN] = int(time.time())


class IdleTimeoutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        if session is not None and session.session_key and request.user.is_authenticated:
            now = int(time.time())
            last_seen = session.get(LAST_SEEN)
            if last_seen is not None and now - last_seen > settings.SESSION_IDLE_MINUTES * 60:
                logout(request)
                messages.info(
                    request,
                    f"{settings.SESSION_IDLE_MINUTES}분 동안 사용하지 않아 로그아웃되었습니다. 다시 로그인해 주세요.",
                )
            elif last_seen is None or now - last_seen >= TOUCH_EVERY_SECONDS:
                session[LAST_SEEN] = now
        return self.get_response(request)


class RoleMinimumLengthValidator:
    def __init__(self, trainee_min_length: int = 8, min_length: int = 12):
        self.trainee_min_length = trainee_min_length
        self.min_length = min_length

    def required_length(self, user) -> int:
        from supervision.roles import Role, roles_of

        if user is None or user.is_staff or user.is_superuser:
            return self.min_length
        # A user not saved yet may carry the role it is about to get (create_portal_user); one that does not
        # (createsuperuser, the admin's add-user form) gets the stricter rule.
        roles = getattr(user, "_portal_roles", None)
        if roles is None and user.pk is not None:
            roles = roles_of(user)
        return self.trainee_min_length if roles == frozenset({Role.TRAINEE}) else self.min_length

    def validate(self, password, user=None):
        length = self.required_length(user)
        if len(password) < length:
            raise ValidationError(
                f"비밀번호가 너무 짧습니다. 최소 {length}자 이상이어야 합니다.",
                code="password_too_short",
                params={"min_length": length},
            )

    def get_help_text(self):
        return (
            f"비밀번호는 최소 {self.trainee_min_length}자(수련생), "
            f"{self.min_length}자(슈퍼바이저·스태프·관리자) 이상이어야 합니다."
        )
