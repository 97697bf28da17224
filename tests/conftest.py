"""Shared fixtures. Database and Redis come from tests/settings.py (PostgreSQL, a throwaway test database)."""

import os

import pytest
from django.core.management import call_command

from .tiers import TIERS, Plan, changed_files, tier, tiers_of
from testbed.runs_support import seed_profiles_for_tests


def import_catalogue():
    call_command("import_whitepapers", verbosity=0, stdout=open(os.devnull, "w"))


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The bundled catalogue, imported once for the session (tests that change it run in transactions) and
    kept in a snapshot that puts it back after a flush."""
    with django_db_blocker.unblock():
        import_catalogue()
        catalogue_snapshot.take()
    yield
    with django_db_blocker.unblock():
        end_other_sessions()


def end_other_sessions():
    """Before the test database is dropped: the sessions still on it are this process's own leftovers (a live
    server's request thread that kept its connection for a browser's keep-alive; every worker and server of a
    test's own has stopped by now). PostgreSQL would wait 5 s for them and then refuse to drop the database.
    From a connection of its own to the server's maintenance database: this process's Django connection may
    itself have been ended by the last fault drill (they terminate every session on the test database), and
    Django checks a connection's health only at a request's start."""
    import psycopg
    from django.db import connection, connections

    db = connection.settings_dict
    connections.close_all()
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"],
                         password=db["PASSWORD"] or None, dbname="postgres", autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                      [db["NAME"]])


# --- The catalogue, kept for the tests that read it --------------------------------------------------
# A transactional test (a worker process must see its rows) ends with a flush that empties every table,
# the imported catalogue too. Before the next test that uses the database, the catalogue's tables are
# copied back from a snapshot taken after the session's import (milliseconds; importing again takes
# seconds): the same rows with the same ids, whatever ran before. Transactional tests run last, so
# few tests pay even that.

class CatalogueSnapshot:
    SCHEMA = "perfdash_catalogue_snapshot"  # beside the test database's tables; Django's flush never sees it

    def __init__(self):
        self.flushed = False

    def models(self):
        from django.apps import apps

        return list(apps.get_app_config("whitepaper").get_models(include_auto_created=True))

    def take(self):
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(f"DROP SCHEMA IF EXISTS {self.SCHEMA} CASCADE; CREATE SCHEMA {self.SCHEMA}")
            for model in self.models():
                table = model._meta.db_table
                cursor.execute(f'CREATE TABLE {self.SCHEMA}."{table}" AS TABLE "{table}"')

    def restore(self):
        from django.core.management.color import no_style
        from django.db import connection, transaction

        from whitepaper.freshness import forget_stamp

        models = self.models()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")  # foreign keys: rows go back in any order
            for model in models:
                table = model._meta.db_table
                cursor.execute(f'DELETE FROM "{table}"')
                cursor.execute(f'INSERT INTO "{table}" SELECT * FROM {self.SCHEMA}."{table}"')
            for statement in connection.ops.sequence_reset_sql(no_style(), models):
                cursor.execute(statement)
        forget_stamp()
        self.flushed = False


catalogue_snapshot = CatalogueSnapshot()


def is_transactional(item):
    marker = item.get_closest_marker("django_db")
    return bool((marker and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])))
                or {"transactional_db", "live_server"} & set(item.fixturenames))


def pytest_addoption(parser):
    parser.addoption("--changed", action="store_true",
                     help="only the tests that load a file changed since main (tests/tiers.py, scripts/test.sh)")
    parser.addoption("--one-case", action="store_true",
                     help="each test function once: its first parameter set (scripts/test.sh --quick)")


def pytest_sessionstart(session):
    """--changed says what changed and what it needs, once (the xdist controller, or the one process)."""
    if session.config.getoption("changed") and not hasattr(session.config, "workerinput"):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter:
            reporter.write_line(Plan(changed_files()).summary())


def pytest_collection_modifyitems(config, items):
    """Markers from the fixtures a test uses (tests/tiers.py: `tool`, `fault`, `browser`, `fuzz`; each of them and
    a fixture's own `slow` also `slow`, so the developers' loop `-m "not slow"` leaves them to the whole suite);
    with --one-case, each test function's first parameter set only; with --changed, only the tests a change needs.
    Then files with the most slow tests first, so that the suite's processes (-n, --dist loadfile: a file is one
    unit) end together rather than one finishing a long file alone; within a file, transactional tests after the
    others (each group keeps its order)."""
    item_tiers = {}
    for item in items:
        item_tiers[item] = tiers_of(item) | {m.name for m in item.iter_markers() if m.name in TIERS}
        for name in sorted(item_tiers[item] | ({"slow"} if item_tiers[item] else set())):
            item.add_marker(getattr(pytest.mark, name))
    if config.getoption("one_case"):
        first = {}
        for item in items:
            first.setdefault(item.nodeid.split("[", 1)[0], item)  # the test function, without its parameters
        keep = set(first.values())
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = [item for item in items if item in keep]
    if config.getoption("changed"):
        plan = Plan(changed_files())
        wanted = {item for item in items if plan.wants(item, item_tiers[item])}
        config.hook.pytest_deselected(items=[item for item in items if item not in wanted])
        items[:] = [item for item in items if item in wanted]
    first_seen, slow = {}, {}
    for item in items:
        first_seen.setdefault(item.path, len(first_seen))
        slow[item.path] = slow.get(item.path, 0) + bool(item.get_closest_marker("slow"))
    items.sort(key=lambda item: (-slow[item.path], first_seen[item.path], is_transactional(item)))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the test's fixtures (a non-transactional test's `db` transaction would roll the copy back)."""
    if catalogue_snapshot.flushed and (item.get_closest_marker("django_db")
                                       or {"db", "transactional_db", "catalogue_server"} & set(item.fixturenames)):
        from pytest_django.plugin import blocking_manager_key

        with item.config.stash[blocking_manager_key].unblock():
            catalogue_snapshot.restore()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    if is_transactional(item):
        catalogue_snapshot.flushed = True


