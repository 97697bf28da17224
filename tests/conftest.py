"""Shared fixtures. Database and Redis come from tests/settings.py (PostgreSQL, a throwaway test database)."""

import os

import pytest
from django.core.management import call_command


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The bundled catalogue, imported once for the session (tests that change it run in transactions)."""
    with django_db_blocker.unblock():
        call_command("import_whitepapers", verbosity=0, stdout=open(os.devnull, "w"))


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
