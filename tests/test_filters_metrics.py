"""Every metric and dimension filters (issue 37.2): hot_rows, data_rows, tpm, iops, ro_qps, rw_qps (exact, min_,
max_), edition and deployment, in the one FilterSet of the API, the explorer, compare and sizing.

Expected values from the data files: Alibaba 2019 PPAS (alibaba-2019-06-18-rds.yaml, 2.3 测试结果 PPAS版)
ppas.x8.2xlarge.2 read-write QPS 170955 / 142335 / 123700 at hot data 1亿 / 5亿 / 10亿 (100,000,000 /
500,000,000 / 1,000,000,000 rows), 10亿 test rows; Huawei 2023 SQL Server (huawei-2023-08-03-rds.yaml) single
2014 web 16 vCPU / 64 GB: TPM 1500000, TPS 27000, IOPS 18000; enterprise+standard single 16 / 64: TPS 27500."""

import pytest

pytestmark = pytest.mark.django_db
API = "/api/v1/results/"


def results(client, query):
    response = client.get(f"{API}?{query}&page_size=500")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_it_filters_on_hot_data_and_pgbench_qps(client):
    rows = results(client, "engine=ppas&flavor=ppas.x8.2xlarge.2&hot_rows=100000000")
    assert [(r["hot_rows"], r["rw_qps"]) for r in rows] == [(100000000, 170955)]
    rows = results(client, "engine=ppas&flavor=ppas.x8.2xlarge.2&min_hot_rows=500000000")
    assert sorted(r["rw_qps"] for r in rows) == [123700, 142335]
    rows = results(client, "engine=ppas&flavor=ppas.x8.2xlarge.2&max_rw_qps=142335&min_ro_qps=234482")
    assert [(r["hot_rows"], r["ro_qps"]) for r in rows] == [(500000000, 234482)]
    rows = results(client, "engine=ppas&flavor=ppas.x8.2xlarge.2&data_rows=1000000000&rw_qps=123700")
    assert [r["hot_rows"] for r in rows] == [1000000000]
    assert results(client, "engine=ppas&max_data_rows=999999999&min_data_rows=999999999") == []


def test_it_filters_sql_server_on_tpm_iops_edition_and_deployment(client):
    rows = results(client, "document=huawei-2023-08-03-rds&engine=sqlserver&edition=web&deployment=single&tpm=1500000")
    assert [(r["flavor"]["vcpus"], r["tps"], r["iops"]) for r in rows] == [(16, 27000, 18000)]
    rows = results(client, "document=huawei-2023-08-03-rds&engine=sqlserver&min_tpm=1500000&max_tpm=1500000&deployment=single&min_iops=18000")
    assert {r["edition"] for r in rows} == {"web", "enterprise+standard"}
    assert sorted(r["tps"] for r in rows) == [27000, 27500]


def test_it_says_which_metric_filter_is_bad(client):
    response = client.get(f"{API}?min_hot_rows=abc&max_tpm=-1&iops=1.5")
    assert response.status_code == 400
    text = response.content.decode()
    assert "min_hot_rows" in text and "max_tpm" in text and '"iops"' in text
    assert "Unknown parameter" not in text and "whole number" in text


def test_the_explorer_and_the_schema_know_them(client):
    html = client.get("/explore/?engine=ppas&flavor=ppas.x8.2xlarge.2&hot_rows=100000000&cols=flavor&cols=rw_qps").content.decode()
    assert html.count("<tr data-result=") == 1 and "170955" in html
    schema = client.get("/api/v1/schema/?format=json").json()
    names = {p["name"] for p in schema["paths"][API]["get"]["parameters"]}
    assert {"hot_rows", "min_hot_rows", "max_rw_qps", "tpm", "min_iops", "edition", "deployment"} <= names
