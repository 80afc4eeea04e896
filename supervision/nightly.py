"""The nightly review: every step named in ``settings.NIGHTLY_REVIEW_STEPS``, run for one day.

The Celery task (``supervision.gauge.tasks``), ``compute_gauges`` and the demo call this; the steps
themselves (the gauge, the tendency tags, the trajectory audits) live in their apps.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.utils.module_loading import import_string


def nightly_review(*, day: datetime.date) -> dict[str, object]:
    """The nightly job: runs every service named in ``settings.NIGHTLY_REVIEW_STEPS`` with ``day=``.

    A step is added to that setting, not here.
    Returns each step's result keyed by its dotted path.
    """
    from supervision import pagecache

    try:
        return {dotted: import_string(dotted)(day=day) for dotted in settings.NIGHTLY_REVIEW_STEPS}
    finally:
        # Every trainee page shows what the night computes (steps done before a failure included).
        pagecache.everyone_changed()
