from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from supervision.roles import is_trainee


@login_required
def home(request):
    """Trainees go to their feedback pages, supervisors and staff to the admin."""
    if request.user.is_staff:
        return redirect("admin:index")
    if is_trainee(request.user):
        return redirect("feedback:dashboard")
    return render(request, "home.html")
