"""gunicorn settings for `gunicorn portal.wsgi:application` (gunicorn reads ./gunicorn.conf.py by itself) (see README,
"Production"). Every value can be overridden on the command line or with GUNICORN_CMD_ARGS."""

import os

bind = os.environ.get("PORTAL_BIND", "127.0.0.1:8000")
# Sync workers: the pages and the API are short database requests; two per core is the usual start.
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1)))
# A large spreadsheet upload is read in the request before it is handed to a background job.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", 120))
graceful_timeout = 30
# Recycle workers now and then so a slow leak cannot grow without bound.
max_requests = 2000
max_requests_jitter = 200
# The TLS-terminating proxy in front sets X-Forwarded-Proto; trust it only from these addresses.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = "-"
errorlog = "-"
# gunicorn's control socket (one path per user by default) is not used; several servers on one machine would
# share it.
control_socket_disable = True
