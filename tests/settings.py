"""Test settings: the machine's PostgreSQL and Redis unless TEST_DATABASE_URL / TEST_REDIS_URL say otherwise.

Set here (not in conftest.py) because pytest-django configures Django before conftest modules load."""

import os

os.environ["DATABASE_URL"] = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash")
os.environ["REDIS_URL"] = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

# Playwright's sync API keeps an event loop in the main thread once a browser has started (the session
# fixture); Django would then refuse ORM calls in every later test. Tests are single-threaded, so allow it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from config.settings import *  # noqa: E402,F401,F403

# Tests create about 85 users: PBKDF2 costs ~0.4 s each, MD5 nothing. Only tests use it (never config.settings).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
