"""The catalogue's rules, each defined once (whitepaper/queries.py, converters.py, freshness.py), seen
through every surface: the explorer, its CSV, the API and its CSV."""

import csv
import io
import re
from decimal import Decimal

import pytest

from whitepaper.models import Engine, EngineVersion, PublishedResult

pytestmark = pytest.mark.django_db

API = "/api/v1"
# The rows without a TPS: the Alibaba 2019 document's pgbench tables (PPAS 18 rows, PostgreSQL 17 rows)
# print read-only / read-write QPS and no TPS.
NO_TPS = 18 + 17
ALL_ROWS = 172 + 49 + 40 + 74 + 107  # the table rows of the five source documents


@pytest.fixture(autouse=True)
def fresh_stamp(settings):
    settings.CATALOGUE_STAMP_TTL = 0


def explorer_ids(html):
    return [int(x) for x in re.findall(r'<tr data-result="(\d+)">', html)]


def explorer_all_ids(client, url):
    """Every page of the explorer's rows, following its "next" links."""
    ids = []
    while url:
        html = client.get(url).content.decode()
        ids += explorer_ids(html)
        following = re.search(r'<a rel="next" href="([^"]+)"', html)
        url = "/explore/" + following.group(1).replace("&amp;", "&") if following else None
    return ids


def streamed(response):
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def tps_of(ids):
    tps = dict(PublishedResult.objects.filter(pk__in=ids).values_list("pk", "tps"))
    return [tps[i] for i in ids]


# --- Missing numbers sort last in both directions -------------------------------------------------

@pytest.mark.parametrize("sort", ["-tps", "tps"])
def test_it_puts_rows_without_the_number_last_in_the_explorer(anonymous, sort):
    values = tps_of(explorer_all_ids(anonymous, f"/explore/?sort={sort}&latest=false"))
    assert len(values) == ALL_ROWS
    assert values[-NO_TPS:] == [None] * NO_TPS and None not in values[:-NO_TPS]
    present = values[:-NO_TPS]
    assert present == sorted(present, reverse=sort.startswith("-"))


@pytest.mark.parametrize("sort", ["-tps", "tps"])
def test_it_puts_rows_without_the_number_last_in_the_explorer_csv(anonymous, sort):
    rows = streamed(anonymous.get(f"/explore/results.csv?sort={sort}&latest=false"))
    cells = [r["tps"] for r in rows]
    assert len(cells) == ALL_ROWS and cells[-NO_TPS:] == [""] * NO_TPS and "" not in cells[:-NO_TPS]
    numbers = [Decimal(c) for c in cells[:-NO_TPS]]
    assert numbers == sorted(numbers, reverse=sort.startswith("-"))


@pytest.mark.parametrize("ordering", ["-tps", "tps"])
def test_it_puts_rows_without_the_number_last_in_the_api_and_its_csv(anonymous, ordering):
    body = anonymous.get(f"{API}/results/", {"ordering": ordering, "page_size": 500}).json()
    values = [r["tps"] for r in body["results"]]
    assert values[-NO_TPS:] == [None] * NO_TPS and None not in values[:-NO_TPS]
    assert values[:-NO_TPS] == sorted(values[:-NO_TPS], reverse=ordering.startswith("-"))
    cells = [r["tps"] for r in streamed(anonymous.get(f"{API}/results/", {"ordering": ordering, "format": "csv"}))]
    assert cells[-NO_TPS:] == [""] * NO_TPS and "" not in cells[:-NO_TPS]


def test_it_sorts_the_explorer_and_the_api_by_the_same_keys(anonymous):
    # One vocabulary: the explorer's columns are API ordering keys too (vendor, family, table ...).
    for key in ("vendor", "family", "memory_ratio", "table", "deployment"):
        assert anonymous.get(f"{API}/results/", {"ordering": key}).status_code == 200
    assert anonymous.get(f"{API}/results/", {"ordering": "colour"}).status_code == 400


# --- Document order ----------------------------------------------------------------------------------

