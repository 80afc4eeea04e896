"""Usernames are unique whatever their case (``sup1`` and ``SUP1`` cannot both exist), as the services compare
them. An existing clash stops the migration with the accounts named: merge or rename them, then migrate."""

from django.db import migrations
from django.db.models import Count
from django.db.models.functions import Upper


def refuse_existing_clashes(apps, schema_editor):
    User = apps.get_model("auth", "User")
    clashes = (
        User.objects.annotate(key=Upper("username")).values("key").annotate(n=Count("id")).filter(n__gt=1)
    )
    keys = [row["key"] for row in clashes]
    if keys:
        names = [
            " / ".join(User.objects.annotate(key=Upper("username")).filter(key=key).values_list("username", flat=True))
            for key in keys
        ]
        raise RuntimeError(
            "대소문자만 다른 사용자 이름이 있어 고유 색인을 만들 수 없습니다 "
            f"(usernames that differ only in case): {'; '.join(names)}. 계정을 합치거나 이름을 바꾼 뒤 다시 migrate 하세요."
        )


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]

    operations = [
        migrations.RunPython(refuse_existing_clashes, migrations.RunPython.noop),
        migrations.RunSQL(
            "CREATE UNIQUE INDEX people_username_ignoring_case ON auth_user (UPPER(username))",
            "DROP INDEX people_username_ignoring_case",
        ),
    ]
