"""Grants the safety-review permissions to the role groups that already exist (``supervision.roles``
grants them to groups created from now on): a deployed portal's supervisors see the page without
anyone re-running ``create_portal_user``."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

# As in supervision.roles.ROLE_PERMISSIONS when this migration was written (a migration is a snapshot).
GRANTS = {
    "supervisor": ("view_safetyreview", "add_safetyreview", "change_safetyreview"),
    "staff": ("view_safetyreview",),
}


def grant(apps, schema_editor):
    # Permissions are normally created after all migrations ran; create this app's now to grant them.
    app_config = apps.get_app_config("safety")
    app_config.models_module = True  # a migration's app registry leaves it unset; create_permissions asks
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GRANTS.items():
        group = Group.objects.filter(name=name).first()
        if group is not None:
            group.permissions.add(
                *Permission.objects.filter(content_type__app_label="safety", codename__in=codenames)
            )


class Migration(migrations.Migration):
    dependencies = [
        ("safety", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
