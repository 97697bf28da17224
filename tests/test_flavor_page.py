"""A page per flavour (issue 36.4): /flavors/<id>/ (the API's flavour id) with every published figure of every
edition and methodology, its revision history, the same size elsewhere, links to documents and tables, and its
JSON twin /api/v1/flavors/<id>/; the explorer's rows link to it. A fixed number of queries.

Expected values from the data files: Huawei's PostgreSQL dedicated 64 vCPU / 256 GB (1:4) flavour prints, for
PostgreSQL 12, TPS 10929.30 in the 2023-08-03 RDS whitepaper and 8839.4 in the 2025-10-21 PostgreSQL whitepaper
(-19.1 %), and PostgreSQL 13, 14, 15 in both; Alibaba's ppas.x8.2xlarge.2 (16 vCPU / 128 GB) read-write QPS 170955 /
142335 / 123700 at hot data 1亿 / 5亿 / 10亿."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from whitepaper.pages import local_pages

pytestmark = pytest.mark.django_db


def flavor_id(client, query):
    results = client.get(f"/api/v1/results/?{query}").json()["results"]
    ids = {r["flavor"]["id"] for r in results}
    assert len(ids) == 1, ids
    return ids.pop()


def test_it_shows_every_edition_the_revision_and_the_same_size(client):
    pk = flavor_id(client, "engine=postgresql&version=12&family=dedicated&vcpus=64&memory_ratio=1:4")
    html = client.get(f"/flavors/{pk}/?lang=en").content.decode()
    rows = re.findall(r'<tr data-result=.*?</tr>', html.split("The same size elsewhere")[0], re.S)
    assert any("10929.30" in r and "PostgreSQL 12" in r for r in rows)
    assert any("8839.4" in r and "TPS revised from 10929.30 in 2023, -19.1 %" in r for r in rows)
    assert len([r for r in rows if "PostgreSQL 13" in r]) == 2  # both editions
    history = html.split("Revision history")[1].split("The same size elsewhere")[0]
    assert "TPS revised from 10929.30 in 2023, -19.1 %" in history
    assert 'href="/documents/huawei-2023-08-03-rds/#table-' in html and f'href="/api/v1/flavors/{pk}/"' in html
    zh = client.get(f"/flavors/{pk}/?lang=zh-hans").content.decode()
    assert "由 2023 年的 10929.30 修订，-19.1 %" in zh
    ppas = client.get(f"/flavors/{flavor_id(client, 'engine=ppas&flavor=ppas.x8.2xlarge.2')}/?lang=en").content.decode()
    same = ppas.split("The same size elsewhere", 1)[1]
    assert "Huawei Cloud" in same and re.search(r'href="/flavors/\d+/"', same)


def test_its_json_twin_has_the_same_rows(client):
    pk = flavor_id(client, "engine=ppas&flavor=ppas.x8.2xlarge.2")
    body = client.get(f"/api/v1/flavors/{pk}/").json()
    assert body["html_url"].endswith(f"/flavors/{pk}/")
    assert sorted((r["hot_rows"], r["rw_qps"]) for r in body["results"]) == [
        (100000000, 170955), (500000000, 142335), (1000000000, 123700)]
    assert all(r["revised_from"] is None for r in body["results"])
    assert body["same_size"] and all(s["flavor"]["id"] != pk for s in body["same_size"])
    assert all((s["flavor"]["vcpus"], s["flavor"]["memory_gb"]) == (16, 128) for s in body["same_size"])
    schema = client.get("/api/v1/schema/?format=json").json()
    assert "same_size" in schema["components"]["schemas"]["FlavorDetail"]["properties"]
    assert client.get("/api/v1/flavors/999999999/").status_code == 404
    assert client.get("/flavors/999999999/").status_code == 404


def test_the_explorer_rows_link_to_their_flavour(client):
    pk = flavor_id(client, "engine=ppas&flavor=ppas.x8.2xlarge.2")
    html = client.get("/explore/?engine=ppas&flavor=ppas.x8.2xlarge.2").content.decode()
    rows = re.findall(r"<tr data-result=.*?</tr>", html, re.S)
    assert rows and all(f'href="/flavors/{pk}/"' in r for r in rows)


def test_it_reads_a_fixed_number_of_queries(client, settings):
    settings.CATALOGUE_STAMP_TTL = 0
    counts = []
    for query in ("engine=postgresql&version=12&family=dedicated&vcpus=64&memory_ratio=1:4",
                  "engine=ppas&flavor=ppas.x8.2xlarge.2"):
        pk = flavor_id(client, query)
        local_pages.clear()  # rendered, not answered from this process's memory of an earlier test's visit
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/flavors/{pk}/").status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1] <= 6, counts


def test_compare_rows_and_chart_points_link_to_the_flavour_page(client):
    # Huawei 2023 MySQL 5.7 and 8.0 dedicated 1:4 (huawei-2023-08-03-rds.yaml): 2 vCPU / 8 GB is one flavour of each.
    series = ("engine%3Dmysql%26version%3D{v}%26family%3Ddedicated%26memory_ratio%3D1%3A4"
              "%26document%3Dhuawei-2023-08-03-rds")
    html = client.get(f"/compare/?sel={series.format(v='5.7')}&sel={series.format(v='8.0')}&lang=en").content.decode()
    two = flavor_id(client, "engine=mysql&version=5.7&family=dedicated&memory_ratio=1:4&vcpus=2"
                            "&document=huawei-2023-08-03-rds")
    row = re.search(r"<tr><td data-label=\"vCPUs\">2</td><td data-label=\"Memory \(GB\)\">8</td>(.*?)</tr>", html, re.S)
    assert row and re.findall(r'href="/flavors/(\d+)/"', row.group(1)) == [str(two), str(two)], row and row.group(1)
    # the chart's points carry their flavour's page (drawn points open it; its data table links it)
    spec = re.search(r'<script id="chart-compare-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    assert f'"url": "/flavors/{two}/"' in spec
    # single flavours: each row's label links to its flavour
    ids = [r["id"] for r in client.get("/api/v1/results/?engine=mysql&version=8.0&family=dedicated&memory_ratio=1:4"
                                       "&document=huawei-2023-08-03-rds&vcpus=2").json()["results"]]
    single = client.get(f"/compare/?sel={ids[0]}&sel={ids[0]}&lang=en").content.decode()
    table = re.search(r'<table class="compare-table">.*?</table>', single, re.S).group(0)
    assert re.findall(r'<th scope="row"><a href="/flavors/(\d+)/">', table) == [str(two), str(two)]


@pytest.mark.parametrize("address, query", [
    ("/flavors/alibaba/rds.mysql.c1.xlarge/", "engine=mysql&flavor=rds.mysql.c1.xlarge"),
    ("/flavors/huawei/dedicated/64vcpu-256gb/", "engine=postgresql&version=12&family=dedicated&vcpus=64&memory_ratio=1:4"),
])
def test_a_flavour_has_a_readable_address_and_keeps_its_number(client, address, query):
    """Issue 49.9: a flavour page by vendor and spec code (Alibaba's rds.mysql.c1.xlarge, 8 vCPU / 32 GB), or by
    vendor, family and size where the document prints no spec code (Huawei's dedicated 64 vCPU / 256 GB); the page
    by number is the same page and names its readable address."""
    pk = flavor_id(client, query)
    by_name = client.get(f"{address}?lang=en")
    assert by_name.status_code == 200
    by_number = client.get(f"/flavors/{pk}/?lang=en").content.decode()
    assert f'class="readable-address" href="{address}"' in by_number
    h1 = re.compile(r"<h1>(.*?)</h1>", re.S)
    assert h1.search(by_name.content.decode()).group(1) == h1.search(by_number).group(1)
    assert client.get("/flavors/alibaba/no.such.code/").status_code == 404
    assert client.get("/flavors/huawei/dedicated/3vcpu-5gb/").status_code == 404
