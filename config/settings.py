"""Settings, read from the environment (django-environ).

With nothing set, the project runs on embedded defaults (SQLite, a filesystem Celery broker, an
in-process cache) so one command starts it on a laptop. Set DJANGO_PRODUCTION=1 (or DEBUG=0 with the
secure settings below) for a deployment; that mode passes `manage.py check --deploy`.
"""

import socket
from pathlib import Path

import environ
from corsheaders.defaults import default_headers as default_cors_headers

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

PRODUCTION = env.bool("DJANGO_PRODUCTION", default=False)
DEBUG = env.bool("DEBUG", default=not PRODUCTION)
# The default key is only for a laptop; production refuses to start without a real one.
SECRET_KEY = env("SECRET_KEY") if PRODUCTION else env(
    "SECRET_KEY", default="django-insecure-dev-only-key-change-me-for-any-real-deployment"
)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / Redoc assets from PyPI (no CDN)
    "django_celery_beat",  # scheduled runs: beat reads its schedule from the database (runs.Schedule)
    "whitepaper",
    "runs",
]

# What each one costs per request: benchmarks/middleware_cost.py (its output: benchmarks/middleware_cost.out.txt).
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",  # nosniff, HSTS, SSL redirect: static files too
    # Static files answered before the rest of the stack, as WhiteNoise's documentation places it.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.request_id.RequestIdMiddleware",  # X-Request-ID on every answer of Django's (pages, API, errors, 304s)
    "config.api_responses.APIJSONErrorsMiddleware",  # any error under /api/ that is not JSON becomes JSON
    "config.api_responses.APIGZipMiddleware",  # gzip under /api/ when asked
    "config.limits.APIBodyLimitMiddleware",  # JSON 413 for an oversized API body, before anything reads it
    # request.htmx: the one way to know a request is htmx (and a history restore, which gets the whole page).
    "django_htmx.middleware.HtmxMiddleware",
    # ?lang= in a URL: taken out of request.GET and remembered in the cookie (config/language.py).
    "config.language.LanguageParamMiddleware",
    # Repeated anonymous catalogue API answers from memory, counted by the rate limit (whitepaper/api/caching.py).
    "whitepaper.api.caching.AnswerMiddleware",
    # Repeated anonymous catalogue pages from memory, like WhiteNoise for static files (whitepaper/pages.py).
    "whitepaper.pages.CataloguePageMiddleware",
    "whitepaper.pages.PageGZipMiddleware",  # inside the page memory: it keeps the gzipped bytes it sends
    "corsheaders.middleware.CorsMiddleware",
    "config.api_headers.APIHeadersMiddleware",  # before sessions: rate-limit headers, no Vary: Cookie for anonymous API answers
    "django.contrib.sessions.middleware.SessionMiddleware",
    "config.language.LocaleMiddleware",  # Django's, plus ?lang= first and the API in English
    # Friendly 404/500 pages with DEBUG on too (config/errors.py); DEBUG off: templates/404.html, 500.html.
    "config.errors.FriendlyErrorPagesMiddleware",
    "config.api_responses.APICommonMiddleware",  # Django's, with a JSON answer for an API path without its slash
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A view that loses the database mid-request: a 503 with Retry-After, never a 500 (config/database_outage.py).
    "config.database_outage.DatabaseOutageMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "runs.context_processors.operator",
                "config.language.language_links",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
# A persistent connection the server closed (restart, pg_terminate_backend) is replaced at the start of
# the next request instead of failing it.
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    # Degrades to "no cache" while Redis is down (config/cache.py): pages render from the database.
    CACHES = {"default": {"BACKEND": "config.cache.ResilientRedisCache", "LOCATION": REDIS_URL,
                          "OPTIONS": {"RETRY_AFTER": env.float("CACHE_RETRY_AFTER_SECONDS", default=5.0)}}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The API's rate-limit counts (config/throttling.py) are shared by every server process: in Redis (the default
# cache) when configured, else in the database's cache table (created by `migrate`), never in
# one process's memory.
API_RATE_LIMIT_CACHE = "default" if REDIS_URL else "rate_limit"
if not REDIS_URL:
    CACHES["rate_limit"] = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "api_rate_limit"}
