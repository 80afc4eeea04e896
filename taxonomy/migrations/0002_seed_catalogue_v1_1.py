from django.db import migrations


def seed(apps, schema_editor):
    from taxonomy.seeding import sync_catalogue

    sync_catalogue(apps)


class Migration(migrations.Migration):
    dependencies = [("taxonomy", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
