"""One settings file for every environment; the differences come from environment variables.

See README.md ("Configuration") for the variables and their defaults.
"""

import datetime
import os
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from import_export.formats import base_formats
from whitenoise.compress import Compressor

from portal.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)
# The development key only serves DEBUG and test runs; `check --deploy` reports it (portal.E001).
DEVELOPMENT_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-3f9a7c1e5b2d4f6a8c0e"
SECRET_KEY = env_str("DJANGO_SECRET_KEY") or DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # WhiteNoise serves the static files under `runserver` too, as gunicorn will in production.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "portal.apps.LoginLockoutConfig",  # django-axes, with a Korean heading
    "import_export",
    "portal",
    "taxonomy",
    "supervision",
    "supervision.tags",
    "supervision.feedback",
    "supervision.gauge",
    "supervision.trajectory",
    "supervision.importing",
    "supervision.safety",
    "supervision.agreement",
    "supervision.people",
    "supervision.transitions",
    "supervision.suggesting",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from the gunicorn process itself: compressed, hashed names, cached for a year.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "portal.middleware.RejectMalformedRequestMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "portal.sessions.IdleTimeoutMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: turns a locked-out log-in into the Korean lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "supervision.feedback.context_processors.feedback_heading",
            ],
        },
    },
]

# Embedded SQLite only for `make run` without DATABASE_URL; tests and production use PostgreSQL.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'var' / 'portal.sqlite3'}",
        conn_max_age=env_int("DJANGO_CONN_MAX_AGE", 60, minimum=0),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Deferrable unique constraints exist on PostgreSQL only; the embedded SQLite demo database can do without.
