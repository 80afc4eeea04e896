"""Benchmarks run in their own PostgreSQL database, created on first use, never in the test database."""

from __future__ import annotations

import os

import dj_database_url
import psycopg

DEFAULT_BENCH_URL = "postgres://postgres@127.0.0.1:5432/portal_bench"


def use_bench_database() -> str:
    """Points DATABASE_URL at the bench database (unless set) and creates that database if missing."""
    url = os.environ.setdefault("DATABASE_URL", DEFAULT_BENCH_URL)
    config = dj_database_url.parse(url)
    params = {"dbname": "postgres", "user": config["USER"] or None, "host": config["HOST"] or None}
    if config["PORT"]:
        params["port"] = config["PORT"]
    if config["PASSWORD"]:
        params["password"] = config["PASSWORD"]
    with psycopg.connect(**{k: v for k, v in params.items() if v is not None}, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{config["NAME"]}"')
    return url


def queue_follow_up_jobs_without_running_them() -> None:
    """As in production, an import only queues its follow-up job (the trajectory audit) for a worker; the
    benchmarks time the import itself, so queued tasks go to an in-memory broker nobody consumes."""
    from portal.celery import app

    app.conf.task_always_eager = False
    app.conf.broker_url = "memory://"
    app.conf.result_backend = None
    # portal.queue pings the broker's Redis before publishing; with the broker in memory there is none to
    # ping (REDIS_URL set for the cache made it try redis.from_url("memory://")), so publish directly.
    from django.conf import settings

    settings.REDIS_URL = ""
