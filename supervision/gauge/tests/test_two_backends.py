"""The review gauge on both backends: PostgreSQL's set-based statement and the portable fold the embedded
SQLite of `make run` uses give the same tallies, snapshots, suggestions and tags, field by field."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from supervision.gauge import aggregate, portable, services
from supervision.gauge.models import GaugeSnapshot, SessionTally
from supervision.gauge.tests.conftest import DAY
from supervision.gauge.tests.two_backends import SNAPSHOT_FIELDS, build, dump
from supervision.models import SupervisorComment

ROOT = Path(__file__).resolve().parents[3]
START = DAY - datetime.timedelta(days=settings.GAUGE_WINDOW_DAYS - 1)


def assert_same(left: dict, right: dict, where: str = "") -> None:
    """Field by field, so a drift names the snapshot and the field."""
    assert sorted(left) == sorted(right), where
    for key in left:
        if isinstance(left[key], dict) and isinstance(right[key], dict):
            assert_same(left[key], right[key], f"{where}/{key}")
        else:
            assert left[key] == right[key], f"{where}/{key}: {left[key]!r} != {right[key]!r}"


def fields(session: aggregate.SessionAggregate) -> dict:
    """Everything the snapshots and suggestions are made of (the revision is the triggers', PostgreSQL's only)."""
    return {"trainee_id": session.trainee_id, "tally": session.tally.as_json(), **session.events()}


def snapshot_rows() -> dict:
    return {
        (s.trainee_id, s.session_id): {name: getattr(s, name) for name in [*SNAPSHOT_FIELDS, "figures_digest"]}
        for s in GaugeSnapshot.objects.filter(date=DAY)
    }


def suggestion_rows() -> dict:
    return {
        (c.turn_id, c.suggestion_key): (c.text, c.intent_deviation)
        for c in SupervisorComment.objects.filter(is_suggestion=True)
    }


@pytest.mark.django_db
def test_it_folds_the_same_tallies_as_the_statement(fixture_sessions):
    assert connection.vendor == "postgresql"
    statement = aggregate._session_aggregates(start=START, day=DAY, ids=None)
    fold = portable.session_aggregates(start=START, day=DAY)
    assert [s.session_id for s in fold] == sorted(statement) and len(fold) == 3
    for session in fold:
        assert_same(fields(session), fields(statement[session.session_id]), f"session {session.session_id}")
    assert sum(s.tally.silent_close_events for s in fold) == 2  # the fixtures do exercise the runs


@pytest.mark.django_db
def test_it_writes_the_same_snapshots_and_suggestions_on_either_path(fixture_sessions):
    set_based = services._gauge_compute(day=DAY, portable=False)
    expected_snapshots, expected_suggestions = snapshot_rows(), suggestion_rows()
    assert len(expected_snapshots) == 5 and expected_suggestions  # 2 trainees, 3 sessions

    # start again from nothing: no snapshots, no pending suggestions, no kept tallies
    GaugeSnapshot.objects.all().delete()
    SupervisorComment.objects.filter(is_suggestion=True).delete()
    SessionTally.objects.all().delete()
    folded = services._gauge_compute(day=DAY, portable=True)

    assert folded == set_based
    actual = snapshot_rows()
    assert sorted(actual, key=str) == sorted(expected_snapshots, key=str)
    for key, row in expected_snapshots.items():
        assert_same(actual[key], row, f"snapshot {key}")
    assert suggestion_rows() == expected_suggestions


@pytest.mark.django_db
def test_it_leaves_the_same_rows_when_the_portable_path_runs_again(fixture_sessions):
    services._gauge_compute(day=DAY, portable=True)
    before = snapshot_rows(), suggestion_rows(), list(GaugeSnapshot.objects.values_list("pk", flat=True))
    services._gauge_compute(day=DAY, portable=True)
    assert (snapshot_rows(), suggestion_rows(), list(GaugeSnapshot.objects.values_list("pk", flat=True))) == before


SQLITE_RUN = """
import django, json
django.setup()
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
from supervision.gauge.tests.two_backends import build, dump
days = build()
# what the demo trainee meets after `make run`: the dashboard and the gauge API
from django.contrib.auth import get_user_model
from django.test import Client
client = Client(SERVER_NAME="localhost")
client.force_login(get_user_model().objects.get(username="trainee_a"))
page = client.get("/feedback/").content.decode()
api = client.get("/api/v1/gauges/").json()
seen = {"chart": "추이" in page and "<svg" in page, "no_gauge_note": "아직 계산된 검토 지표가 없습니다" in page,
        "api_count": api["count"], "api_trainees": sorted({r["trainee"] for r in api["results"]})}
print(json.dumps({"vendor": connection.vendor, "days": [str(d) for d in days], "seen": seen, **dump()},
                 default=str, ensure_ascii=False))
"""


@pytest.mark.django_db(transaction=True)
def test_it_gives_the_same_gauge_and_tags_on_sqlite_as_on_postgresql(tmp_path, taxonomy_tables, target_bands):
    """`make run`'s embedded database, for real: a SQLite file migrated and filled by another process."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'portal.sqlite3'}", DJANGO_SETTINGS_MODULE="portal.settings")
    env.setdefault("DJANGO_DEBUG", "1")
    done = subprocess.run(
        [sys.executable, "-c", SQLITE_RUN], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    on_sqlite = json.loads(done.stdout.strip().splitlines()[-1])
    assert on_sqlite.pop("vendor") == "sqlite"
    seen = on_sqlite.pop("seen")
    assert seen["chart"] and not seen["no_gauge_note"], seen  # the dashboard shows the gauge and its trend
    assert seen["api_count"] > 0 and len(seen["api_trainees"]) == 1, seen  # and the API only her snapshots

    days = build()
    on_postgresql = json.loads(json.dumps({"days": [str(d) for d in days], **dump()}, default=str))
    assert on_sqlite["days"] == on_postgresql["days"] and str(DAY) in on_sqlite["days"]
    assert len(on_postgresql["snapshots"]) >= 5 + 3 and on_postgresql["tags"] and on_postgresql["suggestions"]
    for part in ("snapshots", "suggestions", "tags"):
        assert_same(on_sqlite[part], on_postgresql[part], part)