# axes.W006 asks for lockout per address too: here it is per username on purpose (a training centre's
# computers share one address), and a username's failures add up across addresses and browsers
# (portal/tests/test_lockout.py proves that rotating the User-Agent does not escape it).
SILENCED_SYSTEM_CHECKS = ["models.W038", "axes.W006"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    # 12 characters for supervisors, staff and superusers; 8 for trainees (portal/sessions.py).
    {"NAME": "portal.sessions.RoleMinimumLengthValidator", "OPTIONS": {"trainee_min_length": 8, "min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    # Not a rule: its password_changed hook revokes the user's API tokens on every password change.
    {"NAME": "supervision.api.tokens.RevokeTokensOnPasswordChange"},
]
# Shared computers: a session idle this long is logged out on its next request (portal/sessions.py), and the
# session cookie dies with the browser.
SESSION_IDLE_MINUTES = env_int("SESSION_IDLE_MINUTES", 60, minimum=1)
# The stored session outlives the idle limit a little, so the middleware can say why the person was logged out.
SESSION_COOKIE_AGE = 2 * SESSION_IDLE_MINUTES * 60
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
# Log-in lockout (django-axes, portal/lockout.py): a username is refused after 10 failed log-ins, right
# password or not, for LOGIN_LOCKOUT_MINUTES or until staff lift the lock in the admin ("로그인 잠금").
# Counted per username only, never per address: a training centre's computers share one address.
AUTHENTICATION_BACKENDS = [
    "portal.lockout.LockoutBackend",
    "portal.lockout.LockoutResettingModelBackend",
]
LOGIN_LOCKOUT_MINUTES = env_int("LOGIN_LOCKOUT_MINUTES", 30, minimum=1)
AXES_FAILURE_LIMIT = 10
AXES_LOCKOUT_PARAMETERS = ["username"]
AXES_COOLOFF_TIME = datetime.timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "portal.lockout.lockout_response"
# Attempts are kept in the database (AXES_HANDLER default), so lockout holds with Redis down.
AXES_ENABLE_ACCESS_FAILURE_LOG = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "ko"
LANGUAGES = [("ko", "한국어")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = env_str("PORTAL_TIME_ZONE", "Asia/Seoul")
try:
    ZoneInfo(TIME_ZONE)
except (ZoneInfoNotFoundError, ValueError):
    raise ImproperlyConfigured(f"PORTAL_TIME_ZONE={TIME_ZONE!r} is not a known time zone") from None
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or BASE_DIR / "var" / "static")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, gzip/brotli-compressed copies made by `collectstatic`; DEBUG (and the test suite) serve the
    # source files as they are, so nothing needs collecting to develop or test.
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Source maps are fetched only by a developer's tools, never while a user waits; compressing them (brotli at its
# highest quality) was over half of collectstatic's time, in every deploy and in the suite's production tests.
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (*Compressor.SKIP_COMPRESS_EXTENSIONS, "map")

# Production sits behind a TLS-terminating proxy that sets X-Forwarded-Proto.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", not DEBUG)
# A load balancer probes /healthz over plain HTTP on the inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = 0 if DEBUG else 31_536_000
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy on every page (django-csp): no inline script or style anywhere, no eval, nothing
# from another origin. The portal's own scripts and styles are static files; Swagger UI's start-up script
# is a file too (SpectacularSwaggerSplitView), and data: URIs serve its and the admin's icons.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "supervision.api.tokens.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's own JSON parser answers 500 to deeply nested JSON (RecursionError).
    "DEFAULT_PARSER_CLASSES": [
        "supervision.api.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "supervision.api.pagination.PortalPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "supervision.api.errors.korean_exception_handler",
    # The browsable API's titles and descriptions in Korean (a view's title_ko), not class names and docstrings.
    "VIEW_NAME_FUNCTION": "supervision.api.naming.view_name",
    "VIEW_DESCRIPTION_FUNCTION": "supervision.api.naming.view_description",
    # Only scoped views are throttled; the token endpoint guards against password guessing.
    "DEFAULT_THROTTLE_RATES": {"auth_token": env_str("API_TOKEN_THROTTLE_RATE", "10/min")},
    # Proxies in front of the portal that append to X-Forwarded-For. 0: throttles key on the socket address
    # and ignore the header, which any client can set.
    "NUM_PROXIES": env_int("TRUSTED_PROXIES", 0, minimum=0),
}
API_TOKEN_TTL_HOURS = env_int("API_TOKEN_TTL_HOURS", 24, minimum=1)
SPECTACULAR_SETTINGS = {
    "TITLE": "수련 감독 포털 API",
    "DESCRIPTION": "상담 수련 감독 포털의 API입니다. 회기·라벨·논평, 검토 지표, 경향 태그, 안전 사건, 평가 AI 일치도와 페르소나 상태 전이를 역할에 맞는 범위에서 읽고 씁니다.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    # Error responses (400/401/403/404/429) declared on every operation, in one place.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "supervision.api.schema.add_error_responses",
    ],
}

# Background jobs: Celery on Redis; without REDIS_URL (embedded `make run`) tasks run in-process.
REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
# A shared cache so that throttling counts requests across processes; locmem serves the embedded run.
# Redis down degrades it to "nothing cached" with a warning (portal.cache), never a 500.
CACHES = {
    "default": {
        "BACKEND": "portal.cache.DegradingRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "portal",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
    if REDIS_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}
# How long a trainee's rendered page may stay in the cache (supervision/pagecache.py). The writes that change a
# page replace it at once; this only bounds what no service reports (an admin renaming a user).
PAGE_CACHE_SECONDS = env_int("PAGE_CACHE_SECONDS", 600, minimum=1)
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_ENABLE_UTC = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Longer than the longest nightly run, so a late-acked task is not redelivered while still running.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 6 * 3600)}
CELERY_BEAT_SCHEDULE = {
    "nightly-review": {
        "task": "supervision.nightly_review",
        "schedule": crontab(
            hour=env_int("NIGHTLY_REVIEW_HOUR", 3, minimum=0), minute=env_int("NIGHTLY_REVIEW_MINUTE", 0)
        ),
    },
    "forget-stale-uploads": {"task": "importing.forget_stale_uploads", "schedule": crontab(hour=4, minute=30)},
}

# Import guards and job thresholds.
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 20 * 1024 * 1024, minimum=1)
IMPORT_MAX_ROWS = env_int("IMPORT_MAX_ROWS", 200_000, minimum=1)
IMPORT_MAX_CELL_CHARS = 10_000
# An xlsx is a zip: refuse one that unpacks to more than this, or compresses suspiciously well (zip bomb).
IMPORT_MAX_UNZIPPED_BYTES = env_int("IMPORT_MAX_UNZIPPED_BYTES", 400 * 1024 * 1024, minimum=1)
IMPORT_MAX_ZIP_RATIO = env_int("IMPORT_MAX_ZIP_RATIO", 200, minimum=1)
# The admin's plain-table screens (roster, label aliases) go row by row through the services: a cohort is
# tens of rows, so their cap is far below the transcript importer's (IMPORT_MAX_ROWS applies too).
TABLE_IMPORT_MAX_ROWS = env_int("TABLE_IMPORT_MAX_ROWS", 2_000, minimum=1)
# Admin uploads larger than this run as a background job (ImportJob) with a progress bar.
IMPORT_ASYNC_THRESHOLD_BYTES = env_int("IMPORT_ASYNC_THRESHOLD_BYTES", 1024 * 1024, minimum=0)
# An upload previewed but never written (or refused, or failed) is kept this many days for the person to
# confirm or look at again, then its bytes are dropped (`importing.forget_stale_uploads`, daily).
IMPORT_UPLOAD_RETENTION_DAYS = env_int("IMPORT_UPLOAD_RETENTION_DAYS", 7, minimum=1)

