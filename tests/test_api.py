"""The REST API (/api/v1/) through HTTP: endpoints, filters, ordering, pagination, errors, spec lookup,
CSV, throttling, auth, CORS and the schema. Runs on the bundled catalogue (imported once per session)."""

import csv
import io
from urllib.parse import parse_qsl
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.conf import settings
from rest_framework.authtoken.models import Token

from whitepaper.export import EXPORT_COLUMNS
from whitepaper.filters import ResultFilter
from whitepaper.metrics import METRIC_NAMES, METRICS
from whitepaper.models import PublishedResult, Vendor

pytestmark = pytest.mark.django_db

API = "/api/v1"
LIST_ENDPOINTS = ["vendors", "documents", "methodologies", "engines", "versions", "families", "flavors", "results"]


def get(client, url, status=200, **params):
    """GET url (its own query string kept, params added) and check the status."""
    base, _, query = url.partition("?")
    merged = {**dict(parse_qsl(query, keep_blank_values=True)), **params}
    response = client.get(base, merged)
    assert response.status_code == status, (url, params, response.status_code, response.content[:500])
    return response.json()


def errors(client, url, **params):
    """The `errors` map of a 400 in the API's one error shape ({detail, code, errors})."""
    body = get(client, url, status=400, **params)
    assert set(body) == {"detail", "code", "errors"} and body["code"] == "invalid", body
    return body["errors"]


def all_results(client, **params):
    """Every page of a results query (page_size at its cap)."""
    body = get(client, f"{API}/results/", page_size=500, **params)
    rows = body["results"]
    assert body["count"] == len(rows), "the bundled catalogue fits in one page of 500"
    return rows


# --- Endpoints and links -------------------------------------------------------------------------

def test_root_lists_every_endpoint(client):
    body = get(client, f"{API}/")
    for name in LIST_ENDPOINTS:
        assert body[name] == f"http://testserver{API}/{name}/"


@pytest.mark.parametrize("name", LIST_ENDPOINTS)
def test_list_and_detail_by_link(client, name):
    body = get(client, f"{API}/{name}/")
    assert body["count"] > 0 and body["results"]
    first = body["results"][0]
    detail = get(client, first["url"])
    assert {k: detail[k] for k in first} == first
    if name == "flavors":  # a flavour's detail adds its page's content (issue 36.4)
        assert set(detail) - set(first) == {"results", "same_size"}
    else:
        assert detail == first


def test_stable_slugs_in_urls(client):
    assert get(client, f"{API}/vendors/huawei/")["name"] == "Huawei Cloud"
    assert get(client, f"{API}/engines/mysql/")["name"] == "MySQL"
    assert get(client, f"{API}/documents/huawei-2023-08-03-rds/")["published"] == "2023-08-03"
    version = get(client, f"{API}/versions/sqlserver/2008 R2/")
    assert version["version"] == "2008 R2" and version["engine"].endswith("/engines/sqlserver/")
    family = get(client, f"{API}/families/alibaba/dedicated/")
    assert family["vendor_slug"] == "alibaba" and family["name_zh"] == "独享型"


@pytest.mark.parametrize("url", [f"{API}/vendors/nobody/", f"{API}/vendors/a%00b/", f"{API}/families/a%00/b/", f"{API}/versions/mysql/9.9/", f"{API}/families/huawei/x/",
                                 f"{API}/results/999999999/", f"{API}/flavors/0/", f"{API}/methodologies/x/"])
def test_unknown_object_is_a_json_404(client, url):
    assert "detail" in get(client, url, status=404)


def test_unknown_api_path_is_a_json_404(client):
    response = client.get(f"{API}/nothing/here/")
    assert response.status_code == 404 and "No API endpoint" in response.json()["detail"]
    assert client.get(f"{API}/documents/has.a.dot/").json()["detail"]  # any key reaches the view


