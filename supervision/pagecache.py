"""The trainee's pages kept rendered in the shared cache (``settings.CACHES``, Redis), so that a trainee coming
back to the dashboard, a session page or ``/api/v1/sessions/`` is not recomputed from the database each time.

What these pages show changes only when something is written: a label edit, a critique or its reply, a read
marker, a safety review, a tag, a trajectory audit, an import or the nightly review. Every cached entry is
keyed by two *versions*: the trainee's own and everyone's. The services that write call ``trainees_changed``
(the trainees whose pages the write touches) or ``everyone_changed`` (imports and the night, which touch
many); that gives the version a new random value, so every entry keyed by the old one is simply never read
again (it expires after ``PAGE_CACHE_SECONDS``).

- A version is a random token, never a counter: a version lost from Redis (evicted, flushed) comes back as a
  new token, never as an old value that old entries were keyed by.
- The change is made at once *and* again when the write's transaction commits: a page built between the two
  from the database as it was before the commit was keyed by the first token and is dropped by the second.
- A version is read before the page is built, so an entry always holds data at least as new as its key.
- Redis down: no version can be read and the page is built from the database as before. A version change that
  cannot reach Redis (tried even while the cache's breaker skips Redis) leaves kept pages at most
  ``PAGE_CACHE_SECONDS`` old.
- Keys hold the viewer's id: a trainee is only ever served an entry built for that same trainee.

Writes that go round the services (an admin editing a user's name, the catalogue's Korean names at a
deploy) show up at the latest after ``PAGE_CACHE_SECONDS``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sys
import uuid
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db import transaction
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.translation import get_language
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

EVERYONE = "pages:v:all"
# Stands for the request's CSRF token in a cached page (the token belongs to the browser, not the page).
CSRF_PLACEHOLDER = "pagecacheCsrfTokenPlaceholder0c6e1f"


def kept_for(user) -> bool:
    """Pages are kept for trainees only: what a trainee sees is their own work, which their version covers. A
    supervisor's or staff member's pages gather several trainees' work and are built on every request."""
    from supervision.roles import Role, roles_of

    return not user.is_superuser and roles_of(user) == frozenset({Role.TRAINEE})


def _trainee_key(trainee_id: int) -> str:
    return f"pages:v:t{trainee_id}"


def _new_token() -> str:
    return uuid.uuid4().hex


def _renew(keys: list[str]) -> None:
    values = {key: _new_token() for key in keys}
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        backend.set_many(values, timeout=None)
        return
    # Past the cache's breaker (portal/cache.py), which skips Redis for a while after one failure: a write must
    # not leave its change behind because another request of this process found Redis slow a moment ago.
    # Should Redis really not take it, kept pages are at most PAGE_CACHE_SECONDS old.
    try:
        RedisCache.set_many(backend, values, timeout=None)
    except RedisError:
        logger.warning("Kept trainee pages: a version change did not reach Redis (%s)", ", ".join(keys))


def _changed(keys: list[str]) -> None:
    if not keys:
        return
    _renew(keys)
    transaction.on_commit(lambda: _renew(keys))


def trainees_changed(trainee_ids: Iterable[int | None]) -> None:
    """What these trainees' pages show was just written (call inside the write's transaction)."""
    _changed(sorted({_trainee_key(t) for t in trainee_ids if t is not None}))


# Above this many sessions, one change for everyone costs less than finding the sessions' trainees.
MANY_SESSIONS = 200


def sessions_changed(session_ids: Iterable[int]) -> None:
    """What these sessions' pages show was just written: their trainees' pages change."""
    from supervision.models import Session

    session_ids = list(session_ids)
    if len(session_ids) > MANY_SESSIONS:
        everyone_changed()
    elif session_ids:
        trainees_changed(Session.objects.filter(pk__in=session_ids).values_list("trainee_id", flat=True))


def everyone_changed() -> None:
    """A write touching many trainees' pages (an import, the nightly review)."""
    _changed([EVERYONE])


def session_saved(sender, **kwargs) -> None:
    """A session row written or deleted, wherever from (the admin's session form edits its trainee, code, title
    and date): every kept page changes, the session's former trainee's too, who must no longer be served it."""
    everyone_changed()


