"""A run's rows name their run and turn without foreign-key constraints, checked per statement instead.

PostgreSQL checks a foreign key row by row, with a query each: an import of 20,000 turns wrote 20,000 rows of
the suggester's run (CONTRACT §9) and ran 40,000 checks, most of what suggestions added to the import: +32 %
with them, +8 % without (best of 5 rounds against the import without suggestions). Statement-level triggers with transition tables keep the same guarantees with one
query per statement, however many rows:

- rows written (COPY, INSERT or UPDATE) must name an existing run and turn; those are locked ``FOR KEY SHARE``
  as a foreign key's check locks them, so a concurrent delete of either waits for the writer's commit and
  then meets the delete check;
- a run or turn cannot be deleted while rows name it (the ORM deletes the rows first, ``on_delete=CASCADE``).

A key's violation raises ``foreign_key_violation`` (Django's ``IntegrityError``) at the end of the statement
rather than at commit; Django's deletes remove the rows before their run or turn, so nothing relied on the
deferral. Not covered, as no code does it: changing a run's or turn's id, ``TRUNCATE`` of one table alone.
SQLite (``make run`` without ``DATABASE_URL``) has neither constraint nor trigger.
"""

import django.db.models.deletion
from django.db import migrations, models

# Per parent table: lock the rows named (as a foreign key's check does), and compare their number with the
# number of ids named; only when one is missing, find it for the message. One pass over the parents each.
KEY_EXISTS = """
    SELECT count(*) INTO locked FROM (
        SELECT 1 FROM {table} p WHERE p.id IN (SELECT {key} FROM new_rows) FOR KEY SHARE OF p
    ) parents;
    IF locked < (SELECT count(DISTINCT {key}) FROM new_rows) THEN
        SELECT n.{key} INTO missing FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM {table} p WHERE p.id = n.{key})
            LIMIT 1;
        RAISE foreign_key_violation USING MESSAGE = format(
            'insert or update on table "annotation_run_turn": {key} %s is not present in table "{table}"', missing);
    END IF;
"""
KEYS_EXIST = """
CREATE OR REPLACE FUNCTION annotation_run_turn_keys_exist() RETURNS trigger AS $$
DECLARE
    locked bigint;
    missing bigint;
BEGIN
{run}{turn}    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

# {key}: the column of annotation_run_turn naming the table the trigger is on
STILL_NAMED = """
CREATE OR REPLACE FUNCTION annotation_run_turn_keeps_{table}() RETURNS trigger AS $$
DECLARE
    named bigint;
BEGIN
    SELECT rt.{key} INTO named FROM annotation_run_turn rt WHERE rt.{key} IN (SELECT id FROM old_rows) LIMIT 1;
    IF FOUND THEN
        RAISE foreign_key_violation USING MESSAGE = format(
            'delete on table "{table}": id %s is still referenced from table "annotation_run_turn"', named);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""
PARENTS = (("annotation_run", "run_id"), ("turns", "turn_id"))


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    run, turn = (KEY_EXISTS.format(table=table, key=key) for table, key in PARENTS)
    schema_editor.execute(KEYS_EXIST.format(run=run, turn=turn), params=None)
    # One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
    for event in ("INSERT", "UPDATE"):
        schema_editor.execute(
            f"CREATE TRIGGER annotation_run_turn_keys_exist_{event.lower()} AFTER {event} ON annotation_run_turn "
            "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION annotation_run_turn_keys_exist()"
        )
    for table, key in PARENTS:
        schema_editor.execute(STILL_NAMED.format(table=table, key=key), params=None)
        schema_editor.execute(
            f"CREATE TRIGGER {table}_keeps_run_turns AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows "
            f"FOR EACH STATEMENT EXECUTE FUNCTION annotation_run_turn_keeps_{table}()"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, _key in PARENTS:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_keeps_run_turns ON {table}")
        schema_editor.execute(f"DROP FUNCTION IF EXISTS annotation_run_turn_keeps_{table}()")
    for event in ("insert", "update"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS annotation_run_turn_keys_exist_{event} ON annotation_run_turn")
    schema_editor.execute("DROP FUNCTION IF EXISTS annotation_run_turn_keys_exist()")


class Migration(migrations.Migration):

    dependencies = [
        ('agreement', '0003_runturn_lean_indexes'),
        ('supervision', '0005_assignment_history'),
    ]

    operations = [
        migrations.AlterField(
            model_name='runturn',
            name='run',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='turns', to='agreement.annotationrun'),
        ),
        migrations.AlterField(
            model_name='runturn',
            name='turn',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='supervision.turn'),
        ),
        migrations.RunPython(forwards, backwards),
    ]
