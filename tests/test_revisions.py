"""Revised rows say so (issue 36.1): the explorer, its CSV, the export and the API's `revised_from`.

Expected values from the documents: PostgreSQL 12 dedicated, 64 vCPU / 256 GB (1:4), TPS 10929.30 and QPS 218608.04
in the 2023-08-03 RDS whitepaper (000, huawei-2023-08-03-rds.yaml), 8839.4 and 176804.32 in the 2025-10-21
PostgreSQL whitepaper (003, 表 2-3): (8839.4 - 10929.30) / 10929.30 = -19.12 % -> -19.1 %; QPS
(176804.32 - 218608.04) / 218608.04 = -19.12 % -> -19.1 %. 1:8, 64 vCPU / 512 GB: 7633.83 -> 12032.16, +57.6 %.
PostgreSQL 13 general is printed the same in both: not revised."""

import csv
import io
import re

import pytest

pytestmark = pytest.mark.django_db
PG12_DEDICATED = "engine=postgresql&version=12&family=dedicated"


def csv_rows(response):
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def explorer_row(html, needle):
    return next(r for r in re.findall(r"<tr data-result=.*?</tr>", html, re.S) if needle in r)


def test_it_marks_a_revised_row_in_the_explorer(client):
    html = client.get(f"/explore/?{PG12_DEDICATED}&vcpus=64&lang=en").content.decode()
    row_14 = explorer_row(html, ">256<")
    assert "TPS revised from 10929.30 in 2023, -19.1 %" in row_14
    assert "QPS revised from 218608.04 in 2023, -19.1 %" in row_14
    row_18 = explorer_row(html, ">512<")
    assert "TPS revised from 7633.83 in 2023, +57.6 %" in row_18
    zh = client.get(f"/explore/?{PG12_DEDICATED}&vcpus=64&lang=zh-hans").content.decode()
    assert "由 2023 年的 10929.30 修订，-19.1 %" in explorer_row(zh, ">256<")
    same = client.get("/explore/?engine=postgresql&version=13&family=general&lang=en").content.decode()
    assert "revised from" not in same and "same in 2023 and 2025" in same


def test_it_writes_the_revision_in_the_explorer_csv_and_the_export(client):
    [row] = csv_rows(client.get(f"/explore/results.csv?{PG12_DEDICATED}&vcpus=64&memory_ratio=1:4"))
    assert row["document"] == "huawei-2025-10-21-postgresql"
    assert row["revised_from"] == "huawei-2023-08-03-rds"
    assert row["revised_changes"] == "tps 10929.30 -> 8839.4 (-19.1 %); qps 218608.04 -> 176804.32 (-19.1 %)"
    api = csv_rows(client.get(f"/api/v1/results/?{PG12_DEDICATED}&vcpus=64&format=csv"))
    by_document = {(r["document"], r["memory_ratio"]): r for r in api}
    assert by_document[("huawei-2025-10-21-postgresql", "1:8")]["revised_changes"].startswith(
        "tps 7633.83 -> 12032.16 (+57.6 %)")
    assert by_document[("huawei-2023-08-03-rds", "1:4")]["revised_from"] == ""  # the oldest edition revises nothing


def test_it_gives_revised_from_on_the_api_result(client):
    body = client.get(f"/api/v1/results/?{PG12_DEDICATED}&vcpus=64&memory_ratio=1:4&latest=true").json()
    [result] = body["results"]
    revision = result["revised_from"]
    assert (revision["document"], revision["published"]) == ("huawei-2023-08-03-rds", "2023-08-03")
    tps = next(c for c in revision["changes"] if c["metric"] == "tps")
    assert (tps["old"], tps["new"], tps["change_percent"]) == (10929.30, 8839.4, -19.1)
    older = client.get(revision["result"]).json()
    assert older["tps"] == 10929.30 and older["revised_from"] is None
    assert client.get(result["url"]).json()["revised_from"] == revision  # the single result says the same
    unchanged = client.get("/api/v1/results/?engine=postgresql&version=13&family=general&latest=true").json()
    assert unchanged["results"] and all(r["revised_from"] is None for r in unchanged["results"])


def test_an_older_row_says_what_the_newer_edition_printed(client):
    """Issue 49.1: the 2023 row (TPS 10929.30, QPS 218608.04) says the 2025 edition prints 8839.4 / 176804.32, -19.1 %,
    on the document page, the explorer with all editions, the flavour page, the CSV and the API. The 2025 row, the
    newest, says nothing of the kind; PostgreSQL 13 general (the same in both) neither."""
    doc = client.get("/documents/huawei-2023-08-03-rds/?lang=en").content.decode()
    row = next(r for r in re.findall(r"<tr data-result=.*?</tr>", doc, re.S) if ">10929.30" in r)
    assert "(2025 edition: 8839.4, -19.1 %)" in row and "(2025 edition: 176804.32, -19.1 %)" in row
    newest = client.get("/documents/huawei-2025-10-21-postgresql/?lang=en").content.decode()
    assert 'class="revised superseded"' not in newest
    zh = client.get("/documents/huawei-2023-08-03-rds/?lang=zh-hans").content.decode()
    assert "2025 年版：8839.4，-19.1 %" in zh

    html = client.get(f"/explore/?{PG12_DEDICATED}&vcpus=64&memory_ratio=1:4&latest=false&lang=en").content.decode()
    old = explorer_row(html, "2023-08-03")
    assert "the 2025 edition prints TPS 8839.4, -19.1 %; QPS 176804.32, -19.1 %" in old
    assert "the 2025 edition prints" not in explorer_row(html, "2025-10-21")

    pk = client.get(f"/api/v1/results/?{PG12_DEDICATED}&vcpus=64&memory_ratio=1:4&latest=true").json()["results"][0]["flavor"]["id"]
    flavour = client.get(f"/flavors/{pk}/?lang=en").content.decode()
    assert "the 2025 edition prints TPS 8839.4, -19.1 %" in flavour

    rows = csv_rows(client.get(f"/explore/results.csv?{PG12_DEDICATED}&vcpus=64&memory_ratio=1:4&latest=false"))
    by_document = {r["document"]: r for r in rows}
    assert by_document["huawei-2023-08-03-rds"]["superseded_by"] == "huawei-2025-10-21-postgresql"
    assert by_document["huawei-2023-08-03-rds"]["superseded_changes"] == (
        "tps 10929.30 -> 8839.4 (-19.1 %); qps 218608.04 -> 176804.32 (-19.1 %)")
    assert by_document["huawei-2025-10-21-postgresql"]["superseded_by"] == ""

    body = client.get(f"/api/v1/results/?{PG12_DEDICATED}&vcpus=64&memory_ratio=1:4&latest=false").json()
    by_doc = {r["document"]["slug"]: r for r in body["results"]}
    later = by_doc["huawei-2023-08-03-rds"]["superseded_by"]
    assert (later["document"], later["published"]) == ("huawei-2025-10-21-postgresql", "2025-10-21")
    tps = next(c for c in later["changes"] if c["metric"] == "tps")
    assert (tps["old"], tps["new"], tps["change_percent"]) == (10929.30, 8839.4, -19.1)
    assert by_doc["huawei-2025-10-21-postgresql"]["superseded_by"] is None
    same = client.get("/api/v1/results/?engine=postgresql&version=13&family=general&latest=false").json()["results"]
    assert same and all(r["superseded_by"] is None for r in same)
