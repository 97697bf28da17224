"""The edition diff (two documents of one vendor publishing the same engine versions), checked against
counts read straight from the data files (whitepaper/data/*.yaml), not from the code under test; and
its use on the engine version pages and in the explorer ("same in 2023 and 2025")."""

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "whitepaper" / "data"
HUAWEI_2023 = "huawei-2023-08-03-rds"
HUAWEI_2018 = "huawei-2018-12-11-rds"
MYSQL_2025 = "huawei-2025-10-21-mysql"
PG_2025 = "huawei-2025-10-21-postgresql"
METRICS = ["max_connections", "iops", "tps", "qps", "tpm", "capacity_rows", "data_rows", "hot_rows", "ro_qps", "rw_qps"]
ROW_LEVEL = ["engine", "version", "family", "memory_ratio", "deployment", "edition", "storage"]


def rows_of(slug, engine):
    """{(version, family, ratio): {(deployment, edition, vcpus, memory_gb, spec code): numbers}} of one file."""
    doc = yaml.load((DATA / f"{slug}.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    tables = {}
    for table in doc["tables"]:
        for row in table["rows"]:
            values = dict(zip(table["columns"], row))
            cell = {k: values.get(k, table.get(k, "")) for k in ROW_LEVEL}
            if cell["engine"] != engine:
                continue
            numbers = {}
            for m in METRICS:
                raw = values.get(m, "")
                try:
                    numbers[m] = Decimal(raw)
                except InvalidOperation:
                    numbers[m] = raw or None  # "disk" (IOPS depends on the disk) compares as itself
            key = (cell["deployment"], cell["edition"], int(values["vcpus"]), int(values["memory_gb"]),
                   values.get("flavor", ""))
            group = tables.setdefault((cell["version"], cell["family"], cell["memory_ratio"]), {})
            assert key not in group, (slug, key)  # one row per flavour in a table
            group[key] = numbers
    return tables


def expected_counts(older, newer, engine):
    old, new = rows_of(older, engine), rows_of(newer, engine)
    shared = {v for v, _f, _r in old} & {v for v, _f, _r in new}
    counts = {}
    for group in set(old) | set(new):
        if group[0] not in shared:
            continue
        o, n = old.get(group, {}), new.get(group, {})
        counts[group] = {
            "same": sum(1 for k in n if k in o and o[k] == n[k]),
            "changed": sum(1 for k in n if k in o and o[k] != n[k]),
            "new": sum(1 for k in n if k not in o),
            "gone": sum(1 for k in o if k not in n),
        }
    return counts


def page_counts(client, older, newer):
    response = client.get(f"/editions/{older}/{newer}/")
    assert response.status_code == 200
    sections = re.findall(r'<section class="edition-table" data-engine="([^"]*)" data-version="([^"]*)"\s+'
                          r'data-family="([^"]*)" data-memory-ratio="([^"]*)"\s+data-same="(\d+)" data-changed="(\d+)" '
                          r'data-new="(\d+)" data-gone="(\d+)"', response.content.decode())
    return {(v, f, r): {"same": int(s), "changed": int(c), "new": int(n), "gone": int(g)}
            for _e, v, f, r, s, c, n, g in sections}, response


@pytest.mark.parametrize("newer, engine", [(MYSQL_2025, "mysql"), (PG_2025, "postgresql")])
def test_it_counts_same_changed_new_and_gone_per_table_as_the_data_files_say(client, newer, engine):
    expected = expected_counts(HUAWEI_2023, newer, engine)
    shown, _response = page_counts(client, HUAWEI_2023, newer)
    assert shown == expected
    totals = {s: sum(c[s] for c in expected.values()) for s in ("same", "changed", "new", "gone")}
    # Both editions print many identical rows and some different ones: the diff is not trivial.
    assert totals["same"] > 0 and totals["changed"] + totals["new"] + totals["gone"] > 0


def test_it_names_versions_only_one_edition_publishes_and_shows_percent_changes(client):
    _shown, response = page_counts(client, HUAWEI_2023, PG_2025)
    body = response.content.decode()
    assert "PostgreSQL 9.6" in body and "Not compared here" in body  # 2023 only
    # A changed row shows the older number struck out, the newer one and the % change.
    assert re.search(r"<del>[\d.]+</del> → <ins>[\d.]+</ins> <span class=\"pct\">\([+-]?[\d.]+%\)</span>", body)


def test_the_older_document_first_and_other_vendors_are_not_editions(client):
    response = client.get(f"/editions/{MYSQL_2025}/{HUAWEI_2023}/")
    assert response.status_code == 302 and response["Location"].endswith(f"/editions/{HUAWEI_2023}/{MYSQL_2025}/")
    assert client.get(f"/editions/alibaba-2019-06-18-rds/{MYSQL_2025}/").status_code == 404
    assert client.get(f"/editions/nope/{MYSQL_2025}/").status_code == 404


def test_2018_against_2023_compares_the_versions_both_publish(client):
    shown, _response = page_counts(client, HUAWEI_2018, HUAWEI_2023)
    for engine in ("mysql", "sqlserver"):
        expected = expected_counts(HUAWEI_2018, HUAWEI_2023, engine)
        assert {k: v for k, v in shown.items() if k in expected} == expected


def test_the_diff_page_reads_a_fixed_number_of_queries(client, settings):
    from whitepaper.pages import local_pages

    settings.CATALOGUE_STAMP_TTL = 0
    counts = []
    for newer in (PG_2025, MYSQL_2025):
        local_pages.clear()
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/editions/{HUAWEI_2023}/{newer}/").status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1] <= 4


def test_the_explorer_shows_the_newest_edition_and_says_same_in_2023_and_2025(client):
    # Huawei 2025 reprints the 5.7 dedicated tables of 2023 unchanged (1:4: 6 rows, 1:8: 4 rows): by
    # default each appears once, the 2025 row, saying so; all editions are one click away.
    html = client.get("/explore/?engine=mysql&version=5.7&family=dedicated&vendor=huawei").content.decode()
    assert len(re.findall(r'<tr data-result="\d+">', html)) == 10
    assert html.count('<span class="same-in">same in 2023 and 2025</span>') == 10
    assert 'href="?engine=mysql&amp;version=5.7&amp;family=dedicated&amp;vendor=huawei&amp;latest=false"' in html
    everything = client.get("/explore/?engine=mysql&version=5.7&family=dedicated&vendor=huawei&latest=false")
    assert len(re.findall(r'<tr data-result="\d+">', everything.content.decode())) == 20
    # A chosen document lists all of its own rows.
    own = client.get(f"/explore/?document={HUAWEI_2023}&engine=mysql&version=5.7&family=dedicated").content.decode()
    assert len(re.findall(r'<tr data-result="\d+">', own)) == 10


def test_document_and_engine_pages_link_their_edition_diffs(client):
    html = client.get(f"/documents/{PG_2025}/").content.decode()
    assert f'href="/editions/{HUAWEI_2023}/{PG_2025}/"' in html
    assert f"/editions/{HUAWEI_2023}/{MYSQL_2025}/" not in html  # the MySQL document is not an edition of this one
    html = client.get("/engines/mysql/5.6/").content.decode()
    assert f'href="/editions/{HUAWEI_2023}/{MYSQL_2025}/"' in html and f'href="/editions/{HUAWEI_2018}/{HUAWEI_2023}/"' in html


def test_versions_another_edition_publishes_link_to_that_comparison_and_the_two_titles_differ(client):
    """Issue 21.4: the 2023 RDS paper against the 2025 MySQL paper used to say "Only the edition of Aug. 3, 2023
    publishes PostgreSQL 12…15" although the 2025 PostgreSQL paper publishes them too (whitepaper/data/
    huawei-2025-10-21-postgresql.yaml: PostgreSQL 12, 13, 14, 15); and both 2023 -> 2025 pages had one title."""
    mysql = client.get(f"/editions/{HUAWEI_2023}/{MYSQL_2025}/?lang=en").content.decode()
    postgresql = client.get(f"/editions/{HUAWEI_2023}/{PG_2025}/?lang=en").content.decode()
    assert "Only the edition" not in mysql
    assert (f'<a href="/editions/{HUAWEI_2023}/{PG_2025}/">PostgreSQL 12, PostgreSQL 13, PostgreSQL 14, PostgreSQL 15: '
            "compared with the edition of Oct. 21, 2025</a>") in mysql
    titles = [re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip() for html in (mysql, postgresql)]
    assert titles[0] != titles[1]
    assert titles == ["What changed in MySQL from 2023 to 2025 · Huawei Cloud",
                      "What changed in PostgreSQL from 2023 to 2025 · Huawei Cloud"]


def test_newer_document_is_one_order_everywhere(client):
    """Issue 21.4: "newer" is the later date, then the later slug (queries.document_newness), on every page. The
    two 2025-10-21 papers tie on the date: the PostgreSQL paper's slug sorts later, so it is the newer one and
    every newest-first list names it first (the home page sorted by slug ascending, the menus by date only)."""
    home = client.get("/?lang=en").content.decode()
    explorer = client.get("/explore/?lang=en").content.decode()
    compare = client.get("/compare/?lang=en").content.decode()
    for html in (home, explorer, compare):
        assert html.index(PG_2025) < html.index(MYSQL_2025) < html.index(HUAWEI_2023) < html.index(HUAWEI_2018)
