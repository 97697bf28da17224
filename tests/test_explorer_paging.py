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
    response = client.get("/explore/?page=999")
    assert response.status_code == 302 and response["Location"] == f"/explore/?page={last}"
    page = client.get(response["Location"] + "&lang=en").content.decode()
    assert f"Results {(last - 1) * 100 + 1}–{total} of {total}" in page
    few = client.get("/explore/?engine=postgresql&version=12&family=dedicated&vcpus=64&lang=en").content.decode()
    assert "Download these rows as CSV" in few and "Results" not in few.split('class="result-count"')[1][:80]


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