def forget_all() -> None:
    """Every kept page is dropped at once: for a database that starts afresh (a test, a restore), whose user
    ids come round again."""
    _renew([EVERYONE])


def _versions(trainee_id: int) -> str | None:
    keys = [_trainee_key(trainee_id), EVERYONE]
    found = cache.get_many(keys)
    missing = [key for key in keys if key not in found]
    if missing:
        for key in missing:
            cache.add(key, _new_token(), timeout=None)
        found = cache.get_many(keys)
        if any(key not in found for key in keys):
            return None  # the cache does not answer
    return ":".join(found[key] for key in keys)


@lru_cache(maxsize=1)
def _release() -> str:
    """This deploy's pages: the static files it serves (the hashed names in a page change with them), our own
    templates and our own Python code (the charts and the sentences on a page are drawn in code). A deploy that
    changes only a template or a chart would otherwise serve the pages kept before it, for up to
    ``PAGE_CACHE_SECONDS``, and during a rolling restart old processes would keep writing them."""
    digest = hashlib.sha256()
    with contextlib.suppress(OSError):  # no collectstatic (DEBUG, tests): the templates alone
        digest.update((Path(settings.STATIC_ROOT) / "staticfiles.json").read_bytes())
    for path in _own_templates() + _own_code():
        digest.update(str(path).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _own_templates() -> list[Path]:
    """The template files of the project and of its own apps (not of installed libraries), in a fixed order;
    read once per process."""
    base, environment = Path(settings.BASE_DIR).resolve(), Path(sys.prefix).resolve()  # a venv may sit inside
    folders = [Path(folder) for engine in settings.TEMPLATES for folder in engine.get("DIRS", ())]
    folders += [Path(config.path) / "templates" for config in apps.get_app_configs()]
    own = {
        folder
        for folder in (f.resolve() for f in folders if f.is_dir())
        if folder.is_relative_to(base) and not folder.is_relative_to(environment)
    }
    return sorted(path for folder in own for path in folder.rglob("*.html") if path.is_file())


def _own_code() -> list[Path]:
    """The Python files of the project's own apps (not of installed libraries, not their tests), in a fixed
    order; read once per process."""
    base, environment = Path(settings.BASE_DIR).resolve(), Path(sys.prefix).resolve()
    roots = {
        root
        for root in (Path(config.path).resolve() for config in apps.get_app_configs())
        if root.is_relative_to(base) and not root.is_relative_to(environment)
    }
    return sorted(
        {path for root in roots for path in root.rglob("*.py") if path.is_file() and "tests" not in path.parts}
    )


def _key(viewer, trainee_id: int, versions: str, parts: Iterable[object]) -> str:
    what = "|".join(
        str(p)
        for p in (viewer.pk, viewer.get_username(), viewer.is_staff, get_language(), _release(), versions, *parts)
    )
    return f"pages:{trainee_id}:{hashlib.sha256(what.encode()).hexdigest()}"


def cached(viewer, trainee_id: int, parts: Iterable[object], build: Callable[[], Any]) -> Any:
    """``build()``'s result, kept for ``viewer`` looking at ``trainee_id``'s work; ``parts`` name what is built
    (the page, its query string)."""
    versions = _versions(trainee_id)
    if versions is None:
        return build()
    key = _key(viewer, trainee_id, versions, parts)
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, timeout=settings.PAGE_CACHE_SECONDS)
    return value


def render_page(request, template: str, build_context: Callable[[], dict]) -> HttpResponse:
    """``render(request, template, build_context())``, kept rendered for the viewer, a trainee on their own
    pages (``kept_for``): ``build_context`` answers 404 for anything else. The CSRF token is put in per
    request; a page carrying messages (shown once) is rendered afresh."""
    from django.contrib.messages import get_messages

    if len(get_messages(request)):
        return HttpResponse(render_to_string(template, build_context(), request))

    def build() -> list[bytes]:
        html = render_to_string(template, {**build_context(), "csrf_token": CSRF_PLACEHOLDER}, request)
        # Kept encoded, in pieces around the token: a view joins them, with no text to encode or search.
        return html.encode().split(CSRF_PLACEHOLDER.encode())

    pieces = cached(request.user, request.user.pk, ("page", template, request.get_full_path()), build)
    return HttpResponse(get_token(request).encode().join(pieces))
