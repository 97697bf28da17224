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
