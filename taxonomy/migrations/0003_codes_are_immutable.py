"""On PostgreSQL, refuse any change of a label code and any delete of a label row, whoever asks."""

from django.db import migrations

TABLES = ("technique_label_def", "client_state_def", "stage_def")

FUNCTION = """
CREATE OR REPLACE FUNCTION taxonomy_codes_are_immutable() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'label codes are immutable: % cannot be deleted from %', OLD.code, TG_TABLE_NAME;
    END IF;
    IF NEW.code IS DISTINCT FROM OLD.code THEN
        RAISE EXCEPTION 'label codes are immutable: % cannot be renamed to %', OLD.code, NEW.code;
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION, params=None)
    for table in TABLES:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_immutable BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION taxonomy_codes_are_immutable()"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table}")
    schema_editor.execute("DROP FUNCTION IF EXISTS taxonomy_codes_are_immutable()")


class Migration(migrations.Migration):
    dependencies = [("taxonomy", "0002_seed_catalogue_v1_1")]
    operations = [migrations.RunPython(forwards, backwards)]
