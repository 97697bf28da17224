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


def test_explorer_csv_filename_says_what_was_filtered_and_bom_is_an_option(db, client):
    response = client.get("/explore/results.csv?engine=mysql&version=8.0&min_vcpus=16&sort=-tps&cols=tps")
    assert response["Content-Disposition"] == \
        'attachment; filename="published-results_engine-mysql_version-8.0_min_vcpus-16.csv"'
    plain = b"".join(response.streaming_content)
    assert plain.startswith(b"tps\n")  # the visible columns (cols=tps)
    bom = b"".join(client.get("/explore/results.csv?engine=mysql&version=8.0&min_vcpus=16&sort=-tps&cols=tps&bom=true")
                   .streaming_content)
    assert bom == b"\xef\xbb\xbf" + plain  # the same bytes after the UTF-8 byte order mark
    assert client.get("/explore/results.csv")["Content-Disposition"] == 'attachment; filename="published-results.csv"'


def test_explorer_rows_link_to_their_source_table_and_document(db, client):
    from whitepaper.models import PublishedResult

    html = client.get("/explore/?engine=ppas&cols=document&cols=tps&cols=table").content.decode()
    ids = [int(i) for i in re.findall(r'<tr data-result="(\d+)">', html)]
    assert ids
    for result in PublishedResult.objects.filter(pk__in=ids).select_related("table__document"):
        row = re.search(rf'<tr data-result="{result.pk}">(.*?)</tr>', html, re.S).group(1)
        assert f'href="/documents/{result.table.document.slug}/#table-{result.table.position}"' in row
        assert f'href="/documents/{result.table.document.slug}/" title="' in row


def test_explorer_compare_this_filter_keeps_vendors_apart(db, client):
    from urllib.parse import parse_qs, urlsplit

    from html import unescape

    html = client.get("/explore/?engine=mysql&min_vcpus=8").content.decode()
    href = unescape(re.search(r'class="compare-series-link" href="([^"]+)"', html).group(1))
    sels = sorted(parse_qs(urlsplit(href).query)["sel"])
    assert sels == ["engine=mysql&vendor=alibaba", "engine=mysql&vendor=huawei"]  # MySQL: both vendors publish
    page = client.get(href).content.decode()
    assert "Alibaba" in page and "Huawei" in page
    # One vendor chosen: one series.
    html = client.get("/explore/?engine=mysql&vendor=huawei").content.decode()
    href = unescape(re.search(r'class="compare-series-link" href="([^"]+)"', html).group(1))
    assert parse_qs(urlsplit(href).query)["sel"] == ["engine=mysql&vendor=huawei"]
