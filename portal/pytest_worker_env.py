"""A pytest plugin loaded before pytest-django reads the settings (``-p portal.pytest_worker_env`` in
pyproject.toml's addopts): under pytest-xdist each worker process gets a Redis database of its own — worker
gw0 the database after REDIS_URL's own (1 for /0), gw1 the next, … on REDIS_URL's server — so one worker's
Celery queue, cache and results never meet another's (the test databases are pytest-django's own: test_<name>_gw0, _gw1, …). Without xdist it does
nothing."""

from __future__ import annotations

import os
import re

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("REDIS_URL"):
    # Counted from REDIS_URL's own database, so two suites run side by side on one server (REDIS_URL …/0 and
    # …/8) keep apart too.
    _base = re.search(r"/(\d+)$", os.environ["REDIS_URL"].rstrip("/"))
    _database = (int(_base.group(1)) if _base else 0) + int(_worker.removeprefix("gw")) + 1
    os.environ["REDIS_URL"] = re.sub(r"(/\d*)?$", f"/{_database}", os.environ["REDIS_URL"].rstrip("/"), count=1)
