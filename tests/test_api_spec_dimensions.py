"""The spec lookup takes every dimension that tells published variants apart (issue 52.7): Alibaba's PPAS and
PostgreSQL tables (alibaba-2019-06-18-rds) print three rows per flavour, one per amount of hot data, and a 409
names what tells candidates apart, never "add one of: ." with nothing."""

import pytest

pytestmark = pytest.mark.django_db
PPAS = "/api/v1/spec/?engine=ppas&version=10&family=dedicated&vcpus=32&memory_gb=128"


def test_ppas_variants_differ_in_hot_data_and_the_lookup_takes_it(client):
    conflict = client.get(PPAS)
    assert conflict.status_code == 409
    body = conflict.json()
    assert body["disambiguate_by"] == ["hot_rows"]
    # The data file's rows for ppas.x4.4xlarge.2: hot data 1亿, 5亿, 10亿.
    assert sorted(map(int, body["suggestions"]["hot_rows"])) == [100_000_000, 500_000_000, 1_000_000_000]
    assert set(body["errors"]) == {"hot_rows"}
    answer = client.get(f"{PPAS}&hot_rows=500000000")
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert (result["flavor"]["spec_code"], result["hot_rows"], result["ro_qps"], result["rw_qps"]) == \
        ("ppas.x4.4xlarge.2", 500_000_000, 405528.0, 233615.0)


def test_every_published_flavour_is_answered_or_its_409_names_what_to_add(client, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "100000/minute"}}
    rows = client.get("/api/v1/results/?page_size=500").json()["results"]
    flavours = {(r["engine"], r["version"] or "-", r["flavor"]["family"]["slug"], r["flavor"]["vcpus"], r["flavor"]["memory_gb"])
                for r in rows if r["flavor"]["family"]}  # the lookup needs a family
    silent = []
    for engine, version, family, vcpus, memory_gb in sorted(flavours):
        query = f"engine={engine}&version={version}&family={family}&vcpus={vcpus}&memory_gb={memory_gb}"
        response = client.get(f"/api/v1/spec/?{query}")
        assert response.status_code in (200, 409), (query, response.content[:300])
        if response.status_code == 409 and not (response.json()["disambiguate_by"] and response.json()["errors"]):
            silent.append(query)
    assert len(flavours) > 100 and not silent, silent