def test_it_lists_in_document_order_everywhere_by_default(anonymous):
    # Document order: documents oldest first (2018-12-11, 2019-06-18, 2023-08-03, then the two of
    # 2025-10-21 by slug: -mysql before -postgresql), then tables and rows as printed.
    expected_documents = ["huawei-2018-12-11-rds", "alibaba-2019-06-18-rds", "huawei-2023-08-03-rds",
                          "huawei-2025-10-21-mysql", "huawei-2025-10-21-postgresql"]
    api = anonymous.get(f"{API}/results/", {"page_size": 500}).json()["results"]
    assert len(api) == ALL_ROWS
    explorer = explorer_all_ids(anonymous, "/explore/?latest=false")  # every edition, page after page
    assert [r["id"] for r in api] == explorer
    # The explorer's default: each flavour's newest edition only, the API's latest=true, same order.
    newest = anonymous.get(f"{API}/results/", {"page_size": 500, "latest": "true"}).json()["results"]
    assert explorer_all_ids(anonymous, "/explore/") == [r["id"] for r in newest] != explorer
    keys = [(r["document"]["slug"], r["table"]["position"], r["position"]) for r in api]
    assert list(dict.fromkeys(k[0] for k in keys)) == expected_documents
    order = {slug: i for i, slug in enumerate(expected_documents)}
    assert keys == sorted(keys, key=lambda k: (order[k[0]], k[1], k[2]))
    assert keys[0] == ("huawei-2018-12-11-rds", 1, 1)


# --- Not stated ("-") --------------------------------------------------------------------------------

def test_it_accepts_version_dash_like_family_dash(anonymous):
    # Every document names its engine versions: no result has version "-" (an empty list, not an error).
    version = anonymous.get(f"{API}/results/", {"version": "-"})
    assert version.status_code == 200 and version.json()["count"] == 0
    # SQL Server rows name no family: 23 rows (2018: 6, 2023: 17).
    family = anonymous.get(f"{API}/results/", {"family": "-"})
    assert family.status_code == 200 and family.json()["count"] == 6 + 17
    assert anonymous.get("/explore/?version=-").status_code == 200


def test_it_maps_dash_in_urls_to_a_version_not_stated(anonymous):
    unnamed = EngineVersion.objects.create(engine=Engine.objects.get(slug="mysql"), version="")
    assert unnamed.get_absolute_url() == "/engines/mysql/-/"
    assert anonymous.get("/engines/mysql/-/").status_code == 200
    body = anonymous.get(f"{API}/versions/mysql/-/").json()
    assert body["version"] == "" and body["url"].endswith("/api/v1/versions/mysql/-/")
    assert anonymous.get(f"{API}/versions/mysql/9.9/").status_code == 404


def test_it_keeps_the_newest_row_per_variant_including_rows_without_a_family(anonymous):
    # SQL Server: 23 rows; one variant (2014, 8 vCPU / 32 GB, single instance, web) is in both the 2018
    # and the 2023 document, so `latest` keeps 22 (the 2023 row of that one).
    body = anonymous.get(f"{API}/results/", {"engine": "sqlserver", "latest": "true", "page_size": 100}).json()
    assert body["count"] == 22
    both = [r for r in body["results"] if (r["version"], r["flavor"]["vcpus"], r["flavor"]["memory_gb"],
                                           r["deployment"], r["edition"]) == ("2014", 8, 32, "single", "web")]
    assert [r["document"]["slug"] for r in both] == ["huawei-2023-08-03-rds"]


# --- htmx --------------------------------------------------------------------------------------------

def test_it_answers_a_history_restore_request_with_the_whole_page(anonymous):
    partial = anonymous.get("/explore/?engine=ppas", HTTP_HX_REQUEST="true").content.decode()
    restore = anonymous.get("/explore/?engine=ppas", HTTP_HX_REQUEST="true",
                            HTTP_HX_HISTORY_RESTORE_REQUEST="true").content.decode()
    assert "<html" not in partial and "<html" in restore and 'id="filters"' in restore
    assert explorer_ids(partial) == explorer_ids(restore) and len(explorer_ids(restore)) == 18  # PPAS: 18 rows
