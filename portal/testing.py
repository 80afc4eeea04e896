"""Real processes for the production and fault tests: a private redis-server that a test may kill, and
gunicorn serving the portal with ``DJANGO_DEBUG=0`` against the test database.

Never touches the shared Redis on 6379: each private server listens on a free loopback port of its own.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION_SECRET_KEY = "test-production-key-" + "Qv7m2Kx9Lp4Wz8Rt3Nb6Hc1Jd5Fg0Ys" * 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what} within {timeout:g} s")


@dataclass
class PrivateRedis:
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self) -> PrivateRedis:
        assert shutil.which("redis-server"), "redis-server is not installed"
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, 10, "the private redis-server did not answer")
        return self

    def kill(self) -> None:
        """SIGKILL, as a crash would: no goodbye to the clients."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        wait_until(lambda: not self.answers(), 5, "the private redis-server still answers")


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    raw_headers: list[tuple[str, str]] = field(default_factory=list)

    def json(self):
        return json.loads(self.body)


@dataclass
class Gunicorn:
    """``gunicorn portal.wsgi:application`` as the README runs it, behind an imagined TLS proxy."""

    env: dict[str, str]
    workers: int = 1
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    def start(self) -> Gunicorn:
        self.log_path = Path(self.env.get("DJANGO_STATIC_ROOT", "/tmp")).parent / f"gunicorn-{self.port}.log"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "portal.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(self.workers),
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.log_path.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def up() -> bool:
            assert self.process.poll() is None, self.log()
            try:
                return self.request("GET", "/healthz", https=False).status in (200, 503)
            except OSError:
                return False

        wait_until(up, 60, "gunicorn did not answer")
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        https: bool = True,
        timeout: float = 30,
    ) -> Response:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        all_headers = {"Host": "127.0.0.1", **({"X-Forwarded-Proto": "https"} if https else {}), **(headers or {})}
        try:
            conn.request(method, path, body=body, headers=all_headers)
            answer = conn.getresponse()
            raw = answer.getheaders()
            return Response(answer.status, {k.lower(): v for k, v in raw}, answer.read(), raw)
        finally:
            conn.close()


class Browser:
    """A tiny cookie-keeping client for a real server: log in through the form, then browse."""

    def __init__(self, server: Gunicorn):
        self.server = server
        self.cookies: dict[str, str] = {}

    def _cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    def _keep(self, response: Response) -> Response:
        for key, value in response.raw_headers:
            if key.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return response

    def get(self, path: str, **headers) -> Response:
        return self._keep(self.server.request("GET", path, headers={**self._cookie_header(), **headers}))

    def post_form(self, path: str, data: dict[str, str]) -> Response:
        token = self.cookies.get("csrftoken", "")
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token})
        headers = {
            **self._cookie_header(),
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"https://127.0.0.1{path}",
            "Origin": "https://127.0.0.1",
        }
        return self._keep(self.server.request("POST", path, body=body, headers=headers))

    def log_in(self, username: str, password: str, path: str = "/accounts/login/") -> Response:
        self.get(path)
        return self.post_form(path, {"username": username, "password": password})


def production_env(*, database_url: str, redis_url: str | None, static_root: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_URL", "DATABASE_URL"))}
    env = {
        **base,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": PRODUCTION_SECRET_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_STATIC_ROOT": str(static_root),
        "DATABASE_URL": database_url,
        "DJANGO_CONN_MAX_AGE": "0",
        **extra,
    }
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def collectstatic(static_root: Path) -> None:
    env = production_env(database_url="sqlite:///unused", redis_url=None, static_root=static_root)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )


def production_password(user, password: str) -> None:
    """The suite hashes with MD5 for speed; a production server only knows the real hasher."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    hasher = PBKDF2PasswordHasher()
    user.password = hasher.encode(password, hasher.salt())
    user.save(update_fields=["password"])


@dataclass
class Worker:
    """``celery -A portal worker`` on a private Redis, against the test database; killable with SIGKILL."""

    env: dict[str, str]
    pool: str = "solo"
    concurrency: int = 1
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    def start(self, log_path: Path) -> Worker:
        self.log_path = log_path
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal",
                "worker",
                f"--pool={self.pool}",
                f"--concurrency={self.concurrency}",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-n",
                f"fault-{os.getpid()}-{free_port()}@%h",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=log_path.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_until(lambda: b"ready." in log_path.read_bytes() or self.process.poll() is not None, 60, "worker")
        assert self.process.poll() is None, self.log()
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL to the worker and every process of its group: a crash, no clean-up of any kind."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def sender(broker_url: str):
    """A Celery app of the test's own that sends to the private broker by task name (the portal's app in
    this process stays on the suite's Redis)."""
    from celery import Celery

    return Celery("fault-test", broker=broker_url, backend=broker_url, set_as_current=False)
