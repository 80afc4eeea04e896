"""A pytest plugin loaded before pytest-django reads the settings (``-p portal.pytest_worker_env`` in
pyproject.toml's addopts): under pytest-xdist each worker process gets a Redis database of its own — worker
gw0 database 1, gw1 database 2, … on REDIS_URL's server — so one worker's Celery queue, cache and results never
meet another's (the test databases are pytest-django's own: test_<name>_gw0, _gw1, …). Without xdist it does
nothing."""

from __future__ import annotations

import os
import re

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("REDIS_URL"):
    _database = int(_worker.removeprefix("gw")) + 1
    os.environ["REDIS_URL"] = re.sub(r"(/\d*)?$", f"/{_database}", os.environ["REDIS_URL"].rstrip("/"), count=1)