def test_links_lead_to_filtered_results(client):
    version = get(client, f"{API}/versions/mysql/5.7/")
    rows = get(client, version["results"], page_size=500)["results"]
    assert rows and {(r["engine"], r["version"]) for r in rows} == {("mysql", "5.7")}
    engine = get(client, f"{API}/engines/postgresql/")
    assert {v["version"] for v in engine["versions"]} >= {"9.6", "12", "13", "14", "15"}
    vendor = get(client, f"{API}/vendors/alibaba/")
    docs = get(client, vendor["documents"])["results"]
    assert [d["slug"] for d in docs] == ["alibaba-2019-06-18-rds"]
    methodology = get(client, docs[0]["methodologies"][0])
    assert methodology["document"] == docs[0]["url"]
    rows = get(client, methodology["results"])["results"]
    assert rows and all(r["methodology"]["slug"] == methodology["slug"] for r in rows)


def test_result_has_numbers_printed_form_and_provenance(client):
    result = PublishedResult.objects.select_related("table__document", "table__methodology").get(
        table__document__slug="huawei-2025-10-21-postgresql", printed__tps="843.00")
    body = get(client, f"{API}/results/{result.pk}/")
    assert body["tps"] == 843 and isinstance(body["tps"], (int, float))
    assert body["printed"]["tps"] == "843.00"  # as printed: two decimals stay two decimals
    assert body["qps"] == float(result.qps) and body["printed"]["qps"] == result.printed["qps"]
    assert body["iops"] is None and body["iops_depends_on_disk"] is True
    assert body["document"]["slug"] == "huawei-2025-10-21-postgresql"
    assert body["document"]["url"].endswith(f"/documents/{result.table.document.slug}/")
    assert body["table"]["label"] == result.table.label and body["table"]["section"] == result.table.section
    assert body["table"]["html_url"].endswith(f"/documents/{result.table.document.slug}/#table-{result.table.position}")
    assert body["methodology"]["slug"] == result.table.methodology.slug
    assert body["methodology"]["statements_per_transaction"] == result.table.methodology.statements_per_transaction
    assert body["flavor"]["vcpus"] == result.flavor.vcpus and body["flavor"]["memory_ratio"] == "1:4"
    assert get(client, body["flavor"]["family"]["url"])["slug"] == body["flavor"]["family"]["slug"]
    assert get(client, body["version_url"])["version"] == body["version"]
    assert body["tps_per_core"] == float((result.tps / result.flavor.vcpus).quantize(Decimal("0.01")))


def test_rows_counts_are_numbers_and_printed(client):
    row = get(client, f"{API}/results/", engine="ppas", page_size=1)["results"][0]
    assert isinstance(row["capacity_rows"], int) and row["capacity_rows"] >= 10**8
    assert "亿" in row["printed"]["capacity_rows"]


# --- Filters -------------------------------------------------------------------------------------

FIELD_OF = {
    "vendor": lambda r: r["vendor"], "document": lambda r: r["document"]["slug"], "engine": lambda r: r["engine"],
    "version": lambda r: r["version"], "family": lambda r: (r["flavor"]["family"] or {}).get("slug"),
    "memory_ratio": lambda r: r["flavor"]["memory_ratio"], "deployment": lambda r: r["deployment"],
    "edition": lambda r: r["edition"], "flavor": lambda r: r["flavor"]["spec_code"],
    "methodology": lambda r: r["methodology"]["slug"],
    "vcpus": lambda r: r["flavor"]["vcpus"], "memory_gb": lambda r: r["flavor"]["memory_gb"],
    "tps": lambda r: r["tps"], "qps": lambda r: r["qps"], "max_connections": lambda r: r["max_connections"],
}


@pytest.mark.parametrize("name, value", [
    ("vendor", "alibaba"), ("document", "huawei-2018-12-11-rds"), ("engine", "postgresql"), ("version", "8.0"),
    ("family", "general-enhanced"), ("memory_ratio", "1:8"), ("deployment", "ha"), ("edition", "enterprise+standard"),
    ("flavor", "rds.mysql.s2.large"), ("methodology", "alibaba-2019-06-18-rds-ppas-pgbench"),
])
def test_each_value_filter(client, name, value):
    rows = all_results(client, **{name: value})
    assert rows, f"{name}={value} matches something in the bundled catalogue"
    assert {FIELD_OF[name](r) for r in rows} == {value}
    total = PublishedResult.objects.count()
    assert len(rows) < total


