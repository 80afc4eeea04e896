"""Log-in locks in the admin: staff see who is locked out and lift the lock ("잠금 풀기")."""

from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from axes.utils import reset
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Sum
from django.utils.html import format_html

admin.site.unregister(AccessAttempt)


@admin.register(AccessAttempt)
class LoginLockAdmin(AccessAttemptAdmin):
    list_display = ["username", "locked", "failures_since_start", "attempt_time", "ip_address", "path_info"]
    # Only ours: axes' own "clean up expired attempts" needs the attributes axes puts on a log-in request and
    # fails (500) from the admin; expired attempts are cleaned on every failed log-in anyway.
    actions = ["unlock"]

    @admin.display(description="잠김")
    def locked(self, obj):
        # Words, not the admin's boolean icons: a green check under "잠김" read as "all is well".
        total = AccessAttempt.objects.filter(username=obj.username).aggregate(n=Sum("failures_since_start"))["n"]
        if (total or 0) >= settings.AXES_FAILURE_LIMIT:
            return format_html('<strong class="lock-state locked">{}</strong>', "잠김")
        return f"아니요 ({total or 0}/{settings.AXES_FAILURE_LIMIT}회 실패)"

    @admin.action(description="선택한 아이디의 로그인 잠금 풀기", permissions=["delete"])
    def unlock(self, request, queryset):
        usernames = sorted({u for u in queryset.values_list("username", flat=True) if u})
        for username in usernames:
            reset(username=username)
        self.message_user(
            request, f"{len(usernames)}개 아이디의 잠금을 풀었습니다: {', '.join(usernames)}", messages.SUCCESS
        )
