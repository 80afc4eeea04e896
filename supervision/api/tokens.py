"""API tokens: issued at log-in, valid for ``API_TOKEN_TTL_HOURS``, revoked at log-out and whenever the
user's password changes (by any path: the password page, the admin, ``changepassword``, our services).

DRF's ``Token`` keeps one token per user with its creation time; expiry is read from that.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed


def token_expired(token: Token) -> bool:
    return token.created <= timezone.now() - datetime.timedelta(hours=settings.API_TOKEN_TTL_HOURS)


@transaction.atomic
def api_token_issue(*, user) -> Token:
    """The user's valid token, or a new one when they have none or it has expired."""
    token = Token.objects.select_for_update().filter(user=user).first()
    if token is not None and not token_expired(token):
        return token
    if token is not None:
        token.delete()
    return Token.objects.create(user=user)


def api_token_revoke(*, user) -> int:
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token …`` as DRF's, refused once the token is older than the TTL."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            token.delete()
            raise AuthenticationFailed("토큰이 만료되었습니다. 다시 로그인해 새 토큰을 받아 주세요.")
        return user, token


class RevokeTokensOnPasswordChange:
    """Listed in ``AUTH_PASSWORD_VALIDATORS`` for its ``password_changed`` hook, which Django calls after
    every saved password change whatever the path; it validates nothing."""

    def validate(self, password, user=None):
        return None

    def password_changed(self, password, user=None):
        if user is not None and user.pk is not None:
            api_token_revoke(user=user)

    def get_help_text(self):
        return "비밀번호를 바꾸면 이 계정에 발급된 API 토큰은 모두 폐기됩니다."