def test_family_and_version_dash_mean_not_stated(client):
    rows = all_results(client, family="-")
    assert rows and {r["flavor"]["family"] for r in rows} == {None} and {r["engine"] for r in rows} == {"sqlserver"}


@pytest.mark.parametrize("name", ["vcpus", "memory_gb", "tps", "qps", "max_connections"])
def test_exact_min_max_number_filters(client, name):
    rows = all_results(client, engine="mysql")
    values = sorted({FIELD_OF[name](r) for r in rows if FIELD_OF[name](r) is not None})
    low, mid, high = values[len(values) // 4], values[len(values) // 2], values[3 * len(values) // 4]
    exact = all_results(client, engine="mysql", **{name: mid})
    assert exact and {FIELD_OF[name](r) for r in exact} == {mid}
    ranged = all_results(client, engine="mysql", **{f"min_{name}": low, f"max_{name}": high})
    got = [FIELD_OF[name](r) for r in ranged]
    assert got and all(low <= v <= high for v in got)
    expected = sum(1 for r in rows if FIELD_OF[name](r) is not None and low <= FIELD_OF[name](r) <= high)
    assert len(got) == expected


def test_combined_filters(client):
    rows = all_results(client, engine="mysql", version="5.7", family="dedicated", vendor="huawei", min_vcpus=8,
                       max_memory_gb=64)
    assert rows
    for r in rows:
        assert (r["engine"], r["version"], r["flavor"]["family"]["slug"], r["vendor"]) == ("mysql", "5.7", "dedicated", "huawei")
        assert r["flavor"]["vcpus"] >= 8 and r["flavor"]["memory_gb"] <= 64


def test_latest_keeps_only_the_newest_documents_number(client):
    # PostgreSQL 12 dedicated is published in 2023 (000) and again in 2025 (003).
    both = all_results(client, engine="postgresql", version="12", family="dedicated", vcpus=8, memory_gb=32)
    assert {r["document"]["published"] for r in both} == {"2023-08-03", "2025-10-21"}
    latest = all_results(client, engine="postgresql", version="12", family="dedicated", vcpus=8, memory_gb=32,
                         latest="true")
    assert {r["document"]["published"] for r in latest} == {"2025-10-21"}
    assert len(all_results(client, latest="false")) == PublishedResult.objects.count()


# --- Ordering ------------------------------------------------------------------------------------

ORDER_KEYS = {"id": lambda r: r["id"], "published": lambda r: r["document"]["published"],
              "vcpus": lambda r: r["flavor"]["vcpus"], "memory_gb": lambda r: r["flavor"]["memory_gb"],
              **{m: (lambda r, m=m: r[m]) for m in METRIC_NAMES}}


@pytest.mark.parametrize("field", list(ORDER_KEYS))
@pytest.mark.parametrize("descending", [False, True])
def test_ordering_on_every_numeric_field(client, field, descending):
    rows = all_results(client, ordering=f"{'-' if descending else ''}{field}")
    values = [ORDER_KEYS[field](r) for r in rows]
    present = [v for v in values if v is not None]
    assert present == sorted(present, reverse=descending)
    assert values[:len(present)] == present, "results without the number come last"


def test_ordering_by_several_fields(client):
    rows = all_results(client, engine="mysql", ordering="vcpus,-tps")
    keys = [(r["flavor"]["vcpus"], -(r["tps"] or -1)) for r in rows]
    assert keys == sorted(keys)


def test_default_order_is_document_order_and_stable(client):
    first = get(client, f"{API}/results/", page_size=10)["results"]
    second = get(client, f"{API}/results/", page_size=10, page=2)["results"]
    # The oldest document (Huawei, 2018-12-11) first, its table 1 row by row as printed.
    keys = [(r["document"]["slug"], r["table"]["position"], r["position"]) for r in first + second]
    assert keys[0] == ("huawei-2018-12-11-rds", 1, 1)
    assert {k[0] for k in keys} == {"huawei-2018-12-11-rds"} and keys == sorted(keys) and len(set(keys)) == 20


# --- Pagination ----------------------------------------------------------------------------------

def test_pagination_links_and_cap(client):
    body = get(client, f"{API}/results/", page_size=100)
    assert len(body["results"]) == 100 and body["previous"] is None
    nxt = get(client, body["next"])
    assert "page=2" in body["next"] and len(nxt["results"]) == 100
    assert len(get(client, f"{API}/results/", page_size=500)["results"]) == min(500, PublishedResult.objects.count())
    assert len(get(client, f"{API}/results/")["results"]) == 50  # default page size


def test_page_past_the_end_is_404(client):
    body = get(client, f"{API}/results/", status=404, page=1000)
    assert "page" in body["errors"] and "past the last page" in body["detail"] and body["code"] == "not_found"


@pytest.mark.parametrize("params, bad", [
    ({"page_size": "501"}, "page_size"), ({"page_size": "1000000000"}, "page_size"), ({"page_size": "0"}, "page_size"),
    ({"page_size": "-5"}, "page_size"), ({"page_size": "ten"}, "page_size"), ({"page": "0"}, "page"),
    ({"page": "abc"}, "page"), ({"engine": "oracle"}, "engine"), ({"vendor": "aws"}, "vendor"),
    ({"version": "99"}, "version"), ({"family": "huge"}, "family"), ({"memory_ratio": "1:3"}, "memory_ratio"),
    ({"memory_ratio": "2:1"}, "memory_ratio"), ({"deployment": "cluster"}, "deployment"),
    ({"document": "nope"}, "document"), ({"edition": "express"}, "edition"), ({"flavor": "x.y"}, "flavor"),
    ({"methodology": "nope"}, "methodology"), ({"min_tps": "abc"}, "min_tps"), ({"tps": "NaN"}, "tps"),
    ({"max_qps": "Infinity"}, "max_qps"), ({"min_tps": "1e999999"}, "min_tps"), ({"min_tps": "1e-999999"}, "min_tps"),
    ({"vcpus": "1.5"}, "vcpus"), ({"vcpus": "-1"}, "vcpus"), ({"min_memory_gb": "9" * 40}, "min_memory_gb"),
    ({"max_connections": "lots"}, "max_connections"), ({"latest": "maybe"}, "latest"),
    ({"ordering": "name"}, "ordering"), ({"ordering": "-tps,password"}, "ordering"), ({"ordering": ","}, "ordering"),
    ({"min_cpu": "4"}, "min_cpu"), ({"document": "a\x00b"}, "document"), ({"engine": "x" * 5000}, "engine"),
])
def test_bad_parameters_are_400_naming_the_parameter(client, params, bad):
    body = errors(client, f"{API}/results/", **params)
    assert bad in body and isinstance(body[bad], list) and body[bad][0]


def test_all_bad_parameters_reported_at_once(client):
    body = errors(client, f"{API}/results/", engine="oracle", min_tps="x", ordering="y", page_size="0",
               bogus="1")
    assert set(body) == {"engine", "min_tps", "ordering", "page_size", "bogus"}


def test_filter_errors_on_other_endpoints(client):
    assert "vendor" in errors(client, f"{API}/documents/", vendor="aws")
    assert "engine" in errors(client, f"{API}/versions/", engine="oracle")
    assert "vcpus" in errors(client, f"{API}/flavors/", vcpus="many")
    assert "ordering" in errors(client, f"{API}/vendors/", ordering="name")
    assert {d["vendor_slug"] for d in get(client, f"{API}/documents/", vendor="huawei")["results"]} == {"huawei"}
    assert {f["vcpus"] for f in get(client, f"{API}/flavors/", vcpus=16)["results"]} == {16}


def test_invalid_filterset_never_widens_the_answer():
    """The shared FilterSet (explorer too): an invalid parameter gives no rows, not every row."""
    filterset = ResultFilter({"engine": "mysql", "version": "9.9"}, queryset=PublishedResult.objects.all())
    assert not filterset.is_valid() and "version" in filterset.errors
    assert filterset.qs.count() == 0


def test_list_query_count_does_not_grow_with_page_size(client, settings):
    settings.CATALOGUE_STAMP_TTL = 0  # the catalogue stamp (ETag) is read on every request: counted each time
    counts = {}
    for size in (5, 500):
        cache.clear()  # the count is kept under the catalogue stamp (stamped_count): count it for each size
        with CaptureQueriesContext(connection) as ctx:
            body = get(client, f"{API}/results/", page_size=size, engine="mysql", min_tps=0, ordering="-tps")
        assert len(body["results"]) == min(size, body["count"])
        counts[size] = len(ctx.captured_queries)
    assert counts[5] == counts[500] <= 11, counts  # stamp, 1 check per slug filter, count, page, 6 prefetches
    for name in LIST_ENDPOINTS[:-1]:
        small, large = [], []
        for size, bucket in ((1, small), (500, large)):
            with CaptureQueriesContext(connection) as ctx:
                get(client, f"{API}/{name}/", page_size=size)
            bucket.append(len(ctx.captured_queries))
        assert small == large, (name, small, large)


# --- CSV -----------------------------------------------------------------------------------------

def _csv(response):
    return b"".join(response.streaming_content).decode()


def test_csv_is_exactly_export_results(client):
    out = io.StringIO()
    call_command("export_results", stdout=out)
    response = client.get(f"{API}/results/", {"format": "csv"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    body = _csv(response)
    assert body == out.getvalue()
    lines = body.splitlines()
    assert lines[0] == ",".join(EXPORT_COLUMNS)
    assert len(lines) == PublishedResult.objects.count() + 1  # every row, not one page of 50


def test_csv_honours_filters_and_accept_header(client):
    out = io.StringIO()
    call_command("export_results", stdout=out)
    header, *lines = out.getvalue().splitlines(keepends=True)
    # The export's own rows with engine mysql and at least 8 vCPUs, in its order (columns 4 and 11).
    expected = header + "".join(line for line, row in zip(lines, csv.reader(lines))
                                if row[3] == "mysql" and int(row[10]) >= 8)
    assert expected.count("\n") > 100
    assert _csv(client.get(f"{API}/results/", {"format": "csv", "engine": "mysql", "min_vcpus": "8"})) == expected
    response = client.get(f"{API}/results/", {"engine": "mysql", "min_vcpus": "8"}, HTTP_ACCEPT="text/csv")
    assert response["Content-Type"].startswith("text/csv") and _csv(response) == expected


def test_csv_errors_are_json_400(client):
    response = client.get(f"{API}/results/", {"format": "csv", "engine": "oracle"})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "engine" in response.json()["errors"]


def test_unsupported_format_is_a_400_naming_the_accepted_formats(client):
    assert errors(client, f"{API}/vendors/", format="csv")["format"] == ["Unknown format 'csv'; accepted: json."]  # JSON only: 'api' (HTML) is not offered (issue 37.6)
    assert errors(client, f"{API}/results/", format="xml")["format"] == ["Unknown format 'xml'; accepted: json, csv, parquet."]


# --- Spec lookup ---------------------------------------------------------------------------------

SPEC = f"{API}/spec/"


def test_spec_found_names_the_newest_document(client):
    body = get(client, SPEC, engine="postgresql", version="12", family="dedicated", vcpus=8, memory_gb=32)
    assert body["document"]["slug"] == "huawei-2025-10-21-postgresql"  # not the 2023 edition's number
    result = PublishedResult.objects.get(pk=body["result"]["id"])
    assert result.table.document.slug == "huawei-2025-10-21-postgresql"
    assert (result.flavor.vcpus, result.flavor.memory_gb, result.engine_version.version) == (8, 32, "12")
    assert body["result"]["tps"] == float(result.tps) and body["result"]["printed"]["tps"] == result.display("tps")


def test_spec_not_found_is_404_with_the_published_sizes(client):
    body = get(client, SPEC, status=404, engine="mysql", version="8.0", family="dedicated", vcpus=16, memory_gb=63)
    assert "No published result" in body["detail"] and "16 vCPUs and 63 GB" in body["detail"]
    assert {"vcpus": 16, "memory_gb": 64} in body["available"]


def test_spec_ambiguous_is_409_with_candidates(client):
    # MySQL 5.7 general-purpose 4 vCPU / 16 GB: Huawei and Alibaba both publish it.
    body = get(client, SPEC, status=409, engine="mysql", version="5.7", family="general", vcpus=4, memory_gb=16)
    assert body["code"] == "ambiguous" and body["errors"]["vendor"] == ["Several values match: alibaba, huawei; give one."]
    assert "vendor" in body["disambiguate_by"] and len(body["candidates"]) >= 2
    assert len({c["vendor"] for c in body["candidates"]}) >= 2
    narrowed = client.get(SPEC, {"engine": "mysql", "version": "5.7", "family": "general", "vcpus": 4,
                                 "memory_gb": 16, "vendor": "huawei"})
    assert narrowed.status_code == 200 and narrowed.json()["result"]["vendor"] == "huawei"


def test_spec_ambiguous_deployment(client):
    rows = PublishedResult.objects.filter(engine_version__engine__slug="sqlserver", flavor__family__isnull=True)
    sizes = {}
    for r in rows.select_related("flavor", "engine_version"):
        sizes.setdefault((r.engine_version.version, r.flavor.vcpus, r.flavor.memory_gb), set()).add(r.deployment)
    (version, vcpus, memory), _ = next((k, v) for k, v in sorted(sizes.items()) if len(v) > 1)
    body = get(client, SPEC, status=409, engine="sqlserver", version=version, family="-", vcpus=vcpus, memory_gb=memory)
    assert "deployment" in body["disambiguate_by"]
    # SQL Server 2014, 4 vCPU / 8 GB (2018 document, chapter 2): an HA Standard-edition row and a single-instance
    # Web-edition one.
    assert (version, vcpus, memory) == ("2014", 4, 8)
    for deployment, edition, tps in (("ha", "standard", 9000), ("single", "web", 10000)):
        body = get(client, SPEC, engine="sqlserver", version=version, family="-", vcpus=vcpus, memory_gb=memory,
                   deployment=deployment)
        assert (body["result"]["deployment"], body["result"]["edition"], body["result"]["tps"]) == (deployment, edition, tps)
        assert body["document"]["slug"] == "huawei-2018-12-11-rds"


def test_spec_bad_and_missing_parameters(client):
    body = errors(client, SPEC, engine="mysql", vcpus="x", colour="red")
    assert set(body) == {"version", "family", "vcpus", "memory_gb", "colour"}
    assert body["version"] == ["This parameter is required."]
    assert "engine" in errors(client, SPEC, engine="oracle", version="8.0", family="general", vcpus=1,
                           memory_gb=2)


# --- Auth, throttling, CORS ----------------------------------------------------------------------

def _rest_framework(**changes):
    return {**settings.REST_FRAMEWORK, **changes}


def test_anonymous_reads_are_throttled_with_retry_after(client):
    with override_settings(REST_FRAMEWORK=_rest_framework(DEFAULT_THROTTLE_RATES={"anon": "3/minute"})):
        for _ in range(3):
            assert client.get(f"{API}/vendors/").status_code == 200
        response = client.get(f"{API}/engines/")
        assert response.status_code == 429
        assert 1 <= int(response["Retry-After"]) <= 60
        body = response.json()
        assert body["retry_after"] == int(response["Retry-After"]) and "try again" in body["detail"]


def test_authenticated_clients_are_not_anonymously_throttled(client):
    user = User.objects.create_user("consumer", password="x-secret-123")
    token = Token.objects.create(user=user)
    with override_settings(REST_FRAMEWORK=_rest_framework(DEFAULT_THROTTLE_RATES={"anon": "2/minute"})):
        for _ in range(4):
            assert client.get(f"{API}/vendors/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200


def test_reads_are_public_and_the_catalogue_has_no_write_method_for_anyone(client):
    assert client.get(f"{API}/results/").status_code == 200
    # The catalogue is read-only: a write is a 405 with Allow whoever asks (issue 25.2; it was a 401/403 for
    # anonymous callers and a 405 only past authentication), and nothing is written.
    assert client.post(f"{API}/vendors/", {"slug": "x", "name": "X"}).status_code == 405
    assert not Vendor.objects.filter(slug="x").exists()
    user = User.objects.create_user("writer", password="x-secret-123")
    token = Token.objects.create(user=user)
    assert client.post(f"{API}/vendors/", {"slug": "x"}, HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 405
    # Bad credentials are refused as such (DRF authenticates before any permission).
    assert client.post(f"{API}/vendors/", {"slug": "x"}, HTTP_AUTHORIZATION="Token wrong").status_code in (401, 403)
    assert not Vendor.objects.filter(slug="x").exists()


def test_cors_lets_other_origins_read(client):
    origin = "https://sizing.example.com"
    response = client.get(f"{API}/results/", {"page_size": 1}, HTTP_ORIGIN=origin)
    assert response["Access-Control-Allow-Origin"] == origin
    preflight = client.options(f"{API}/results/", HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
                               HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization")
    assert preflight.status_code == 200
    assert preflight["Access-Control-Allow-Origin"] == origin
    assert "GET" in preflight["Access-Control-Allow-Methods"]
    assert "authorization" in preflight["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Origin" not in client.get("/", HTTP_ORIGIN=origin)  # only the API


# --- Schema and docs -----------------------------------------------------------------------------

def test_openapi_schema_documents_fields_with_units(client):
    response = client.get(f"{API}/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    result = schema["components"]["schemas"]["Result"]["properties"]
    for metric in METRICS:
        assert metric.unit in result[metric.name]["description"], metric.name
        assert result[metric.name]["nullable"] is True
    undocumented = [name for name, prop in result.items()
                    if not prop.get("description") and "$ref" not in prop and "allOf" not in prop]
    assert undocumented == [], undocumented
    results = schema["paths"][f"{API}/results/"]["get"]
    params = {p["name"]: p for p in results["parameters"]}
    for name in ["vendor", "document", "engine", "version", "family", "memory_ratio", "deployment", "latest",
                 "vcpus", "min_vcpus", "max_vcpus", "memory_gb", "min_tps", "max_qps", "min_max_connections",
                 "ordering", "page", "page_size", "format"]:
        assert name in params, name
    assert params["engine"]["schema"]["type"] == "array"  # repeated: engine=mysql&engine=postgresql
    assert params["engine"]["schema"]["items"]["type"] == "string" and params["engine"]["schema"]["example"] == ["mysql"]
    assert params["page_size"]["schema"]["maximum"] == 500
    assert "text/csv" in results["responses"]["200"]["content"]
    assert {"400", "429"} <= set(results["responses"])
    spec = schema["paths"][f"{API}/spec/"]["get"]
    assert {"200", "409", "400", "404"} <= set(spec["responses"])
    assert {p["name"] for p in spec["parameters"] if p.get("required")} == {"engine", "version", "family", "vcpus", "memory_gb"}


def test_docs_page_serves_swagger_ui_from_the_sidecar_package(client):
    from django.contrib.staticfiles import finders

    response = client.get(f"{API}/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui-dist/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
