"""The API's contract over time (issue 13): the spec lookup's ambiguity as an error common HTTP
libraries see, the deprecation mechanism (Deprecation/Sunset headers) applied to the retired 300, a
schema that does not change when the catalogue does (no enums of data), typed nullable fields."""

import json
from datetime import datetime, timezone

import pytest
import requests

from whitepaper.models import Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, PublishedResult, Vendor

pytestmark = pytest.mark.django_db

API = "/api/v1"
AMBIGUOUS = {"engine": "mysql", "version": "5.7", "family": "general", "vcpus": 4, "memory_gb": 16}


# --- Spec lookup: ambiguity is a 409 ---------------------------------------------------------------

def test_requests_sees_an_ambiguous_lookup_as_an_error(catalogue_server):
    # requests treats a 300 as success (ok, no raise); a 409 is an error for it, as for httpx.
    response = requests.get(f"{catalogue_server}{API}/spec/", params=AMBIGUOUS, timeout=30)
    assert response.status_code == 409 and not response.ok
    with pytest.raises(requests.HTTPError):
        response.raise_for_status()
    body = response.json()
    assert body["code"] == "ambiguous" and set(body["errors"]) == set(body["disambiguate_by"])
    # MySQL 5.7 general 4 vCPU / 16 GB: Alibaba 2019 (rds.mysql.m1.medium) and Huawei 2025 both print it.
    assert {c["vendor"] for c in body["candidates"]} == {"alibaba", "huawei"}
    narrowed = requests.get(f"{catalogue_server}{API}/spec/", params={**AMBIGUOUS, "vendor": "alibaba"}, timeout=30)
    narrowed.raise_for_status()
    assert narrowed.json()["result"]["flavor"]["spec_code"] == "rds.mysql.m1.medium"


def test_the_retired_300_is_still_there_with_deprecation_and_sunset(client):
    response = client.get(f"{API}/spec/", {**AMBIGUOUS, "multiple_choices": "true"})
    assert response.status_code == 300
    # The 1.1.0 body, plus the one error shape (code, errors) and the suggestions since 2.1.0 (issue 25.5).
    assert set(response.json()) == {"detail", "code", "errors", "disambiguate_by", "suggestions", "candidates"}
    # Deprecated on 2026-11-23 (RFC 9745: @<unix time>), gone on 2027-03-01 (RFC 8594: an HTTP date).
    deprecated = datetime(2026, 11, 23, tzinfo=timezone.utc)
    assert response["Deprecation"] == f"@{int(deprecated.timestamp())}"
    assert response["Sunset"] == "Mon, 01 Mar 2027 00:00:00 GMT"
    sunset = datetime(2027, 3, 1, tzinfo=timezone.utc)
    assert (sunset - deprecated).days >= 90  # the policy's notice
    # Without the parameter: no deprecation headers.
    plain = client.get(f"{API}/spec/", AMBIGUOUS)
    assert plain.status_code == 409 and not plain.has_header("Deprecation") and not plain.has_header("Sunset")


def test_cors_exposes_the_deprecation_headers(client):
    response = client.get(f"{API}/spec/", {**AMBIGUOUS, "multiple_choices": "true"}, HTTP_ORIGIN="https://example.org")
    exposed = {h.strip().lower() for h in response["Access-Control-Expose-Headers"].split(",")}
    assert {"deprecation", "sunset"} <= exposed


def test_schema_marks_the_retired_parameter_deprecated(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/spec/"]["get"]
    params = {p["name"]: p for p in operation["parameters"]}
    assert params["multiple_choices"]["deprecated"] is True
    assert {"200", "400", "404", "409"} <= set(operation["responses"])
    assert "Deprecated" in operation["responses"]["300"]["description"]


@pytest.mark.parametrize("value", ["maybe", ""])
def test_a_bad_multiple_choices_is_a_400(client, value):
    response = client.get(f"{API}/spec/", {**AMBIGUOUS, "multiple_choices": value})
    assert response.status_code == 400 and "multiple_choices" in response.json()["errors"]


# --- The schema does not follow the data ------------------------------------------------------------

def enums(node):
    if isinstance(node, dict):
        if "enum" in node:
            yield node["enum"]
        for value in node.values():
            yield from enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from enums(value)


def test_no_enum_lists_catalogue_values(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    data = {*Document.objects.values_list("slug", flat=True), *EngineVersion.objects.values_list("version", flat=True),
            *Flavor.objects.values_list("spec_code", flat=True), *Flavor.objects.values_list("memory_ratio", flat=True),
            *Vendor.objects.values_list("slug", flat=True), *InstanceFamily.objects.values_list("slug", flat=True),
            *Methodology.objects.values_list("slug", flat=True), *PublishedResult.objects.values_list("edition", flat=True)}
    data -= {"", None, "internal"}  # the internal vendor's slug is also an origin (a fixed vocabulary)
    found = {value for values in enums(schema) for value in values if value in data}
    assert not found, found
    params = {p["name"]: p for p in schema["paths"]["/api/v1/results/"]["get"]["parameters"]}
    for name, example in [("document", "huawei-2023-08-03-rds"), ("version", "8.0"), ("flavor", "mysql.x8.medium.2"),
                          ("vendor", "huawei"), ("memory_ratio", "1:4")]:
        assert params[name]["schema"]["items"]["type"] == "string" and params[name]["schema"]["example"] == [example]
    assert params["deployment"]["schema"]["items"]["enum"] == ["ha", "single"]  # the code's vocabulary, not data


def test_the_schema_stays_the_same_when_the_catalogue_grows(client):
    before = client.get(f"{API}/schema/?format=json").content
    EngineVersion.objects.create(engine=Engine.objects.get(slug="mysql"), version="9.1")
    vendor = Vendor.objects.create(slug="newcloud", name="New Cloud")
    InstanceFamily.objects.create(vendor=vendor, slug="burstable", name="Burstable")
    after = client.get(f"{API}/schema/?format=json").content
    assert json.loads(before) == json.loads(after)


# --- Typed nullable fields ---------------------------------------------------------------------------

def test_deployment_and_family_are_typed_and_nullable(client):
    schema = client.get(f"{API}/schema/?format=json").json()["components"]["schemas"]
    deployment = schema["Result"]["properties"]["deployment"]
    assert deployment["nullable"] is True
    assert {"$ref": "#/components/schemas/DeploymentEnum"} in deployment["oneOf"]
    assert schema["DeploymentEnum"]["enum"] == ["ha", "single"]
    assert schema["FlavorSummary"]["properties"]["family"]["nullable"] is True
    assert schema["Flavor"]["properties"]["family"]["nullable"] is True
    # SQL Server 2014 4 vCPU / 8 GB (huawei-2018-12-11-rds): an HA row and a single-instance row, no family.
    rows = client.get(f"{API}/results/", {"engine": "sqlserver", "version": "2014", "vcpus": 4, "memory_gb": 8}).json()
    assert {r["deployment"] for r in rows["results"]} == {"ha", "single"}
    assert {r["flavor"]["family"] for r in rows["results"]} == {None}
    # MySQL rows state no deployment: null, not "".
    mysql = client.get(f"{API}/results/", {"engine": "mysql", "page_size": 500}).json()["results"]
    assert {r["deployment"] for r in mysql} == {None}
