from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path, reverse_lazy
from django.utils.translation import gettext_lazy as _
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from portal import views
from portal.health import HealthzView
from portal.lockout import AdminLoginForm, LoginForm
from portal.passwords import PortalPasswordChangeForm
from supervision.tags import urls as tag_urls

admin.site.site_header = _("수련 감독 포털")
admin.site.login_form = AdminLoginForm
admin.site.site_title = _("수련 감독 포털")
admin.site.index_title = _("관리")

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", HealthzView.as_view(), name="healthz"),
    path("palette.css", views.palette_css, name="palette-css"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True, authentication_form=LoginForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(form_class=PortalPasswordChangeForm),
        name="password_change",
    ),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    # The admin's own password change with the portal's form (Django's admin site hard-codes its form class).
    path(
        "admin/password_change/",
        admin.site.admin_view(
            auth_views.PasswordChangeView.as_view(
                form_class=PortalPasswordChangeForm, success_url=reverse_lazy("admin:password_change_done")
            )
        ),
        name="admin-password-change",
    ),
    path("admin/", admin.site.urls),
    path("feedback/", include("supervision.feedback.urls")),
    path("feedback/", include(tag_urls.feedback_urlpatterns)),
    path("api/v1/", include("supervision.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # A page: an anonymous visitor is sent to the log-in page rather than shown a 403.
    # The split view serves Swagger UI's start-up script as a file of its own (no inline script, for the CSP).
    path(
        "api/docs/",
        login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/swagger_ui.html")),
        name="api-docs",
    ),
]
handler404 = "portal.views.not_found"
