"""Sizing offers every metric a document publishes for the engine, named as the export's columns, and states
the data size each figure was measured at (issue 21.2).

Expected values from whitepaper/data/alibaba-2019-06-18-rds.yaml, the PPAS table (2.3 测试结果 PPAS版): it
prints read-only and read-write QPS only, each flavour at several hot-data sizes; rds.ppas.st.h43 (60 vCPU,
470 GB, dedicated host) 672072 read-only QPS at 1亿 hot rows and 648919 at 5亿; the largest dedicated
flavours (32 vCPU) reach 416760 at most, so a 600,000 target is answered by the host only. Huawei's MySQL 8.0
rows were measured on 64 tables x 10,000,000 rows (huawei-2025-10-21-mysql.yaml, methodologies)."""

import pytest

pytestmark = pytest.mark.django_db
API = "/api/v1/sizing/"


def test_ppas_read_only_qps_reaches_the_target_with_its_data_size(client):
    body = client.get(f"{API}?engine=ppas&metric=ro_qps&target=600000").json()
    assert body["metric"] == "ro_qps" and body["unit"] == "queries per second"
    answers = [(a["result"]["flavor"]["spec_code"], a["printed"], a["data_size"]) for a in body["answers"]]
    assert answers == [("rds.ppas.st.h43", "672072", "100,000,000 hot rows"),
                       ("rds.ppas.st.h43", "648919", "500,000,000 hot rows")]
    html = client.get("/sizing/?engine=ppas&metric=ro_qps&target=600000&lang=en").content.decode()
    assert "672072" in html and "100,000,000 hot rows" in html and "No published flavour" not in html
    zh = client.get("/sizing/?engine=ppas&metric=ro_qps&target=600000&lang=zh-hans").content.decode()
    assert "1亿" in zh


def test_every_data_size_is_its_own_answer(client):
    # ppas.x8.large.2 (4 vCPU) prints 70701 at 1亿 and 57415 at 5亿 hot rows: both reach 50,000.
    body = client.get(f"{API}?engine=ppas&metric=ro_qps&target=50000&vendor=alibaba").json()
    smallest = [(a["printed"], a["result"]["hot_rows"]) for a in body["answers"]
                if a["result"]["flavor"]["spec_code"] == "ppas.x8.large.2"]
    assert sorted(smallest) == [("57415", 500000000), ("70701", 100000000)]


def test_a_metric_the_engine_does_not_publish_names_those_it_does(client):
    body = client.get(f"{API}?engine=ppas&metric=qps&target=1").json()
    assert "read-only qps (ro_qps)" in body["errors"]["metric"][0].lower()
    assert "read-write qps (rw_qps)" in body["errors"]["metric"][0].lower()
    html = client.get("/sizing/?engine=ppas&metric=qps&target=1&lang=en").content.decode()
    assert "No document publishes QPS for this engine and version" in html
    assert "No published flavour reaches that target" not in html


def test_the_form_offers_the_export_column_names(client):
    html = client.get("/sizing/?lang=en").content.decode()
    for name in ("tps", "qps", "tpm", "ro_qps", "rw_qps", "latency_p95_ms"):
        assert f'<option value="{name}"' in html
    schema = client.get("/api/v1/schema/?format=json").json()
    metric = next(p for p in schema["paths"]["/api/v1/sizing/"]["get"]["parameters"] if p["name"] == "metric")
    assert sorted(metric["schema"]["enum"]) == sorted(["tps", "qps", "tpm", "ro_qps", "rw_qps", "latency_p95_ms"])


def test_a_tps_answer_states_the_methodology_data_size(client):
    body = client.get(f"{API}?engine=mysql&version=8.0&vendor=huawei&metric=tps&target=3000").json()
    assert body["answers"] and {a["data_size"] for a in body["answers"]} <= {"64 tables × 10,000,000 rows"}
