"""Shared fixtures: the users every permission test needs, and a small question."""

import textwrap

import pytest

from trainer.roles import Role

PASSWORD = "a-long-test-password-1"

DECODE_FLOOR_YAML = textwrap.dedent(
    """\
    slug: test-decode-floor
    seed: 1
    title: Decode floor (test question)
    topic: roofline
    difficulty: 1
    summary: Weight bytes over HBM bandwidth.
    params:
      gpu: {catalogue: gpus, choices: [h100_sxm, h200]}
      model: {catalogue: models, choices: [llama31_8b]}
    derived:
      weight_bytes: model.params * dtypes.bf16.bytes
      floor: weight_bytes / gpu.hbm_bandwidth
    statement: |
      {{ model.name }} in BF16 on one {{ gpu.name }} ({{ gpu.hbm_bandwidth | TB/s }}).
    parts:
      - id: floor
        kind: numeric
        prompt: The decode step's lower bound?
        answer: floor
        unit: ms
        mistakes:
          - answer: floor * 8
            feedback: You counted bits, not bytes.
      - id: why
        kind: explain
        prompt: Why does a real server run above this floor?
        rubric:
          - {id: kv, text: KV-cache reads grow with batch and context}
          - {id: gaps, text: Launch gaps and host overhead between kernels}
        model_answer: KV reads add bytes; launch gaps add time.
    hints:
      - Every weight crosses HBM once per step.
    solution: |
      {{ weight_bytes | GB }} / {{ gpu.hbm_bandwidth | TB/s }} = {{ answers.floor | ms }}.
    """
)


def _user(django_user_model, username: str, role: Role):
    from trainer.services import user_create

    return user_create(username=username, password=PASSWORD, role=role)


@pytest.fixture
def candidate(db, django_user_model):
    return _user(django_user_model, "cand", Role.CANDIDATE)


@pytest.fixture
def other_candidate(db, django_user_model):
    return _user(django_user_model, "cand2", Role.CANDIDATE)


@pytest.fixture
def interviewer(db, django_user_model):
    return _user(django_user_model, "interviewer1", Role.INTERVIEWER)


@pytest.fixture
def other_interviewer(db, django_user_model):
    """A second interviewer, for rules about whose interviews one sees."""
    return _user(django_user_model, "interviewer2", Role.INTERVIEWER)


@pytest.fixture
def admin_user(db, django_user_model):
    return _user(django_user_model, "admin1", Role.ADMIN)


@pytest.fixture
def decode_question(db):
    """The small numeric question above, stored as a released question version."""
    from questions.services import question_save_text

    result = question_save_text(DECODE_FLOOR_YAML, origin="file", source_path="questions/bank/roofline/001-test.yaml")
    assert result.version is not None, result.problems
    return result.version


@pytest.fixture
def login_as(client):
    """Log the test client in as a user made by the fixtures above."""

    def login(user):
        client.logout()
        # Not client.login(): it calls authenticate() without a request, which axes'
        # backend refuses (it throttles by the request's address). The login form itself,
        # throttle included, is tested in trainer/tests/test_login_throttle.py.
        assert user.check_password(PASSWORD)
        client.force_login(user)
        return client

    return login


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """Hash the test users' passwords with MD5, as Django's testing docs advise: the
    production hasher (PBKDF2, a million rounds) cost about 0.6 s a user made and 0.5 s a
    password checked, most of many tests' time. What the suite tests of passwords (the
    login form, the throttle, sign-up) does not depend on the hasher's cost; the
    production setting itself is asserted in trainer/tests/test_settings_hashers.py.
    The integration suite overrides this fixture: its servers use the production setting."""
    from django.test.utils import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True, scope="session")
def _in_memory_broker():
    """Unit tests queue into memory; the integration suite runs a real broker and worker."""
    from trainer.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = "memory://"
    yield
    app.conf.broker_url = previous


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (its own browser download cannot work here)."""
    import os

    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: scripts/system-packages installs it")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests
    # make around it are still synchronous and safe.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


KV_FORMULA_YAML = textwrap.dedent(
    """\
    slug: test-kv-per-token
    seed: 10
    title: KV bytes per token (test question)
    topic: kv-cache
    difficulty: 1
    summary: Two tensors per layer per KV head.
    statement: |
      Write the KV-cache bytes per token of a model with $L$ layers.
    parts:
      - id: kv
        kind: formula
        prompt: KV bytes per token?
        symbols:
          L: {description: layers, range: [16, 128], integer: true}
          h: {description: KV heads, range: [1, 16], integer: true}
          d: {description: head dimension, range: [64, 256], integer: true}
          b: {description: bytes per element, range: [1, 4]}
        answer: 2 * L * h * d * b
        mistakes:
          - answer: L * h * d * b
            feedback: Keys and values are both cached.
    hints:
      - Count K and V.
    solution: |
      Keys and values: $2 L h d b$.
    """
)


@pytest.fixture
def kv_formula_question(db):
    from questions.services import question_save_text

    result = question_save_text(KV_FORMULA_YAML, origin="file")
    assert result.version is not None, result.problems
    return result.version


@pytest.fixture(scope="session", autouse=True)
def _live_server_serves_one_request_at_a_time():
    """With SQLite in memory, Django hands the live server the test's own database
    connection, and its threaded server would use that one connection from several
    request threads at once: a page load racing htmx polls then fails with 'cannot open
    savepoint - SQL statements in progress'. Browser tests get a server that handles one
    request at a time (Django sends Connection: close from it, so a kept-alive browser
    connection cannot hold it)."""
    from django.core.servers.basehttp import WSGIServer
    from django.test.testcases import LiveServerThread

    class SerialWSGIServer(WSGIServer):
        def __init__(self, *args, connections_override=None, **kwargs):
            # The server thread already uses the overridden connections (LiveServerThread.run).
            super().__init__(*args, **kwargs)

    original = LiveServerThread.server_class
    LiveServerThread.server_class = SerialWSGIServer
    yield
    LiveServerThread.server_class = original


@pytest.fixture
def grading_worker(transactional_db):
    """A real Celery worker in this thread (solo pool), for browser tests: answers are
    graded off the request, as in production."""
    from celery.contrib.testing.worker import start_worker

    from trainer.celery import app

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        yield


def log_in(page, base_url: str, username: str, password: str = PASSWORD) -> None:
    """Sign in through the login form in a browser page (the throttle's backend refuses
    Django's test-client login, see `login_as`)."""
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base_url}/questions/")