# Review gauge and tendency tags.
GAUGE_WINDOW_DAYS = env_int("GAUGE_WINDOW_DAYS", 30, minimum=1)
UTAG_VERIFY_AFTER_DAYS = env_int("UTAG_VERIFY_AFTER_DAYS", 14, minimum=0)
UTAG_VERIFY_MIN_EVIDENCE = env_int("UTAG_VERIFY_MIN_EVIDENCE", 3, minimum=1)

# Safety events (CONTRACT §8): a disclosure is answered when one of this many following counselor turns
# assesses risk.
SAFETY_RESPONSE_TURNS = env_int("SAFETY_RESPONSE_TURNS", 2, minimum=1)

# The nightly review (`supervision.nightly_review`) runs these services in order, each called with
# `day=`; add a step here (tags, trajectory audits) rather than in the task.
# django-import-export (the admin's spreadsheet import/export): exports need the model's view permission,
# imports its add permission (the roster's is the staff role's, see TraineeAssignmentAdmin); no cell is
# ever exported as a formula (portal/tabular.py adds the transcript export's escape on top of this).
# History is read-only: every write goes through its service (a "revert" form would bypass the rules).
SIMPLE_HISTORY_REVERT_DISABLED = True
IMPORT_EXPORT_ESCAPE_FORMULAE_ON_EXPORT = True
IMPORT_EXPORT_EXPORT_PERMISSION_CODE = "view"
IMPORT_EXPORT_IMPORT_PERMISSION_CODE = "add"
IMPORT_EXPORT_SKIP_ADMIN_ACTION_EXPORT_UI = True
# the two formats staff use (the transcript importer reads the same two)
IMPORT_FORMATS = EXPORT_FORMATS = [base_formats.CSV, base_formats.XLSX]
NIGHTLY_REVIEW_STEPS = (
    # first: the audits and the safety step read the suggestions of sessions nobody labelled
    "supervision.suggesting.nightly.suggestions_nightly",
    "supervision.gauge.services.gauge_compute",
    "supervision.tags.nightly.tags_nightly",
    "supervision.trajectory.services.trajectory_nightly",
    "supervision.safety.services.safety_nightly",
)
# The per-session parts of the night (``pending`` sessions, the ``prepare`` service doing them for some):
# a big night is split into chunk tasks of NIGHTLY_CHUNK_SESSIONS sessions that any worker takes, before
# the steps above run and find them done (supervision/nightly.py). Smaller nights run in the one task.
NIGHTLY_SESSION_WORK = (
    ("supervision.suggesting.nightly.suggestions_pending", "supervision.suggesting.nightly.suggestions_prepare"),
    ("supervision.gauge.aggregate.tallies_pending", "supervision.gauge.aggregate.tallies_prepare"),
    ("supervision.trajectory.services.trajectory_pending", "supervision.trajectory.services.trajectory_prepare"),
    ("supervision.safety.services.safety_pending", "supervision.safety.services.safety_prepare"),
)
NIGHTLY_CHUNK_SESSIONS = env_int("NIGHTLY_CHUNK_SESSIONS", 20, minimum=1)
# A step's part that can start only once the steps before it have run (the tags read the snapshots the
# gauge step writes): pending and prepare as above, split into chunks of NIGHTLY_CHUNK_TRAINEES trainees.
NIGHTLY_STEP_PARTS = {
    "supervision.tags.nightly.tags_nightly": (
        "supervision.tags.nightly.tags_pending",
        "supervision.tags.nightly.tags_prepare",
    ),
}
NIGHTLY_CHUNK_TRAINEES = env_int("NIGHTLY_CHUNK_TRAINEES", 10, minimum=1)
# Local processes a command (audit_trajectories, compute_gauges) spreads many sessions' trajectory audits
# over; a Celery task never starts any (the night scales out by chunk tasks over the workers).
TRAJECTORY_AUDIT_PROCESSES = env_int("TRAJECTORY_AUDIT_PROCESSES", os.cpu_count() or 1, minimum=1)
# The overlap lock expires after this long, so a killed worker cannot block later nights.
NIGHTLY_REVIEW_LOCK_SECONDS = env_int("NIGHTLY_REVIEW_LOCK_SECONDS", 4 * 3600, minimum=5)
# First wait before the nightly task retries after a lost database connection (doubling, up to 30 min).
NIGHTLY_RETRY_BACKOFF_SECONDS = env_int("NIGHTLY_RETRY_BACKOFF_SECONDS", 30, minimum=1)
# The label suggester's model file (CONTRACT §9); empty: the one shipped in the repository. A path that
# does not exist turns suggestions off (the benchmarks time the portal with and without them so).
SUGGESTER_MODEL_PATH = env_str("SUGGESTER_MODEL_PATH")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}