# On SQLite without Redis (the embedded default) the count is kept in a small SQLite file of its own beside the
# database instead (config/rate_counter.py: one atomic statement, WAL, not synced on each commit; the cache table
# cost a synced write transaction of the main database per request). Empty: the cache above.
_sqlite_name = str(DATABASES["default"]["NAME"]) if DATABASES["default"]["ENGINE"].endswith("sqlite3") else ""
API_RATE_LIMIT_FILE = env("API_RATE_LIMIT_FILE", default="" if REDIS_URL or not _sqlite_name else (
    f"{_sqlite_name}-rate-limit" if _sqlite_name not in ("", ":memory:") and not _sqlite_name.startswith("file:")
    else str(VAR_DIR / "rate-limit.sqlite3")))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en"
# Names as each language writes itself (the switch shows them so on every page).
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LANGUAGE_COOKIE_NAME = "django_language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "staticfiles")
NODE_MODULES = BASE_DIR / "node_modules"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # Front-end libraries come from their npm packages (package.json), installed by scripts/setup.sh.
    ("vendor/htmx", NODE_MODULES / "htmx.org" / "dist"),
    ("vendor/chartjs", NODE_MODULES / "chart.js" / "dist"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Key for encrypting target passwords at rest (Fernet, urlsafe base64 of 32 bytes).
# Development derives one from SECRET_KEY; production must set FIELD_ENCRYPTION_KEY.
FIELD_ENCRYPTION_KEY = env("FIELD_ENCRYPTION_KEY") if PRODUCTION else env("FIELD_ENCRYPTION_KEY", default="")

REST_FRAMEWORK = {
    "DEFAULT_VERSIONING_CLASS": "rest_framework.versioning.NamespaceVersioning",
    "DEFAULT_VERSION": "v1",
    "ALLOWED_VERSIONS": ["v1"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: a request without credentials is a 401 whose WWW-Authenticate names the schemes
        # (DRF answers 403 when the first class is the session, which has no challenge).
        "config.authentication.BearerOrTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["config.permissions.MethodIsAllowed", "rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    # One count per client shared by every server process (config/throttling.py, the `rate_limit` cache).
    "DEFAULT_THROTTLE_CLASSES": ["config.throttling.SharedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"anon": env("API_ANON_RATE", default="600/minute"),
                               "authenticated": env("API_AUTHENTICATED_RATE", default="1200/minute")},
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    # JSON bodies with a size and nesting limit (config/limits.py); form and multipart as DRF's defaults.
    "DEFAULT_PARSER_CLASSES": [
        "config.limits.LimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "config.negotiation.StrictContentNegotiation",
    # JSON only (CSV where an endpoint offers it): every answer under /api/ is JSON, and an unknown ?format=
    # names only what is accepted (the browsable API's `api` was named, and answered HTML).
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
# The reverse proxies in front of gunicorn (addresses or networks, comma-separated): only a request from one
# of them has its X-Forwarded-For read, for the rate limit's client address (config/throttling.py). Empty
# (the default, and docker-compose.yml, whose gunicorn faces clients directly): the connection's address.
API_TRUSTED_PROXIES = env.list("API_TRUSTED_PROXIES", default=[])
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=1024 * 1024)
API_MAX_JSON_DEPTH = env.int("API_MAX_JSON_DEPTH", default=32)
# Django's own limit for form bodies (pages); API bodies are capped by API_MAX_BODY_BYTES above.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
SPECTACULAR_SETTINGS = {
    "TITLE": "RDS performance whitepaper API",
    "DESCRIPTION": "Published database performance results (TPS, QPS, max connections, IOPS) "
    "with provenance, and benchmark runs. The API is English only, whatever Accept-Language says "
    "(the web pages also exist in Chinese).",
    # Semantic version of this schema (bumped on every change; see docs/API-CHANGELOG.md). The URL's
    # /api/v1/ changes only with an incompatible API.
    "VERSION": "3.5.0",
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "config.api.schema_postprocess",
                           "whitepaper.api.views.partial_results_schema",
                           "whitepaper.api.examples.metric_parameter_examples", "config.api_docs.schema_docs",
                           "whitepaper.api.examples.schema_examples"],
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies as components of their own (RunRequest, ScheduleRequest...): the writable fields only, so a
    # generated client's create call does not require the ~40 read-only fields of the answer.
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"MethodologyToolEnum": "whitepaper.models.Methodology.Tool",
                            "MethodologyDifferenceFieldEnum": "whitepaper.api.analysis.DIFFERENCE_FIELDS",
                            "CompareSelectionKindEnum": "whitepaper.api.analysis.SELECTION_KINDS",
                            "ComparisonModeEnum": "whitepaper.api.analysis.COMPARISON_MODES",
                            "RunStateEnum": "runs.models.RunState",
                            "ClientStateEnum": "runs.models.ClientState",
                            # revised_from's and superseded_by's changes share it: the name it had with one of them
                            "ChangeMetricEnum": "whitepaper.api.serializers.CHANGED_METRICS"},
}

CORS_ALLOWED_ORIGIN_REGEXES = [r"^https?://.*$"] if env.bool("CORS_ALLOW_ALL_READS", default=True) else []
CORS_URLS_REGEX = r"^/api/.*$"
CORS_ALLOW_METHODS = ["GET", "HEAD", "OPTIONS"]
CORS_EXPOSE_HEADERS = ["ETag", "Last-Modified", "Retry-After", "Link", "Content-Disposition",
                       "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Deprecation", "Sunset",
                       "X-Request-ID"]
# Browsers revalidate with If-None-Match / If-Modified-Since (a 304) and may send their own request id.
CORS_ALLOW_HEADERS = [*default_cors_headers, "if-none-match", "if-modified-since", "x-request-id"]
# Cache-Control max-age (seconds) of anonymous catalogue API answers; 0: caches revalidate every time (a 304).
API_CACHE_MAX_AGE = env.int("API_CACHE_MAX_AGE", default=0)

# Celery: Redis when REDIS_URL is set, otherwise a filesystem broker that needs no server.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL or "filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    # Everything the embedded broker writes stays under var/ (its default control/ is the current directory).
    _broker_dir = VAR_DIR / "celery-broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir),
        "data_folder_out": str(_broker_dir),
        "processed_folder": str(VAR_DIR / "celery-processed"),
        "control_folder": str(VAR_DIR / "celery-control"),
        "store_processed": False,
    }
