"""With DEBUG off the settings refuse to load without a SECRET_KEY of the operator's own:
the embedded mode's development key is public (README, "The embedded mode")."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

DEVELOPMENT_KEY = "embedded-mode-insecure-key"


def manage_check(tmp_path, **environment) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("SECRET_KEY", "DEBUG")}
    # Its own var/ (the settings create folders there) and the embedded database and broker.
    env.update({"TRAINER_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
                "CELERY_BROKER_URL": "filesystem://", "DJANGO_SETTINGS_MODULE": "trainer.settings"})
    env.update(environment)
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=settings.BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("secret_key, message", [
    (None, "SECRET_KEY must be set when DEBUG is off"),
    ("", "SECRET_KEY must be set when DEBUG is off"),
    (DEVELOPMENT_KEY, "the embedded SECRET_KEY must not be used with DEBUG off"),
], ids=["unset", "empty", "development key"])
def test_debug_off_refuses_to_start_without_an_own_secret_key(tmp_path, secret_key, message):
    environment = {"DEBUG": "0"} if secret_key is None else {"DEBUG": "0", "SECRET_KEY": secret_key}
    result = manage_check(tmp_path, **environment)
    assert result.returncode != 0
    assert f"RuntimeError: {message}" in result.stderr


def test_debug_off_starts_with_an_own_secret_key(tmp_path):
    result = manage_check(tmp_path, DEBUG="0", SECRET_KEY="a-long-random-key-for-this-test-only-0123456789abcdef")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
