"""Test settings: the machine's PostgreSQL and Redis unless TEST_DATABASE_URL / TEST_REDIS_URL say otherwise.

Set here (not in conftest.py) because pytest-django configures Django before conftest modules load."""

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

os.environ["DATABASE_URL"] = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash")
os.environ["REDIS_URL"] = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

# Under pytest-xdist each process (gw0, gw1, ...) is a checkout of its own on the shared servers: its own test
# database (pytest-django adds the suffix), Redis database (its broker queues and cache), benchmark database and
# temporary directory (the runs' work directories are named by run id, and ids repeat across databases).
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER:
    index = int(XDIST_WORKER.removeprefix("gw"))
    redis = urlsplit(os.environ["REDIS_URL"])
    os.environ["REDIS_URL"] = redis._replace(path=f"/{int(redis.path.strip('/') or 0) - 1 - index}").geturl()
    os.environ["TEST_BENCH_DB"] = f"{os.environ.get('TEST_BENCH_DB', 'perfdash_sb')}_{XDIST_WORKER}"
    tmp = Path(tempfile.gettempdir()) / f"perfdash-tests-{os.environ['TEST_BENCH_DB']}"
    tmp.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again

# Playwright's sync API keeps an event loop in the main thread once a browser has started (the session
# fixture); Django would then refuse ORM calls in every later test. Tests are single-threaded, so allow it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from config.settings import *  # noqa: E402,F401,F403

# Tests create about 85 users: PBKDF2 costs ~0.4 s each, MD5 nothing. Only tests use it (never config.settings).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