# A launch while the broker is down must not hang the request: a few quick retries, then the run stays
# queued and the reconciler sends it later (runs/services.py).
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.25, "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECTION_TIMEOUT", default=2.0)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# The runs app's pages the catalogue links to (whitepaper/links.py): the project's wiring names them, the catalogue,
# a layer below runs, never does (tests/test_import_graph.py). Left out, the catalogue shows no such link.
CATALOGUE_LINKS = {"run_record": "runs:run-record", "reproduce": "runs:run-new"}

# Benchmark runs (runs app): one queue per client pool (Target.queue, default "benchmarks"); run each
# benchmark worker with -c 1 (one benchmark at a time per client). The reconciler runs on "celery".
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {"runs.run_benchmark": {"queue": "benchmarks"}, "runs.reconcile_runs": {"queue": "celery"},
                      "runs.scheduled_run": {"queue": "celery"}}
# Beat keeps its schedule in the database (django-celery-beat): the reconciler above and runs.Schedule rows.
CELERY_BEAT_SCHEDULER = env("CELERY_BEAT_SCHEDULER", default="django_celery_beat.schedulers:DatabaseScheduler")
# A schedule "keeps failing" when its last RUNS_SCHEDULE_FAILING_AFTER runs all failed.
RUNS_SCHEDULE_FAILING_AFTER = env.int("RUNS_SCHEDULE_FAILING_AFTER", default=3)
CELERY_BEAT_SCHEDULE = {
    "reconcile-runs": {"task": "runs.reconcile_runs", "schedule": env.float("RUNS_RECONCILE_EVERY_SECONDS", default=15.0)},
}
if CELERY_BROKER_URL.startswith("redis"):
    # Longer than any benchmark, so Redis never hands a running benchmark's message to a second worker.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=12 * 3600),
                                       "socket_connect_timeout": 2}
