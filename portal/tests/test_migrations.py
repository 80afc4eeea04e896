"""The models and the migrations agree: a model change without its migration fails here, not in production."""

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_every_model_change_has_its_migration():
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit_:  # --check exits non-zero when a migration is missing
        pytest.fail(f"missing migrations (run manage.py makemigrations):\n{out.getvalue()}\n{exit_}")
