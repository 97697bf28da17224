"""Parameters are read one way on every endpoint (issue 25.6): numbers in ASCII digits as JSON writes them
(int() and Decimal() read "１６", "١٦", "+16" and "016" as 16), one rule for empty values (/spec/ let an empty
vendor=, document=, flavor= pass while /results/ refused them), one message for a number past the limit
(min_tps=1e400 gave two conflicting limits), 409 suggestions a client can send back (the spec lookup suggested
"not stated", which it refuses), and versions in version order (they sorted as text: 10 before 9.6)."""

import pytest

pytestmark = pytest.mark.django_db

API = "/api/v1"
SPEC = {"engine": "mysql", "version": "8.0", "family": "dedicated", "vcpus": "8", "memory_gb": "64"}
AMBIGUOUS = {"engine": "mysql", "version": "5.7", "family": "general", "vcpus": "4", "memory_gb": "16"}
EMPTY = "Empty value; give a value or leave the parameter out."


def errors(client, url, params):
    response = client.get(url, params)
    assert response.status_code == 400, (response.status_code, response.content[:300])
    return response.json()["errors"]


@pytest.mark.parametrize("written", ["１６", "١٦", "+16", "016", " 16x", "16.0", "1e1"])
@pytest.mark.parametrize("url, name", [("/results/", "vcpus"), ("/results/", "min_vcpus"), ("/spec/", "vcpus"),
                                       ("/flavors/", "vcpus"), ("/results/best/", "max_vcpus"), ("/results/", "page_size")])
def test_whole_numbers_are_ascii_digits_only(client, url, name, written):
    params = {**SPEC, name: written} if url == "/spec/" else {name: written}
    assert list(errors(client, f"{API}{url}", params)) == [name]


@pytest.mark.parametrize("written", ["３０００", "+3000", "03000", "٣٠٠٠"])
@pytest.mark.parametrize("url, name", [("/results/", "min_tps"), ("/sizing/", "target")])
def test_decimals_are_ascii_digits_only(client, url, name, written):
    params = {"engine": "mysql", name: written} if url == "/sizing/" else {name: written}
    assert list(errors(client, f"{API}{url}", params)) == [name]


@pytest.mark.parametrize("written", ["١", "+1", "01"])
def test_compare_base_and_sel_are_ascii_digits_only(client, written):
    from whitepaper.models import PublishedResult

    a, b = PublishedResult.objects.order_by("id").values_list("id", flat=True)[:2]
    assert "base" in errors(client, f"{API}/compare/", {"sel": [a, b], "base": written})
    arabic = str(a).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    assert "sel" in errors(client, f"{API}/compare/", {"sel": [arabic, b]})


def test_the_plain_numbers_still_answer(client):
    assert client.get(f"{API}/results/", {"vcpus": "16", "min_tps": "3000.5", "page_size": "10"}).status_code == 200
    assert client.get(f"{API}/results/", {"min_qps": "2.2e-311", "max_tps": "1E+5"}).status_code == 200
    assert client.get(f"{API}/spec/", SPEC).status_code == 200


def test_a_number_past_the_limit_has_one_message(client):
    body = errors(client, f"{API}/results/", {"min_tps": "1e400"})
    assert body == {"min_tps": ["Ensure this value is less than or equal to 1E+14."]}


@pytest.mark.parametrize("url, base", [
    ("/spec/", SPEC), ("/results/", {}), ("/results/best/", {}), ("/sizing/", {"engine": "mysql", "target": "3000"}),
    ("/flavors/", {}), ("/documents/", {})])
@pytest.mark.parametrize("name", ["vendor", "document", "flavor", "min_tps", "ordering", "latest", "page",
                                  "include_internal", "bom", "cursor", "fields", "format", "family"])
def test_an_empty_value_is_one_400_on_every_endpoint(client, url, base, name):
    response = client.get(f"{API}{url}", {**base, name: ""})
    assert response.status_code == 400, (response.status_code, response.content[:300])
    messages = response.json()["errors"].get(name)
    # Where the endpoint knows the parameter: the one message; where it does not: unknown parameter.
    assert messages == [EMPTY] or "Unknown parameter" in messages[0], messages


def test_the_409_suggests_only_values_the_lookup_accepts(client):
    response = client.get(f"{API}/spec/", AMBIGUOUS)
    assert response.status_code == 409
    body = response.json()
    assert body["suggestions"]["vendor"] == ["alibaba", "huawei"]
    assert all("not stated" not in m for messages in body["errors"].values() for m in messages)
    # MySQL 5.7 general 4 vCPU / 16 GB: Huawei prints its memory ratio, Alibaba's 2019 table none.
    assert "memory_ratio" in body["disambiguate_by"] and body["suggestions"]["memory_ratio"] == ["1:4"]
    for name, values in body["suggestions"].items():
        for value in values:
            narrowed = client.get(f"{API}/spec/", {**AMBIGUOUS, name: value})
            assert narrowed.status_code in (200, 409), (name, value, narrowed.content[:300])
            if narrowed.status_code == 409:
                assert len(narrowed.json()["candidates"]) < len(body["candidates"])


def test_versions_are_in_version_order(client):
    # The data files' versions (whitepaper/data/*.yaml): PostgreSQL 9.6, 10, 12-15; SQL Server 2008 R2, 2014.
    engines = {e["slug"]: [v["version"] for v in e["versions"]] for e in client.get(f"{API}/engines/").json()["results"]}
    assert engines == {"mysql": ["5.6", "5.7", "8.0"], "postgresql": ["9.6", "10", "12", "13", "14", "15"],
                       "ppas": ["10"], "sqlserver": ["2008 R2", "2014"]}
    listed = [(v["engine_slug"], v["version"]) for v in client.get(f"{API}/versions/?page_size=500").json()["results"]]
    assert listed == [(engine, version) for engine, versions in engines.items() for version in versions]
