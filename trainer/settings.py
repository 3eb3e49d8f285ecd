"""Settings for the trainer: one module, read from the environment.

With no environment at all this is the embedded mode: SQLite in `var/`, a Celery broker
on the filesystem (`filesystem://`, no server), DEBUG on. Point DATABASE_URL at
PostgreSQL and CELERY_BROKER_URL at Redis and the same code is the production stack.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF

import grading.registry
from trainer.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("TRAINER_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY", "embedded-mode-insecure-key" if DEBUG else "")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "trainer",
    "questions",
    "grading",
    "trainer.interviews",
    "axes",
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as axes requires: it turns a login that its backend refused into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "trainer.urls"
WSGI_APPLICATION = "trainer.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", *grading.registry.template_dirs()],  # each kind's own templates
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "trainer.roles.role_context",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
# Connections persist for a minute (checked before reuse): opening one per request, with
# SQLite's pragmas and Django's function registrations, cost the question page about a
# tenth of its CPU under load (bench/bench_pages.py). DB_CONN_MAX_AGE=0 closes each.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'trainer.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded worker writes verdicts while the web process reads: WAL lets them
    # overlap, IMMEDIATE transactions and a timeout turn lock contention into waiting.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # Tests get a file too: Django's default in-memory test database uses SQLite's shared
    # cache, whose table locks fail at once ("database table is locked") instead of
    # waiting, so a browser test's server and worker threads would race. One file per
    # test process, so two runs in one checkout do not destroy each other's database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-trainer-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# A backstop for request bodies: every answer, note and code field has its own, smaller
# limit with a clear message (AnswerKind.max_answer_chars and the interview services).
DATA_UPLOAD_MAX_MEMORY_SIZE = 512 * 1024

# --- Caches ---------------------------------------------------------------------------
# Only rendered HTML that is the same for everyone on a version and variant (the question
# page's {% cache %} blocks, which use this alias by name): per process, as
# trainer.selectors' rendered-question cache, and as many entries (a lab's statement,
# tables and charts included, can be a few hundred kB). Nothing per user is kept here.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "default"},
    "template_fragments": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "template-fragments",
        "OPTIONS": {"MAX_ENTRIES": 512},
    },
}

# --- Auth -----------------------------------------------------------------------------
# axes' backend goes first: it refuses a locked-out login before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "question-list"
LOGOUT_REDIRECT_URL = "login"

# --- Login throttling (django-axes) ------------------------------------------------------
# Failed logins are counted per username and, separately, per client address, and either
# count at the limit locks: 40 guesses at one account from many addresses, or at many
# accounts from one address, are both stopped. (A nested [["username", "ip_address"]]
# would count the pair only, which a botnet or a username list walks straight past.)
# The lock lifts by itself after the cool-off; a try while locked restarts the wait, so
# hammering never gets through. A successful login forgives that account's failures only
# (trainer.login_throttle). Admins can lift a lock early (`manage.py axes_reset_username`,
# `axes_reset_ip`).
# The address is REMOTE_ADDR: in compose gunicorn faces the clients. Behind a reverse
# proxy every client would share its address: configure axes' AXES_IPWARE_* then.
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOL_OFF_MINUTES", 15))
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = True
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "trainer.login_throttle.AccountResetHandler"
AXES_LOCKOUT_CALLABLE = "trainer.login_throttle.lockout_response"

# --- Static files ---------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static", *grading.registry.static_dirs()]  # and each kind's own
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Celery ---------------------------------------------------------------------------
# Queues are named by the kind of work, so any number of workers on any number of
# machines can join the same broker: CPU graders consume `grading`; a GPU worker
# consumes only `gpu.<its GPU kind>` (gpu.h100, gpu.h200, ...).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_DIR = Path(env_str("CELERY_BROKER_DIR", str(VAR_DIR / "broker")))
if CELERY_BROKER_URL.startswith("filesystem://"):
    (CELERY_BROKER_DIR / "control").mkdir(parents=True, exist_ok=True)  # kombu does not create them
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR),
        "data_folder_out": str(CELERY_BROKER_DIR),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
CELERY_TASK_DEFAULT_QUEUE = "grading"
GRADING_QUEUE = "grading"
# Kernel answers are timed on a GPU: when a GPU pool exists, they go to this queue (e.g.
# gpu.h100; a GPU worker consumes its own, `python -m gpu_runner.devices --queue`). Empty,
# as in the embedded mode, means "grade them here, for correctness, under Triton's interpreter".
GPU_QUEUE = env_str("GPU_QUEUE", "")
# A task is acknowledged only after it ran, and re-delivered if its worker died: an
# accepted answer is never lost. Tasks are idempotent, so a second run is harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery beat (`celery -A trainer beat`, or the embedded worker's --beat): interviews
# whose clock ran out are closed within a minute even if nobody opens them again.
CELERY_BEAT_SCHEDULE = {
    "close-expired-interviews": {"task": "interviews.close_expired", "schedule": 60.0},
    # Attempts queued or running past their kind's deadline were lost (a killed worker,
    # a message the filesystem broker deleted on fetch): queue them again.
    "requeue-stale-attempts": {"task": "grading.requeue_stale", "schedule": float(env_int("REQUEUE_STALE_EVERY", 60))},
}
# Seconds; caps every answer kind's grading deadline (AnswerKind.grading_deadline) when
# set: an operator's (or a test's) way to recover lost attempts sooner. 0: the kinds' own.
GRADING_DEADLINE_CAP = env_int("GRADING_DEADLINE_CAP", 0)
# Each worker also consumes its own direct queue, where it sends itself a heartbeat task
# every WORKER_HEARTBEAT_INTERVAL seconds (trainer.celery.HeartbeatStep); /healthz is 503
# when no worker on the grading queue ran one within WORKER_HEARTBEAT_MAX_AGE.
CELERY_WORKER_DIRECT = True
WORKER_HEARTBEAT_INTERVAL = env_int("WORKER_HEARTBEAT_INTERVAL", 10)
WORKER_HEARTBEAT_MAX_AGE = env_int("WORKER_HEARTBEAT_MAX_AGE", 45)
CELERY_BEAT_SCHEDULE_FILENAME = env_str("CELERY_BEAT_SCHEDULE_FILENAME", str(VAR_DIR / "celerybeat-schedule"))

HEALTHCHECK_BROKER_TIMEOUT = env_int("HEALTHCHECK_BROKER_TIMEOUT", 2)

# --- Content-Security-Policy (django-csp) -----------------------------------------------
# Scripts and stylesheets come only from our own origin: there is no inline <script>,
# style="" or on*= handler in the templates, and htmx runs with allowEval off and its
# indicator styles in app.css (base.html's htmx-config). The one exception is CodeMirror,
# which writes its theme into a <style> element at run time: the page gives the editor's
# script tag the request's nonce and the editor passes it on (frontend/editor), hence
# NONCE in style-src. django-csp sends the nonce only on pages that rendered it.
# Django 5.2's admin (the authoring pages) has no inline script or style either and
# works under this policy unchanged (trainer/tests/test_csp.py checks it in Chromium).
# With DEBUG on, django-htmx's overlay for a failed htmx request shows Django's error
# page without running its scripts (it would eval them); open the failing URL itself to
# see it whole: django-csp leaves DEBUG's 404 and 500 pages without a policy.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

# --- Production hardening --------------------------------------------------------------
if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_CONTENT_TYPE_NOSNIFF = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}

# --- Consistency checks ----------------------------------------------------------------
if not SECRET_KEY:
    raise RuntimeError("SECRET_KEY must be set when DEBUG is off")
if GPU_QUEUE and not GPU_QUEUE.startswith("gpu."):
    raise RuntimeError(f"GPU_QUEUE must name a gpu.<kind> queue, not {GPU_QUEUE!r}")
if not DEBUG and SECRET_KEY.startswith("embedded-mode"):
    raise RuntimeError("the embedded SECRET_KEY must not be used with DEBUG off")
VAR_DIR.mkdir(parents=True, exist_ok=True)
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request otherwise
