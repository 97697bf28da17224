"""Shared fixtures. Database and Redis come from tests/settings.py (PostgreSQL, a throwaway test database)."""

import os

import pytest
from django.core.management import call_command


def import_catalogue():
    call_command("import_whitepapers", verbosity=0, stdout=open(os.devnull, "w"))


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The bundled catalogue, imported once for the session (tests that change it run in transactions)."""
    with django_db_blocker.unblock():
        import_catalogue()


# --- The catalogue, kept for the tests that read it --------------------------------------------------
# A transactional test (a worker process must see its rows) ends with a flush that empties every table,
# the imported catalogue too. The transactional tests run last (below), and a test that reads the
# database after a flush gets the catalogue imported again first: one import per flush that matters,
# not one per module.

def is_transactional(item):
    marker = item.get_closest_marker("django_db")
    return bool((marker and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])))
                or {"transactional_db", "live_server"} & set(item.fixturenames))


def pytest_collection_modifyitems(config, items):
    """Transactional tests after the others (a stable sort: each group keeps its file order). Browser tests
    count as slow: the developers' loop (-m "not slow") leaves them to the whole suite."""
    items.sort(key=is_transactional)
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


_catalogue = {"flushed": False}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the test's fixtures (the `db` fixture's transaction would roll an import back)."""
    if _catalogue["flushed"] and not is_transactional(item) and (
            item.get_closest_marker("django_db") or {"db", "catalogue_server"} & set(item.fixturenames)):
        from pytest_django.plugin import blocking_manager_key

        with item.config.stash[blocking_manager_key].unblock():
            import_catalogue()
        _catalogue["flushed"] = False


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    if is_transactional(item):
        _catalogue["flushed"] = True


@pytest.fixture(autouse=True)
def _clear_cache():
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session")
def catalogue_server(django_db_setup, django_db_blocker):
    """A live server over the session's committed catalogue, for read-only browser tests. (pytest-django's
    `live_server` needs transactional tests, whose flush would empty the catalogue for later tests.)"""
    from pytest_django.live_server_helper import LiveServer

    with django_db_blocker.unblock():
        live = LiveServer("localhost")
        live._live_server_modified_settings.enable()
        yield live.url
        live._live_server_modified_settings.disable()
        live.stop()


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


# --- Runs: real database users, committed rows, one Celery worker for the session ----------------

@pytest.fixture(scope="session")
def bench_users():
    from .runs_support import DB_USER, PASSWORD, ensure_database_users

    ensure_database_users()
    return {"user": DB_USER, "password": PASSWORD}


@pytest.fixture
def committed(transactional_db, bench_users):
    """Rows written in the test are committed, so the worker process sees them (flushed afterwards)."""
    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    yield


@pytest.fixture(scope="session")
def worker(django_db_setup, bench_users):
    """One benchmark worker (queues celery and benchmarks) for every test that needs one: it reads each
    run from the database, so tests share it; a test that kills a worker starts its own
    (runs_support.start_worker on a queue of its own)."""
    from .runs_support import purge_queues, start_worker, stop_worker

    purge_queues()
    proc = start_worker()
    yield proc
    stop_worker(proc)
    purge_queues()


# --- Personas: one set for every test module (like healthchecks' alice, bob and charlie) ---------

PERSONA_PASSWORD = "x-Persona-pass-9431"


def _persona_client(username, staff=False, operator=False):
    from django.contrib.auth.models import Group, User
    from django.test import Client

    user = User.objects.create_user(username, password=PERSONA_PASSWORD, is_staff=staff, is_superuser=staff)
    if operator:
        user.groups.add(Group.objects.get_or_create(name="benchmark operators")[0])
    client = Client()
    client.force_login(user)
    client.user = user
    return client


@pytest.fixture
def anonymous(db):
    """A visitor who is not logged in (the customers browsing the catalogue)."""
    from django.test import Client

    return Client()


@pytest.fixture
def customer(db):
    """Logged in, with no privileges: sees what anonymous visitors see, never cached for others."""
    return _persona_client("carol-customer")


@pytest.fixture
def operator(db):
    """A member of the `benchmark operators` group: launches and publishes their own runs."""
    return _persona_client("oscar-operator", operator=True)


@pytest.fixture
def staff(db):
    """Staff (and superuser): the admin, every run, retracting."""
    return _persona_client("stella-staff", staff=True)
