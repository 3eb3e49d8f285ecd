"""The production stack as processes: gunicorn and a Celery worker on PostgreSQL + Redis.

scripts/test-integration prepares a fresh database and exports its URL and the broker's;
these fixtures migrate it, load a question, and run the servers with DEBUG off exactly as
docker-compose.yml does, then the tests talk to them over loopback only.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import DECODE_FLOOR_YAML

ROOT = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent
HEARTBEAT_RAN = re.compile(r"Task grading\.heartbeat\[[^\]]+\] succeeded")


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """The root conftest's MD5 hashing, off: users made here log in through the real
    servers, which run the production setting (PBKDF2)."""
    yield


def _require(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the integration suite through scripts/test-integration")
    return value


@pytest.fixture(scope="session")
def stack_env(tmp_path_factory):
    var_dir = tmp_path_factory.mktemp("var")
    env = dict(os.environ)
    env.update(
        DATABASE_URL=_require("INTEGRATION_DATABASE_URL"),
        CELERY_BROKER_URL=_require("INTEGRATION_BROKER_URL"),
        DEBUG="0",
        SECRET_KEY="integration-suite-secret-key-not-for-production",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_COOKIES="0",
        TRAINER_VAR_DIR=str(var_dir),
        STATIC_ROOT=str(var_dir / "static"),
        PYTHONUNBUFFERED="1",
        # Heartbeats every second, late after six: the recovery tests see a wedged pool
        # in seconds, not the production minute.
        WORKER_HEARTBEAT_INTERVAL="1",
        WORKER_HEARTBEAT_MAX_AGE="6",
    )
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _manage(env, *args, stdin: str | None = None):
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, input=stdin, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


@pytest.fixture(scope="session")
def prepared_database(stack_env):
    _manage(stack_env, "migrate", "--noinput")
    _manage(stack_env, "collectstatic", "--noinput")
    _manage(stack_env, "create_demo_accounts")
    _manage(
        stack_env, "shell", "-c",
        "import sys; from questions.services import question_save_text; "
        "r = question_save_text(sys.stdin.read(), origin='file'); assert r.version, r.problems",
        stdin=DECODE_FLOOR_YAML,
    )
    return stack_env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Worker:
    """A Celery worker process on the grading queue that a test can stop and restart."""

    def __init__(self, env, log_path: Path):
        self.env, self.log_path, self.process = env, log_path, None

    def start(self):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [str(VENV_BIN / "celery"), "-A", "trainer", "worker", "-Q", "grading", "--pool", "prefork",
             "--concurrency", "1", "--loglevel", "INFO", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # Ready, and its pool has run its first heartbeat (so /healthz says ok).
            log_text = self.log_path.read_text()
            if "ready." in log_text and HEARTBEAT_RAN.search(log_text):
                return
            if self.process.poll() is not None:
                pytest.fail(f"worker exited: {self.log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        pytest.fail("worker did not become ready")

    def stop(self, sig=signal.SIGTERM):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            self.process.wait(timeout=30)
        self.log_path.write_text("")


@pytest.fixture(scope="session")
def worker(prepared_database, tmp_path_factory):
    worker = Worker(prepared_database, tmp_path_factory.mktemp("logs") / "worker.log")
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def web(prepared_database, tmp_path_factory):
    port = _free_port()
    log_path = tmp_path_factory.mktemp("logs") / "gunicorn.log"
    process = subprocess.Popen(
        [str(VENV_BIN / "gunicorn"), "trainer.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=ROOT, env=prepared_database, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/accounts/login/", timeout=2)
            break
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"gunicorn exited: {log_path.read_text()[-2000:]}")
            time.sleep(0.3)
    else:
        pytest.fail("gunicorn did not answer")
    yield url
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


@pytest.fixture
def pg(prepared_database):
    """A direct connection to the stack's PostgreSQL, to check what the worker stored."""
    import psycopg

    with psycopg.connect(prepared_database["DATABASE_URL"], autocommit=True) as connection:
        yield connection
