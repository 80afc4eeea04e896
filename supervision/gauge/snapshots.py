"""The day's review-gauge snapshots (writes): only what is new or changed is written.

A snapshot's figures are a function of its tally and the bands alone, so a digest of those identifies
them: an unchanged session's snapshot is copied inside the database from an earlier day, and the rest are
computed and written with one COPY.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import inspect
import json

from django.db import connection, models

from supervision.gauge import figures
from supervision.gauge.models import GaugeSnapshot


def _source_digest(module) -> str:
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):  # a deployment without .py files: digests then change with the data only
        source = module.__name__
    return hashlib.sha1(source.encode()).hexdigest()


_FIGURES_SOURCE = _source_digest(figures)


class DueSnapshot:
    """A snapshot the day needs: trainee-wide (``session_id`` None) or per session.

    Its figures are a function of the tally and the bands alone (``figures.snapshot_figures``), so
    ``digest`` identifies them without computing them: equal digests, equal figures.
    """

    __slots__ = ("digest", "session_id", "tally", "trainee_id")

    def __init__(self, trainee_id: int, session_id: int | None, tally: figures.Tally, bands) -> None:
        self.trainee_id, self.session_id, self.tally = trainee_id, session_id, tally
        self.digest = hashlib.sha1(
            repr((_FIGURES_SOURCE, trainee_id, session_id, sorted(bands.items()), tally.canonical())).encode()
        ).hexdigest()

    @property
    def key(self) -> tuple[int, int | None]:
        return self.trainee_id, self.session_id


def write_snapshots(day: datetime.date, due: list[DueSnapshot], bands, computed_at: datetime.datetime) -> None:
    """Makes the day's snapshots exactly ``due``, writing only what is new or changed.

    - A snapshot of the day with the same digest is left alone (a same-day re-run writes nothing).
    - A per-session snapshot whose figures an earlier day's snapshot already has (the session and the
      bands unchanged since: the usual case on a new night) is copied from it inside the database.
    - The others are computed and written with one COPY (no JSON parsing in the database).
    - A changed snapshot of the day is deleted and written again; the day's snapshots of trainees or
      sessions no longer in scope are deleted.
    """
    existing = {
        (trainee_id, session_id): (pk, digest)
        for pk, trainee_id, session_id, digest in GaugeSnapshot.objects.filter(date=day).values_list(
            "pk", "trainee_id", "session_id", "figures_digest"
        )
    }
    needed, replaced = [], []
    for snapshot in due:
        pk, digest = existing.pop(snapshot.key, (None, None))
        if digest != snapshot.digest:
            needed.append(snapshot)
            if pk is not None:
                replaced.append(pk)
    gone = replaced + [pk for pk, _digest in existing.values()]  # the rest: no longer in scope
    if gone:
        GaugeSnapshot.objects.filter(pk__in=gone).delete()
    if connection.vendor != "postgresql":
        # the embedded database of `make run`: the same rows, written through the ORM (no COPY, no jsonb)
        _create_snapshots(day, needed, bands, computed_at)
        return
    copied = _copy_earlier_snapshots(day, [s for s in needed if s.session_id is not None], computed_at)
    _insert_snapshots(day, [s for s in needed if s.session_id not in copied], bands, computed_at)


# every column a snapshot's figures are stored in
_FIGURE_COLUMNS = [
    f.column
    for f in GaugeSnapshot._meta.concrete_fields
    if f.column not in ("id", "trainee_id", "session_id", "date", "computed_at")
]


def _copy_earlier_snapshots(day: datetime.date, due: list[DueSnapshot], computed_at: datetime.datetime) -> set[int]:
    """Copies, dated ``day``, the newest earlier snapshot with the same digest of each session in ``due``
    that has one; returns the sessions copied."""
    if not due:
        return set()
    columns = ", ".join(_FIGURE_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {GaugeSnapshot._meta.db_table} (trainee_id, session_id, date, computed_at, {columns}) "
            f"SELECT DISTINCT ON (g.session_id) g.trainee_id, g.session_id, %(day)s, %(now)s, {', '.join(f'g.{c}' for c in _FIGURE_COLUMNS)} "
            f"FROM jsonb_to_recordset(%(due)s::jsonb) AS w(trainee_id bigint, session_id bigint, digest text) "
            # (trainee_id, session_id, date) is the unique index per-session snapshots are found by
            f"JOIN {GaugeSnapshot._meta.db_table} g ON g.trainee_id = w.trainee_id AND g.session_id = w.session_id "
            "  AND g.date < %(day)s AND g.figures_digest = w.digest "
            "ORDER BY g.session_id, g.date DESC "
            "RETURNING session_id",
            {
                "day": day,
                "now": computed_at,
                "due": json.dumps(
                    [{"trainee_id": s.trainee_id, "session_id": s.session_id, "digest": s.digest} for s in due]
                ),
            },
        )
        return {session_id for (session_id,) in cursor.fetchall()}


def _insert_snapshots(day: datetime.date, due: list[DueSnapshot], bands, computed_at: datetime.datetime) -> None:
    if not due:
        return
    json_columns = {f.column for f in GaugeSnapshot._meta.concrete_fields if isinstance(f, models.JSONField)}
    dumps = functools.partial(json.dumps, ensure_ascii=False)
    columns = ["trainee_id", "session_id", "date", "computed_at", *_FIGURE_COLUMNS]
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(f"COPY {GaugeSnapshot._meta.db_table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for snapshot in due:
            values = {**figures.snapshot_figures(snapshot.tally, bands), "figures_digest": snapshot.digest}
            copy.write_row(
                [
                    snapshot.trainee_id,
                    snapshot.session_id,
                    day,
                    computed_at,
                    *(dumps(values[c]) if c in json_columns else values[c] for c in _FIGURE_COLUMNS),
                ]
            )


def _create_snapshots(day: datetime.date, due: list[DueSnapshot], bands, computed_at: datetime.datetime) -> None:
    GaugeSnapshot.objects.bulk_create(
        [
            GaugeSnapshot(
                trainee_id=snapshot.trainee_id,
                session_id=snapshot.session_id,
                date=day,
                computed_at=computed_at,
                **{
                    **figures.snapshot_figures(snapshot.tally, bands),
                    "figures_digest": snapshot.digest,
                },
            )
            for snapshot in due
        ],
        batch_size=500,
    )


# ---------------------------------------------------------------------------------------------------
# Suggested critiques
