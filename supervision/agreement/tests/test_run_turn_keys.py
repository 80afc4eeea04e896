"""A run's rows name an existing run and turn, as a foreign key would make them (migration 0004: checked per
statement by triggers, not row by row by constraints, for the import's speed). Each guarantee of the
constraints it replaces, tried on PostgreSQL the way it could break: rows written by the ORM, by COPY (the
suggester's path) and by UPDATE; parents deleted in SQL; a parent deleted by another connection while rows
naming it are being written."""

from __future__ import annotations

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from supervision.agreement.models import AnnotationRun, RunTurn
from supervision.agreement.tests.conftest import run_lines
from supervision.agreement.tests.factories import saved_run
from supervision.models import Session, Turn
from supervision.testing import database_url_under_test

MISSING = 987_654_321


def _copy_rows(rows: list[tuple[int, int]]) -> None:
    """(run id, turn id) rows written the way the suggester writes its run (``SuggestionWriter._copy``)."""
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(
            f"COPY {RunTurn._meta.db_table} (run_id, turn_id, techniques, client_states, dialog_act_rated, scores) "
            "FROM STDIN"
        ) as copy,
    ):
        copy.write("".join(f'{run}\t{turn}\t["empathy"]\t\\N\tf\t\\N\n' for run, turn in rows))


@pytest.fixture
def run(golden):
    return saved_run(run_lines("AG01"))


@pytest.mark.parametrize("writer", ["orm", "copy"])
def test_a_row_naming_a_missing_run_or_turn_is_refused_and_nothing_of_its_statement_is_kept(run, golden, writer):
    turns = list(Turn.objects.filter(session=golden["AG02"]).values_list("id", flat=True))
    rows_before = RunTurn.objects.count()
    for bad, named in (((MISSING, turns[1]), f"run_id {MISSING}"), ((run.pk, MISSING), f"turn_id {MISSING}")):
        rows = [(run.pk, turns[0]), bad, (run.pk, turns[2])]
        # Django's IntegrityError through the ORM, psycopg's through the raw COPY cursor
        with pytest.raises((IntegrityError, psycopg.IntegrityError), match=named), transaction.atomic():
            if writer == "orm":
                RunTurn.objects.bulk_create(RunTurn(run_id=r, turn_id=t, techniques=["empathy"]) for r, t in rows)
            else:
                _copy_rows(rows)
    assert RunTurn.objects.count() == rows_before
    _copy_rows([(run.pk, turns[0])])  # the same statement with good keys goes through
    assert RunTurn.objects.count() == rows_before + 1


def test_a_row_moved_to_a_missing_run_or_turn_is_refused(run):
    rows = RunTurn.objects.filter(run=run).count()
    for field in ("run_id", "turn_id"):
        with pytest.raises(IntegrityError, match=f"{field} {MISSING}"), transaction.atomic():
            RunTurn.objects.filter(pk=RunTurn.objects.filter(run=run).first().pk).update(**{field: MISSING})
    assert RunTurn.objects.filter(run=run).count() == rows == 6


def test_a_run_or_turn_that_rows_name_cannot_be_deleted_under_them_but_the_orm_takes_the_rows_along(run, golden):
    named_turn = RunTurn.objects.filter(run=run).values_list("turn_id", flat=True).first()
    for table, key in (("annotation_run", run.pk), ("turns", named_turn)):
        with pytest.raises(IntegrityError, match="still referenced"), transaction.atomic(), connection.cursor() as c:
            c.execute(f"DELETE FROM {table} WHERE id = %s", [key])
    # the ORM's cascade (the admin's delete, a re-import removing turns) deletes the rows first
    Session.objects.filter(pk=golden["AG01"].pk).delete()
    assert not RunTurn.objects.filter(turn_id=named_turn).exists()
    AnnotationRun.objects.filter(pk=run.pk).delete()
    assert not RunTurn.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_or_turn_being_named_by_a_writer_waits_for_its_commit_before_it_can_go(taxonomy_tables, cast):
    from supervision.agreement.tests.conftest import golden_lines, import_lines

    other = import_lines(golden_lines("AG02"), "trainee_b")
    import_lines(golden_lines("AG01"), "trainee_a")
    run = saved_run(run_lines("AG01"))  # rows for AG01's turns, committed
    turn = Turn.objects.filter(session=other).order_by("seq").first()
    with psycopg.connect(database_url_under_test(), autocommit=True) as deleter:
        deleter.execute("SET lock_timeout = '300ms'")
        with transaction.atomic():
            _copy_rows([(run.pk, turn.pk)])  # not committed yet
            # another connection deleting the run or the turn the way the ORM does (its rows, then it) waits
            # on the writer's lock, as with a foreign key, instead of leaving the writer's rows orphaned
            for table, key, column in (("annotation_run", run.pk, "run_id"), ("turns", turn.pk, "turn_id")):
                with pytest.raises(psycopg.errors.LockNotAvailable), deleter.transaction():
                    deleter.execute(f"DELETE FROM annotation_run_turn WHERE {column} = %s", [key])
                    deleter.execute(f"DELETE FROM {table} WHERE id = %s", [key])
        # committed: the delete of the run alone is now refused, the rows are there
        with pytest.raises(psycopg.errors.ForeignKeyViolation, match="still referenced"), deleter.transaction():
            deleter.execute("DELETE FROM annotation_run WHERE id = %s", [run.pk])
    assert RunTurn.objects.filter(run=run, turn=turn).exists()