RUNS_HEARTBEAT_SECONDS = env.float("RUNS_HEARTBEAT_SECONDS", default=2.0)
RUNS_STALE_AFTER_SECONDS = env.float("RUNS_STALE_AFTER_SECONDS", default=40.0)
RUNS_CANCEL_POLL_SECONDS = env.float("RUNS_CANCEL_POLL_SECONDS", default=0.5)
RUNS_LOG_FLUSH_SECONDS = env.float("RUNS_LOG_FLUSH_SECONDS", default=1.0)
RUNS_WAIT_RETRY_SECONDS = env.int("RUNS_WAIT_RETRY_SECONDS", default=2)
# A tool whose target went away may retry or wait: it is stopped this long after its first error line.
RUNS_ERROR_GRACE_SECONDS = env.float("RUNS_ERROR_GRACE_SECONDS", default=3.0)
# A blip of the dashboard's own database (its connections terminated, a restart) while a run measures: the worker
# retries its writes for this long, the tool going on meanwhile; only a database gone longer fails the run.
RUNS_DATABASE_GRACE_SECONDS = env.float("RUNS_DATABASE_GRACE_SECONDS", default=30.0)
# A target that stops answering without an error (network cut, host frozen: the tool just waits): after this long
# without a transaction (at least two report intervals) the worker opens a new connection; if that gets no answer
# within RUNS_STALL_PROBE_SECONDS, the tool is stopped and the run fails, its tables named for a later drop.
RUNS_STALL_SECONDS = env.float("RUNS_STALL_SECONDS", default=3.0)
RUNS_STALL_PROBE_SECONDS = env.int("RUNS_STALL_PROBE_SECONDS", default=3)
RUNS_TIME_MARGIN_SECONDS = env.int("RUNS_TIME_MARGIN_SECONDS", default=30)
RUNS_PREPARE_TIME_LIMIT_SECONDS = env.int("RUNS_PREPARE_TIME_LIMIT_SECONDS", default=6 * 3600)
# Queued runs (runs.tasks.reconcile_runs): untouched this long -> queued again if the broker lost the
# message; on a queue no live worker consumes for this long -> failed, naming the queue.
RUNS_REQUEUE_AFTER_SECONDS = env.float("RUNS_REQUEUE_AFTER_SECONDS", default=30.0)
RUNS_UNCLAIMED_FAIL_SECONDS = env.float("RUNS_UNCLAIMED_FAIL_SECONDS", default=600.0)
# Multi-client runs (runs/clients.py): at most RUNS_MAX_CLIENT_HOSTS client hosts per run, or per pool (queue)
# RUNS_POOL_CLIENT_HOSTS="benchmarks=4,zone-b=2"; every client must reach the barrier within
# RUNS_CLIENT_ARRIVAL_SECONDS; a client silent for RUNS_CLIENT_LOST_SECONDS is lost (the run fails);
# the agreed start lies RUNS_CLIENT_START_LEAD_SECONDS after the last arrival.
RUNS_MAX_CLIENT_HOSTS = env.int("RUNS_MAX_CLIENT_HOSTS", default=4)
RUNS_POOL_CLIENT_HOSTS = {k: int(v) for k, v in env.dict("RUNS_POOL_CLIENT_HOSTS", default={}).items()}
RUNS_CLIENT_ARRIVAL_SECONDS = env.float("RUNS_CLIENT_ARRIVAL_SECONDS", default=120.0)
RUNS_CLIENT_LOST_SECONDS = env.float("RUNS_CLIENT_LOST_SECONDS", default=15.0)
RUNS_CLIENT_START_LEAD_SECONDS = env.float("RUNS_CLIENT_START_LEAD_SECONDS", default=1.0)
# The name a worker records as its client host (default: the machine's host name).
RUNS_CLIENT_HOST = env("RUNS_CLIENT_HOST", default="") or socket.gethostname()
# Regressions (runs/history.py): a run's TPS more than THRESHOLD % below the median of the last WINDOW
# comparable runs, and below their noise band (mean - 2 standard deviations), judged once MIN_RUNS exist.
# Webhooks (whitepaper/webhooks.py, docs/api.md "Webhooks"): attempts per delivery, the exponential backoff between
# them (base, 2 x base, 4 x base... capped), failed deliveries in a row before a hook is disabled, each attempt's
# time-out, and whether receivers on private/loopback addresses are allowed (off: a hook cannot reach the intranet).
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=5)
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", default=30.0)
WEBHOOK_RETRY_MAX_SECONDS = env.float("WEBHOOK_RETRY_MAX_SECONDS", default=3600.0)
WEBHOOK_DISABLE_AFTER_FAILURES = env.int("WEBHOOK_DISABLE_AFTER_FAILURES", default=5)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# The authority of the Atom feed's entry ids (tag:<authority>,2026:document:<slug>): a domain this deployment
# owns; the ids stay the same whatever host name the feed is read through.
FEED_TAG_AUTHORITY = env("FEED_TAG_AUTHORITY", default=next(
    (h for h in ALLOWED_HOSTS if h and h[0] not in "*.[" and not h[0].isdigit()), "localhost"))
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=False)
# Deliveries go straight to the receiver; through this proxy (http://host:port) only when set. The worker's
# http_proxy / https_proxy environment is never used for them (whitepaper/webhooks.py).
WEBHOOK_PROXY = env("WEBHOOK_PROXY", default="")
# The site's public address (https://perf.example.com), for absolute URLs in webhook payloads; empty: paths only.
SITE_URL = env("SITE_URL", default="").rstrip("/")
# A run whose client host's 1-minute load average per core exceeded this as it started is "disturbed" (runs/sampling.py):
# left out of verdicts unless asked for, published only with an acknowledgement.
RUNS_CLIENT_LOAD_LIMIT_PER_CORE = env.float("RUNS_CLIENT_LOAD_LIMIT_PER_CORE", default=1.0)
# The verdicts' practical threshold (runs/stats.py): a change smaller than this % is not called faster, slower or a
# regression, and a change inside it whose whole interval fits is "equivalent". HammerDB's CI uses 2.5 %.
RUNS_PRACTICAL_THRESHOLD_PCT = env.float("RUNS_PRACTICAL_THRESHOLD_PCT", default=2.5)
# A regression is judged against the last RUNS_REGRESSION_WINDOW earlier results of the set-up, at least
# RUNS_REGRESSION_MIN_RUNS of them (a prediction interval from fewer says nothing).
RUNS_REGRESSION_WINDOW = env.int("RUNS_REGRESSION_WINDOW", default=10)
RUNS_REGRESSION_MIN_RUNS = env.int("RUNS_REGRESSION_MIN_RUNS", default=5)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"broker_outage": {"()": "config.log_filters.BrokerOutage"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # While the broker is down, beat's "Message Error" is one line a minute, not a stack trace per tick.
    "loggers": {"celery.beat": {"filters": ["broker_outage"]}},
}

if PRODUCTION:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
