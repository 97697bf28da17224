"""Friendly 404 and 500 pages with DEBUG on and off, a favicon, and the engine index /engines/<engine>/."""

import re

import pytest
from django.test import Client, override_settings


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("url", ["/engines/oracle/", "/no-such-page/", "/documents/no-such-document/",
                                 "/engines/mysql/4.0/"])
def test_404_is_a_friendly_page(db, client, debug, url):
    with override_settings(DEBUG=debug):
        response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 404
    assert "Page not found" in html and 'href="/explore/"' in html
    assert "URLconf" not in html and "Using the URLconf" not in html and "Traceback" not in html


@pytest.mark.parametrize("debug", [False, True])
def test_404_in_chinese(db, client, debug):
    with override_settings(DEBUG=debug):
        html = client.get("/no-such-page/?lang=zh-hans").content.decode()
    assert "页面不存在" in html


@pytest.mark.parametrize("debug", [False, True])
def test_500_is_a_friendly_page(db, debug):
    client = Client(raise_request_exception=False)
    with override_settings(DEBUG=debug, ROOT_URLCONF="tests.boom_urls"):
        response = client.get("/boom/")
    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong" in html and "RuntimeError" not in html and "Traceback" not in html


def test_api_keeps_its_json_404(db, client):
    with override_settings(DEBUG=True):
        response = client.get("/api/v1/vendors/no-such-vendor/")
    assert response.status_code == 404 and response["Content-Type"].startswith("application/json")


def test_favicon(db, client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    assert '<link rel="icon" href="/static/favicon.svg"' in client.get("/").content.decode()


def test_engine_index_lists_its_versions_in_version_order_and_its_documents(db, client):
    html = client.get("/engines/postgresql/").content.decode()
    versions = re.findall(r'href="/engines/postgresql/([^/]+)/"', html)
    assert versions == ["9.6", "10", "12", "13", "14", "15"]  # the data files' PostgreSQL versions
    assert 'href="/documents/huawei-2025-10-21-postgresql/"' in html
    assert 'href="/documents/huawei-2025-10-21-mysql/"' not in html
    assert 'href="/engines/mysql/' not in html
    assert 'href="/engines/postgresql/"' in client.get("/").content.decode()
