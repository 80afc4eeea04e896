"""Every django-import-export URL of every admin model, for every role (the admin's role matrix, for the
library's screens): who reaches the import, the confirm step and the export, and that the table covers every
such URL the admin registers."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from import_export.admin import ExportMixin, ImportMixin

ANON, TRAINEE, SUPERVISOR, STAFF, ROOT = "anonymous", "trainee_a", "supervisor_a", "staff", "root"
ROLES = (ANON, TRAINEE, SUPERVISOR, STAFF, ROOT)
LOGIN = 302  # the admin sends anyone who is not admin staff to its log-in page

# (method, url) → status per role. process_import is POST-only; an empty confirm is refused, never a 500.
MATRIX = {
    ("GET", "/admin/supervision/traineeassignment/import/"): (LOGIN, LOGIN, 403, 200, 200),
    ("POST", "/admin/supervision/traineeassignment/process_import/"): (LOGIN, LOGIN, 403, 400, 400),
    ("GET", "/admin/supervision/traineeassignment/process_import/"): (LOGIN, LOGIN, 405, 405, 405),
    ("GET", "/admin/taxonomy/labelalias/import/"): (LOGIN, LOGIN, 403, 200, 200),
    ("POST", "/admin/taxonomy/labelalias/process_import/"): (LOGIN, LOGIN, 403, 400, 400),
    ("GET", "/admin/taxonomy/labelalias/process_import/"): (LOGIN, LOGIN, 405, 405, 405),
    ("GET", "/admin/taxonomy/labelalias/export/"): (LOGIN, LOGIN, 200, 200, 200),
    ("GET", "/admin/supervision/supervisorcomment/export/"): (LOGIN, LOGIN, 200, 200, 200),
    ("GET", "/admin/gauge/gaugesnapshot/export/"): (LOGIN, LOGIN, 200, 200, 200),
    ("GET", "/admin/tags/traineetag/export/"): (LOGIN, LOGIN, 200, 200, 200),
}


def registered_import_export_urls() -> set[str]:
    urls = set()
    for model, model_admin in admin.site._registry.items():
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        if isinstance(model_admin, ImportMixin):
            urls |= {base + "import/", base + "process_import/"}
        if isinstance(model_admin, ExportMixin):
            urls.add(base + "export/")
    return urls


def test_the_matrix_covers_every_import_and_export_url_of_the_admin():
    assert {url for _method, url in MATRIX} == registered_import_export_urls()


@pytest.fixture
def people(cast):
    root = get_user_model().objects.create_superuser("root", password="Root-pass-2026-x")
    return {TRAINEE: cast.trainee_a, SUPERVISOR: cast.supervisor_a, STAFF: cast.staff, ROOT: root}


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "url"), list(MATRIX))
def test_each_role_reaches_exactly_the_import_export_screens_it_serves(people, method, url):
    for role, expected in zip(ROLES, MATRIX[(method, url)], strict=True):
        client = Client()
        if role != ANON:
            client.force_login(people[role])
        response = client.get(url) if method == "GET" else client.post(url, {})
        assert response.status_code == expected, (role, response.status_code)
        if expected == LOGIN:
            assert "/admin/login/" in response["Location"]
