"""Explorer details (issue 21.6): "PPAS 10" in the Version menu is PPAS 10 (not PostgreSQL 10 and both engines);
the CSV includes normalised QPS while it is shown; derived memory ratios are exported in a column saying so, the
contract's first 27 columns unchanged and the export command and the API CSV byte-identical.

Expected values from the data files: Alibaba's MySQL table (alibaba-2019-06-18-rds.yaml) mysql.x8.2xlarge.2,
16 vCPU / 128 GB, no ratio printed: derived 1:8; Huawei 2025 MySQL 5.7 general-enhanced 1:2 8 vCPU / 16 GB
(huawei-2025-10-21-mysql.yaml, 表 3-1) QPS 35360.39 at 20 statements per transaction: x 18 / 20 = 31824.35;
Alibaba's MySQL QPS counts 18 per transaction: mysql.x8.2xlarge.2 QPS 48102 stays 48102.00."""

import csv
import io
import re
from io import StringIO

import pytest
from django.core.management import call_command

from whitepaper.export import EXPORT_COLUMNS

pytestmark = pytest.mark.django_db
CONTRACT = ["vendor", "document", "published", "engine", "version", "family", "memory_ratio", "flavor", "deployment",
            "edition", "vcpus", "memory_gb", "storage", "max_connections", "iops", "tps", "qps", "tpm", "capacity_rows",
            "data_rows", "hot_rows", "ro_qps", "rw_qps", "table", "section", "methodology", "iops_note"]


def rows(response):
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_ppas_10_in_the_version_menu_is_ppas_10(client):
    html = client.get("/explore/?lang=en").content.decode()
    # Alibaba names both only as an example version (issue 36.8): the menu says so.
    assert '<option value="ppas:10">PPAS 10 (example version)</option>' in html
    assert '<option value="postgresql:10">PostgreSQL 10 (example version)</option>' in html
    response = client.get("/explore/?version=ppas%3A10")
    assert response.status_code == 302 and response["Location"] == "/explore/?version=10&engine=ppas"
    page = client.get(response["Location"] + "&lang=en").content.decode()
    assert "PostgreSQL 10" not in re.search(r'<select name="version".*?</select>', page, re.S).group(0)
    assert re.search(r'<option value="10" selected>10 \(example version\)</option>', page)
    assert "Version 10 is published for" not in page
    engines = {row["engine"] for row in rows(client.get("/explore/results.csv?version=10&engine=ppas"))}
    assert engines == {"ppas"}


def test_the_csv_has_normalised_qps_while_it_is_shown(client):
    query = ("engine=mysql&version=5.7&family=general-enhanced&memory_ratio=1:2&vcpus=8&document=huawei-2025-10-21-mysql"
             "&cols=flavor&cols=vcpus&cols=qps&cols=qps_normalised")
    [row] = rows(client.get(f"/explore/results.csv?{query}"))
    assert (row["qps"], row["qps_normalised"]) == ("35360.39", "31824.35")
    without = rows(client.get(f"/explore/results.csv?{query.replace('&cols=qps_normalised', '')}"))
    assert "qps_normalised" not in without[0]


def test_derived_ratios_are_exported_saying_they_are_derived(client):
    [row] = rows(client.get("/explore/results.csv?vendor=alibaba&engine=mysql&flavor=mysql.x8.2xlarge.2"))
    assert (row["memory_ratio"], row["memory_ratio_derived"]) == ("", "1:8")
    assert "qps_normalised" not in row  # not a default column
    everything = rows(client.get("/explore/results.csv?vendor=alibaba&engine=mysql&flavor=mysql.x8.2xlarge.2&columns=all"))
    assert everything[0]["memory_ratio_derived"] == "1:8" and everything[0]["qps_normalised"] == "48102.00"
    huawei = rows(client.get("/explore/results.csv?vendor=huawei&engine=mysql&version=8.0&columns=all"))
    assert huawei and {r["memory_ratio_derived"] for r in huawei} == {""} and all(r["memory_ratio"] for r in huawei)


def test_the_contract_is_kept_and_both_csvs_stay_identical(client):
    assert EXPORT_COLUMNS[:27] == CONTRACT
    assert EXPORT_COLUMNS[-19:-15] == ["qps_normalised", "memory_ratio_derived", "revised_from", "revised_changes"]
    assert EXPORT_COLUMNS[-7:-5] == ["sustained_tps", "latency_bound_ms"]  # issue 35.5, appended
    assert EXPORT_COLUMNS[-5:-1] == ["superseded_by", "superseded_changes", "tps_cv", "client_disturbed"]  # 49.1, 46
    assert EXPORT_COLUMNS[-1:] == ["latency_p95_ms"]  # issue 51.1: a metric declared later is appended
    out = StringIO()
    call_command("export_results", stdout=out)
    api = b"".join(client.get("/api/v1/results/?format=csv").streaming_content).decode()
    assert out.getvalue() == api
    columns = client.get("/api/v1/results/columns/").json()
    assert [f["name"] for f in columns["fields"]][-19:-17] == ["qps_normalised", "memory_ratio_derived"]
