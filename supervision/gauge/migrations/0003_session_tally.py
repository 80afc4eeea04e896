"""The per-session tally the nightly gauge reads instead of re-aggregating unchanged sessions.

On PostgreSQL, statement-level triggers (with transition tables: one statement per import, however many
rows) give every session whose turns, technique or client-state links, or accepted (non-suggestion)
comments a statement touched a new revision from a sequence. The gauge stores with each tally the
revision it read in the same statement as the rows it aggregated, so a write that commits during a run
is never lost: its revision is newer than the tally's, and the next run recomputes that session. The
gauge's own suggestions never change a revision: they are not counted.
"""

import django.db.models.deletion
from django.db import migrations, models

REVISIONS = "gauge_session_revision"

# (table, trigger function, the session ids a transition table named {rows} touches)
WATCHED = (
    ("turns", "gauge_revise_by_turns", "SELECT session_id FROM {rows}"),
    (
        "turn_technique",
        "gauge_revise_by_techniques",
        "SELECT t.session_id FROM turns t WHERE t.id IN (SELECT turn_id FROM {rows})",
    ),
    (
        "turn_client_state",
        "gauge_revise_by_client_states",
        "SELECT t.session_id FROM turns t WHERE t.id IN (SELECT turn_id FROM {rows})",
    ),
    (
        "supervisor_comment",
        "gauge_revise_by_comments",
        "SELECT t.session_id FROM turns t WHERE t.id IN (SELECT turn_id FROM {rows} WHERE NOT is_suggestion)",
    ),
)

FUNCTION = """
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO {revisions} (session_id, revision)
        SELECT session_id, nextval('{revisions}_seq') FROM (SELECT DISTINCT session_id FROM ({old_sessions}) t) touched
        ON CONFLICT (session_id) DO UPDATE SET revision = EXCLUDED.revision;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO {revisions} (session_id, revision)
        SELECT session_id, nextval('{revisions}_seq') FROM (SELECT DISTINCT session_id FROM ({new_sessions}) t) touched
        ON CONFLICT (session_id) DO UPDATE SET revision = EXCLUDED.revision;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

# a deleted session's revision goes with it (the turns' trigger wrote one just before, same transaction)
FORGET = f"""
CREATE OR REPLACE FUNCTION gauge_forget_sessions() RETURNS trigger AS $$
BEGIN
    DELETE FROM {REVISIONS} WHERE session_id IN (SELECT id FROM old_rows);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"CREATE SEQUENCE {REVISIONS}_seq")
    for table, function, sessions in WATCHED:
        schema_editor.execute(
            FUNCTION.format(
                function=function,
                revisions=REVISIONS,
                old_sessions=sessions.format(rows="old_rows"),
                new_sessions=sessions.format(rows="new_rows"),
            ),
            params=None,
        )
        # One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
        for event, referencing in (
            ("INSERT", "NEW TABLE AS new_rows"),
            ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
            ("DELETE", "OLD TABLE AS old_rows"),
        ):
            schema_editor.execute(
                f"CREATE TRIGGER {table}_gauge_revise_{event.lower()} AFTER {event} ON {table} "
                f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
            )
    schema_editor.execute(FORGET, params=None)
    schema_editor.execute(
        "CREATE TRIGGER sessions_gauge_forget AFTER DELETE ON sessions "
        "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gauge_forget_sessions()"
    )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP TRIGGER IF EXISTS sessions_gauge_forget ON sessions")
    schema_editor.execute("DROP FUNCTION IF EXISTS gauge_forget_sessions()")
    for table, function, _sessions in WATCHED:
        for event in ("insert", "update", "delete"):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_gauge_revise_{event} ON {table}")
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {function}()")
    schema_editor.execute(f"DROP SEQUENCE IF EXISTS {REVISIONS}_seq")


class Migration(migrations.Migration):

    dependencies = [
        ('gauge', '0002_seed_target_bands'),
        ('supervision', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='SessionRevision',
            fields=[
                ('session_id', models.BigIntegerField(primary_key=True, serialize=False)),
                ('revision', models.BigIntegerField()),
            ],
            options={
                'db_table': 'gauge_session_revision',
            },
        ),
        migrations.CreateModel(
            name='SessionTally',
            fields=[
                ('session', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='supervision.session')),
                ('revision', models.BigIntegerField()),
                ('sql_digest', models.CharField(max_length=40)),
                ('tally', models.JSONField()),
                ('events', models.JSONField()),
                ('suggestions_digest', models.CharField(blank=True, default='', max_length=40)),
                ('computed_at', models.DateTimeField()),
            ],
            options={
                'verbose_name': '회기 집계',
                'verbose_name_plural': '회기 집계',
                'db_table': 'gauge_session_tally',
            },
        ),
        migrations.AddField(
            model_name='gaugesnapshot',
            name='figures_digest',
            field=models.CharField(blank=True, default='', editable=False, max_length=40),
        ),
        migrations.RunPython(forwards, backwards),
    ]
