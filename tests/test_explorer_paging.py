"""Explorer details (issue 36.7): a total count, a page past the last one sends the reader to the last page, an
honest download label, the CSV says "depends on disk" where the screen does, and a TPS per vCPU column.

Expected values: the total is the API's count of the same filter (latest=true, the explorer's default); the 2025
PostgreSQL whitepaper (huawei-2025-10-21-postgresql.yaml) prints IOPS as "depends on the EVS disk" for every row;
PostgreSQL 12 dedicated 64 vCPU 1:4 TPS 8839.4 / 64 = 138.115625 -> 138.12 per vCPU."""

import csv
import io
import re

import pytest

pytestmark = pytest.mark.django_db


def csv_rows(client, url):
    return list(csv.DictReader(io.StringIO(b"".join(client.get(url).streaming_content).decode())))


def test_it_counts_the_rows_and_says_what_the_download_holds(client):
    total = client.get("/api/v1/results/?latest=true&page_size=1").json()["count"]
    assert total > 200
    html = client.get("/explore/?lang=en").content.decode()
    assert f"Results 1–100 of {total}" in html
    assert f"Download all {total} rows as CSV" in html
    link = re.search(r'class="csv-link" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert len(csv_rows(client, link)) == total
    last = -(-total // 100)
    response = client.get("/explore/?page=999&lang=en")  # the last page, saying so (issue 49.10)
    assert response.status_code == 200
    page = response.content.decode()
    assert f"Results {(last - 1) * 100 + 1}–{total} of {total}" in page
    assert f"There is no page 999: these results end at page {last}, shown here." in page
    few = client.get("/explore/?engine=postgresql&version=12&family=dedicated&vcpus=64&lang=en").content.decode()
    assert "Download these rows as CSV" in few and "Results" not in few.split('class="result-count"')[1][:80]


@pytest.mark.parametrize("asked", ["0", "-1", "abc"])
def test_a_page_that_is_not_a_number_says_so(client, asked):
    """Issue 49.10: page 1 is shown, and the page says the value asked for was not a page number."""
    html = client.get(f"/explore/?page={asked}&lang=en").content.decode()
    assert f"“{asked}” is not a page number (pages are numbered from 1): page 1 is shown." in html
    assert "Results 1–100 of" in html


def test_a_cursor_that_cannot_be_read_says_so(client):
    html = client.get("/explore/?page=2&after=not-a-cursor&lang=en").content.decode()
    assert "The position in this link could not be read" in html and "page 2 is shown by its number" in html
    assert "Results 101–200 of" in html
    plain = client.get("/explore/?page=2&lang=en").content.decode()
    assert "page-notice" not in plain


def test_the_csv_says_depends_on_disk_where_the_screen_does(client):
    query = "document=huawei-2025-10-21-postgresql&engine=postgresql&version=12&family=dedicated&cols=vcpus&cols=iops"
    html = client.get(f"/explore/?{query}&lang=en").content.decode()
    assert 'data-col="iops">depends on disk' in html
    rows = csv_rows(client, f"/explore/results.csv?{query}")
    assert rows and all(r["iops"] == "" and r["iops_note"] == "depends on disk" for r in rows)


def test_it_has_a_tps_per_vcpu_column(client):
    html = client.get("/explore/?engine=postgresql&version=12&family=dedicated&vcpus=64&memory_ratio=1:4"
                      "&cols=vcpus&cols=tps&cols=tps_per_core&lang=en").content.decode()
    assert re.findall(r'<th scope="col" data-col="(\w+)"', html) == ["vcpus", "tps", "tps_per_core"]
    assert '<td data-col="tps_per_core">138.12</td>' in html
    assert 'value="tps_per_core" checked' in html and ">TPS per vCPU<" in html


def _walk(client, url, rel):
    """Follow the explorer's `rel` links from `url`: [(url, query count, row ids)] page by page."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from whitepaper.pages import local_pages

    pages = []
    while url:
        cache.clear()
        local_pages.clear()
        with CaptureQueriesContext(connection) as ctx:
            html = client.get(url).content.decode()
        pages.append((url, len(ctx), [int(x) for x in re.findall(r'<tr data-result="(\d+)">', html)]))
        link = re.search(rf'<a rel="{rel}" href="([^"]+)"', html)
        url = "/explore/" + link.group(1).replace("&amp;", "&") if link else None
    return pages


def _expected_order(sort):
    """Every vendor-published row in the explorer's order, worked out here from the rows' own values: document
    order is the document's date, then its slug, the table's and the row's printed positions; a sort key puts
    rows without the value last in either direction; ties in import order (id)."""
    from whitepaper.models import PublishedResult

    rows = list(PublishedResult.objects.visible().select_related("table__document", "flavor"))
    if not sort:
        return [r.pk for r in sorted(rows, key=lambda r: (r.table.document.published, r.table.document.slug,
                                                          r.table.position, r.position, r.pk))]
    name = sort.lstrip("-")
    value = (lambda r: r.flavor.vcpus) if name == "vcpus" else (lambda r: getattr(r, name))
    with_value = sorted((r for r in rows if value(r) is not None), key=lambda r: r.pk)
    with_value.sort(key=value, reverse=sort.startswith("-"))  # stable: ties keep id order
    return [r.pk for r in with_value] + sorted(r.pk for r in rows if value(r) is None)


@pytest.mark.parametrize("sort", ["", "-tps", "tpm", "vcpus"])
def test_next_and_previous_links_walk_every_row_once_by_cursor_with_the_same_queries(client, settings, sort):
    """Issue 39.2: Next and Previous carry the edge row's place (after= / before=, a cursor), read from the index at
    any depth; following them lists every row once in the explorer's order, and every page reads the same queries."""
    settings.CATALOGUE_STAMP_TTL = 0
    start = "/explore/?latest=false" + (f"&sort={sort}" if sort else "")
    forward = _walk(client, start, "next")
    assert len(forward) >= 3
    assert all("after=" in url for url, _n, _ids in forward[1:]), [url for url, _n, _ids in forward]
    assert [pk for _url, _n, ids in forward for pk in ids] == _expected_order(sort)
    assert len({n for _url, n, _ids in forward}) == 1, [n for _url, n, _ids in forward]
    backward = _walk(client, forward[-1][0], "prev")
    assert [ids for _url, _n, ids in backward] == [ids for _url, _n, ids in reversed(forward)]
    assert all("before=" in url for url, _n, _ids in backward[1:-1]) and "before=" not in backward[-1][0]
    assert len({n for _url, n, _ids in backward}) == 1
    # The same page by its number alone (a typed link) and a cursor not made by the server: the same rows, by offset.
    third = forward[2]
    by_number = _walk_one(client, f"{start}&page=3")
    forged = _walk_one(client, f"{start}&page=3&after=eyJvIjpbXSwidiI6WyIiLDFdfQ:forged")
    assert by_number == forged == third[2]


def _walk_one(client, url):
    return [int(x) for x in re.findall(r'<tr data-result="(\d+)">', client.get(url).content.decode())]


def test_past_a_cap_it_says_more_than_and_the_last_pages_count_exactly(client, monkeypatch):
    """Issue 39.2: the count reads at most EXPLORER_COUNT_AHEAD rows after the page (its cost then stays the same at
    any catalogue size), and says so ("of more than"); near the end it is exact. The total is the API's count."""
    from django.core.cache import cache

    from whitepaper import explorer
    from whitepaper.pages import local_pages

    monkeypatch.setattr(explorer, "EXPLORER_COUNT_AHEAD", 50)
    cache.clear()  # pages rendered with the usual cap by the tests before
    local_pages.clear()
    total = client.get("/api/v1/results/?latest=true&page_size=1").json()["count"]
    assert total > 200
    first = client.get("/explore/?lang=en").content.decode()
    assert "Results 1–100 of more than 150" in first and "Download every matching row as CSV" in first
    last = -(-total // 100)
    end = client.get(f"/explore/?page={last}&lang=en").content.decode()
    assert f"Results {(last - 1) * 100 + 1}–{total} of {total}" in end
    before_last = client.get(f"/explore/?page={last - 1}&lang=en").content.decode()
    following = total - (last - 1) * 100
    expected = (f"of more than {(last - 1) * 100 + 50}" if following > 50 else f"of {total}")
    assert f"Results {(last - 2) * 100 + 1}–{(last - 1) * 100} {expected}" in before_last
