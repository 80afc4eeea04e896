from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_cache_control
from django.views import defaults
from django.views.decorators.http import require_GET

from supervision.roles import is_trainee


@login_required
def home(request):
    """Trainees go to their feedback pages, supervisors and staff to the admin."""
    if request.user.is_staff:
        return redirect("admin:index")
    if is_trainee(request.user):
        return redirect("feedback:dashboard")
    return render(request, "home.html")


@require_GET
def palette_css(request):
    """The label palette's classes as a stylesheet (no inline <style>, for the Content-Security-Policy)."""
    from supervision.feedback.templatetags.feedback_charts import palette_stylesheet

    response = HttpResponse(palette_stylesheet(), content_type="text/css; charset=utf-8")
    patch_cache_control(response, public=True, max_age=3600)
    return response


def not_found(request, exception=None):
    """``handler404``: under /api/ a path no route matches (``/api/v1/sessions/-1/``) answers the API's JSON error
    body, as the schema documents; elsewhere Django's page (templates/404.html)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "찾을 수 없습니다."}, status=404, json_dumps_params={"ensure_ascii": False})
    return defaults.page_not_found(request, exception)