@pytest.fixture(autouse=True)
def _clear_cache():
    from django.core.cache import cache

    from whitepaper.api.caching import finished_answers, local_answers

    cache.clear()
    local_answers.clear()  # the API's answers kept in this process (keyed by the stamp, which a rollback returns)
    finished_answers.clear()  # and the finished answers (AnswerMiddleware)
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
def server(catalogue_server):
    """The read-only browser tests' site."""
    return catalogue_server


@pytest.fixture(scope="session")
@tier("browser")
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


@pytest.fixture(scope="session")
@tier("slow")
def migrated_sqlite(tmp_path_factory):
    """An empty SQLite database file with every migration applied, once per session process (tests/embedded.py):
    tests copy it (embedded.copy_of) rather than migrate one of their own."""
    from .embedded import migrated_sqlite

    return migrated_sqlite(tmp_path_factory.mktemp("migrated-sqlite"))


@pytest.fixture(scope="session")
@tier("slow")
def embedded_sqlite(tmp_path_factory, migrated_sqlite):
    """The embedded default (no configuration: SQLite), migrated and loaded with the bundled catalogue in a
    subprocess, once per session process (tests/embedded.py); tests only read it."""
    from .embedded import EmbeddedSQLite, copy_of

    directory = tmp_path_factory.mktemp("embedded-sqlite")
    return EmbeddedSQLite(directory, path=copy_of(migrated_sqlite, directory), catalogue=True)


# --- Runs: real database users, committed rows, one Celery worker for the session ----------------

@pytest.fixture(scope="session")
def bench_users():
    from testbed.runs_support import DB_USER, PASSWORD, ensure_database_users

    ensure_database_users()
    return {"user": DB_USER, "password": PASSWORD}


@pytest.fixture
def committed(transactional_db, bench_users):
    """Rows written in the test are committed, so the worker process sees them (flushed afterwards)."""
    seed_profiles_for_tests()
    yield


@pytest.fixture(scope="session")
@tier("tool")
def worker(django_db_setup, bench_users):
    """One benchmark worker (queues celery and benchmarks) for every test that needs one: it reads each
    run from the database, so tests share it; a test that kills a worker starts its own
    (runs_support.start_worker on a queue of its own)."""
    from testbed.runs_support import purge_queues, start_worker, stop_worker

    purge_queues()
    proc = start_worker()
    yield proc
    stop_worker(proc)
    purge_queues()


# --- Personas: one set for every test module (like healthchecks' alice, bob and charlie) ---------

PERSONA_PASSWORD = "x-Persona-pass-9431"


def _persona(username, staff=False, operator=False):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username, password=PERSONA_PASSWORD, is_staff=staff, is_superuser=staff)
    if operator:
        user.groups.add(Group.objects.get_or_create(name="benchmark operators")[0])
    return user


def _logged_in(user):
    from django.test import Client

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
    return _logged_in(_persona("carol-customer"))


@pytest.fixture
def operator_user(db):
    """A member of the `benchmark operators` group: launches and publishes their own runs. (In a transactional
    test, `db` is the transaction-less database the test asked for.)"""
    return _persona("oscar-operator", operator=True)


@pytest.fixture
def operator(operator_user):
    """The operator, logged in (a test client)."""
    return _logged_in(operator_user)


@pytest.fixture
def operator_api(operator_user):
    """The operator through the API with a token, as scripts and CI jobs call it."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator_user).key}")
    return client


@pytest.fixture
def staff_user(db):
    """Staff (and superuser): the admin, every run, retracting."""
    return _persona("stella-staff", staff=True)


@pytest.fixture
def staff(staff_user):
    """Staff, logged in (a test client)."""
    return _logged_in(staff_user)


@pytest.fixture
def profiles(db):
    """The bundled benchmark profiles, by slug."""
    from runs.models import BenchmarkProfile

    seed_profiles_for_tests()  # the quick ones without their warm-up step (testbed.runs_support)
    return {p.slug: p for p in BenchmarkProfile.objects.all()}
