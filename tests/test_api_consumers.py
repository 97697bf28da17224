"""The API as its consumers use it (issue 13): lists as repeated parameters, one error shape, HTTP
caching and rate-limit headers, the analysts' CSV. Runs on the bundled catalogue."""

import re
from decimal import Decimal
from urllib.parse import parse_qs, urlparse

import pytest

from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db

API = "/api/v1"


def get(client, path, status=200, **headers):
    response = client.get(path, **headers)
    assert response.status_code == status, (path, response.status_code, response.content[:500])
    return response


def ids(client, query):
    body = get(client, f"{API}/results/?page_size=500&{query}").json()
    assert body["count"] == len(body["results"])
    return [r["id"] for r in body["results"]]


# --- Lists: repeated parameters --------------------------------------------------------------------

def test_repeated_engine_answers_both_engines(client):
    mysql, postgresql = ids(client, "engine=mysql"), ids(client, "engine=postgresql")
    both = ids(client, "engine=mysql&engine=postgresql")
    assert mysql and postgresql
    assert sorted(both) == sorted(mysql + postgresql)
    # Counted independently of the API's filter code: vendor-published MySQL and PostgreSQL rows.
    expected = (PublishedResult.objects.filter(engine_version__engine__slug__in=["mysql", "postgresql"])
                .exclude(table__document__vendor__slug="internal").count())
    assert len(both) == expected


@pytest.mark.parametrize("name, values", [
    ("vendor", ["huawei", "alibaba"]), ("version", ["5.7", "8.0"]), ("family", ["general", "dedicated"]),
    ("memory_ratio", ["1:2", "1:4"]), ("deployment", ["ha", "single"]),
])
def test_every_slug_filter_takes_a_list(client, name, values):
    each = [ids(client, f"{name}={v}") for v in values]
    assert all(each), "each value alone matches something"
    both = ids(client, "&".join(f"{name}={v}" for v in values))
    assert sorted(both) == sorted(sum(each, []))


def test_not_stated_in_a_list(client):
    sqlserver = ids(client, "engine=sqlserver&family=-")
    assert sqlserver, "SQL Server results name no family"
    general = ids(client, "family=general")
    assert sorted(ids(client, "family=-&family=general")) == sorted(set(ids(client, "family=-")) | set(general))


def test_repeated_ordering_is_a_two_field_sort(client):
    body = get(client, f"{API}/results/?engine=mysql&page_size=500&ordering=vcpus&ordering=-tps").json()
    keys = [(r["flavor"]["vcpus"], -(r["tps"] or -1)) for r in body["results"]]
    assert keys == sorted(keys) and len({k[0] for k in keys}) > 1
    comma = get(client, f"{API}/results/?engine=mysql&page_size=500&ordering=vcpus,-tps").json()
    assert [r["id"] for r in comma["results"]] == [r["id"] for r in body["results"]]


@pytest.mark.parametrize("query, name", [
    ("min_tps=1&min_tps=2", "min_tps"), ("latest=true&latest=false", "latest"), ("page=1&page=2", "page"),
    ("page_size=5&page_size=6", "page_size"), ("format=json&format=csv", "format"),
])
def test_other_repeated_parameters_are_400_naming_them(client, query, name):
    body = get(client, f"{API}/results/?{query}", status=400).json()
    assert "more than once" in str(body), body
    assert name in str(body)


def test_repeated_parameter_in_spec_lookup_is_400(client):
    body = get(client, f"{API}/spec/?engine=mysql&engine=postgresql&version=8.0&family=dedicated&vcpus=16"
                       "&memory_gb=64", status=400).json()
    assert "engine" in str(body) and "more than once" in str(body)


def test_bad_value_in_a_list_is_named(client):
    body = get(client, f"{API}/results/?engine=mysql&engine=oracle", status=400).json()
    assert "oracle" in str(body) and "engine" in str(body)


def test_schema_declares_lists_as_repeated(client):
    schema = get(client, f"{API}/schema/?format=json").json()
    params = {p["name"]: p for p in schema["paths"]["/api/v1/results/"]["get"]["parameters"]}
    for name in ("engine", "vendor", "version", "family", "deployment", "ordering"):
        assert params[name]["schema"]["type"] == "array", name
        assert params[name].get("explode", True) is True and params[name].get("style", "form") == "form", name
    assert params["min_tps"]["schema"]["type"] == "number"
    spec = {p["name"]: p for p in schema["paths"]["/api/v1/spec/"]["get"]["parameters"]}
    assert spec["engine"]["schema"]["type"] == "string"


# --- One error shape ---------------------------------------------------------------------------

def assert_error(response, status, code):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert {"detail", "code", "errors"} <= set(body) and body["code"] == code, body
    assert isinstance(body["detail"], str) and isinstance(body["errors"], dict)
    return body


@pytest.mark.parametrize("path, text", [
    (f"{API}/vendors/nobody/", "No vendor at /api/v1/vendors/nobody/."),
    (f"{API}/results/999999999/", "No published result at /api/v1/results/999999999/."),
    (f"{API}/versions/mysql/9.9/", "No engine version at /api/v1/versions/mysql/9.9/."),
    (f"{API}/families/huawei/x/", "No instance family at /api/v1/families/huawei/x/."),
])
def test_object_404s_have_one_wording(client, path, text):
    assert assert_error(client.get(path), 404, "not_found")["detail"] == text


@pytest.mark.parametrize("path", ["/api/v2/results/", "/api/v2/", "/api/nothing"])
def test_other_api_versions_are_a_json_404(client, path):
    body = assert_error(client.get(path), 404, "not_found")
    assert "v1" in body["detail"]


def test_bad_parameters_share_the_shape(client):
    body = assert_error(client.get(f"{API}/results/?engine=oracle&min_tps=x"), 400, "invalid")
    assert set(body["errors"]) == {"engine", "min_tps"}
    assert body["errors"]["engine"] == ["Unknown engine 'oracle'."]
    assert_error(client.get(f"{API}/results/?format=xml"), 400, "invalid")


def test_writes_without_credentials_share_the_shape(client):
    # 401 with WWW-Authenticate naming Bearer and Token (the runs API checks tokens first: issues 10, 37).
    assert_error(client.post(f"{API}/runs/", {}, content_type="application/json"), 401, "not_authenticated")


# --- HTTP caching and rate-limit headers ---------------------------------------------------------

@pytest.mark.parametrize("path", [f"{API}/results/?engine=mysql", f"{API}/vendors/huawei/",
                                  f"{API}/results/?format=csv&engine=ppas",
                                  f"{API}/spec/?engine=mysql&version=5.7&family=general&vcpus=2&memory_gb=4&vendor=huawei"])
def test_conditional_get_answers_304(client, path):
    first = client.get(path)
    assert first.status_code == 200, first.content[:300]
    etag, last_modified = first["ETag"], first["Last-Modified"]
    assert etag.startswith('"') and first["Cache-Control"] == "public, max-age=0, must-revalidate"
    assert "cookie" not in first.get("Vary", "").lower()
    again = client.get(path, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    assert client.get(path, HTTP_IF_MODIFIED_SINCE=last_modified).status_code == 304
    assert client.get(path, HTTP_IF_NONE_MATCH='"other"').status_code == 200


def test_etag_changes_with_the_query_the_format_and_the_catalogue(client, settings):
    settings.CATALOGUE_STAMP_TTL = 0  # the test's transaction never commits (the writer forgets the stamp on commit)
    a = client.get(f"{API}/results/?engine=mysql")["ETag"]
    assert client.get(f"{API}/results/?engine=postgresql")["ETag"] != a
    assert client.get(f"{API}/results/?engine=mysql&format=csv")["ETag"] != a
    result = PublishedResult.objects.filter(tps__isnull=False).first()
    result.tps += 1
    result.save()  # the catalogue stamp moves: every cached answer is stale at once
    fresh = client.get(f"{API}/results/?engine=mysql", HTTP_IF_NONE_MATCH=a)
    assert fresh.status_code == 200 and fresh["ETag"] != a


def test_rate_limit_headers_on_every_anonymous_answer(client, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "5/minute"}}
    seen = []
    for path in [f"{API}/vendors/", f"{API}/results/?engine=oracle", f"{API}/vendors/nobody/", f"{API}/vendors/"]:
        response = client.get(path)
        seen.append((response.status_code, response["X-RateLimit-Limit"], response["X-RateLimit-Remaining"]))
        assert 0 < int(response["X-RateLimit-Reset"]) <= 60
    assert seen == [(200, "5", "4"), (400, "5", "3"), (404, "5", "2"), (200, "5", "1")]
    client.get(f"{API}/vendors/")
    throttled = client.get(f"{API}/vendors/")
    assert throttled.status_code == 429 and throttled["X-RateLimit-Remaining"] == "0"
    assert throttled.json()["code"] == "throttled" and int(throttled["Retry-After"]) > 0


def test_cors_exposes_the_headers_a_browser_client_needs(client):
    response = client.get(f"{API}/results/", HTTP_ORIGIN="https://analyst.example")
    exposed = {h.strip().lower() for h in response["Access-Control-Expose-Headers"].split(",")}
    assert {"etag", "retry-after", "link", "content-disposition", "x-ratelimit-limit", "x-ratelimit-remaining",
            "x-ratelimit-reset"} <= exposed


# --- Schema ------------------------------------------------------------------------------------

def test_schema_is_packageable(client):
    schema = get(client, f"{API}/schema/?format=json").json()
    version = schema["info"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version  # semantic: a generated package installs
    assert schema["servers"] and schema["servers"][0]["url"] == "http://testserver"
    runs = schema["paths"]["/api/v1/runs/"]["post"]["responses"]
    assert {"400", "401", "403", "429"} <= set(runs)
    errors = schema["components"]["schemas"]["ParameterErrors"]["properties"]
    assert errors["errors"]["type"] == "object"
    assert errors["errors"]["additionalProperties"] == {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize("query", ["page_size=", "page="])
def test_empty_page_parameters_are_400(client, query):
    body = get(client, f"{API}/results/?{query}", status=400).json()
    assert query.rstrip("=") in body["errors"]


@pytest.mark.parametrize("query", ["min_qps=2.2e-311", "tps=8.3e-302", "min_tps=5e-324"])
def test_tiny_numbers_the_schema_allows_are_accepted(client, query):
    assert "results" in get(client, f"{API}/results/?{query}").json()


# --- CSV for analysts --------------------------------------------------------------------------

import csv  # noqa: E402
import io  # noqa: E402

from django.core.management import call_command  # noqa: E402

CONTRACT = ["vendor", "document", "published", "engine", "version", "family", "memory_ratio", "flavor",
            "deployment", "edition", "vcpus", "memory_gb", "storage", "max_connections", "iops", "tps", "qps",
            "tpm", "capacity_rows", "data_rows", "hot_rows", "ro_qps", "rw_qps", "table", "section", "methodology",
            "iops_note"]
APPENDED = ["id", "url", "tps_per_core", "statements_per_transaction", "origin", "qps_normalised", "memory_ratio_derived",
            "revised_from", "revised_changes",
            # issue 33: an internal measurement's context (empty for a vendor's row)
            "run", "tps_ci_low", "tps_ci_high", "client_bound", "other_load", "latency_caveat", "repeats_n", "repeats_stdev",
            # issue 35.5: a capacity search's sustained rate and its p95 bound (empty for every other row)
            "sustained_tps", "latency_bound_ms",
            # issue 49.1: what the vendor's newest later edition printed otherwise (empty for the newest row)
            "superseded_by", "superseded_changes",
            # issue 46: the coefficient of variation of TPS over an internal row's runs
            "tps_cv",
            # issue 46.6: the client host loaded beyond its cores (acknowledged when published)
            "client_disturbed",
            # issue 51.1: an internal row's p95 latency (a metric declared later: appended, empty for a vendor's row)
            "latency_p95_ms"]


def csv_body(response):
    return b"".join(response.streaming_content)


def test_csv_keeps_the_contract_and_appends_its_columns_identical_to_export_results(client):
    body = csv_body(get(client, f"{API}/results/?format=csv"))
    out = io.StringIO()
    call_command("export_results", stdout=out)
    assert body == out.getvalue().encode()
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert list(rows[0]) == CONTRACT + APPENDED
    # A hand-checked row: Huawei 2023-08-03, MySQL 8.0 general-purpose 2 vCPUs 4 GB (tps with its two decimals since
    # 3.0.0, issue 52.10: the printed figure's value; as printed with the deprecated printed_cells=true).
    row = next(r for r in rows if r["document"] == "huawei-2023-08-03-rds" and r["tps"])
    result = get(client, f"{API}{row['url'].removeprefix('/api/v1')}").json()
    assert result["id"] == int(row["id"]) and row["tps"] == f"{Decimal(result['printed']['tps']):.2f}"
    assert row["version"] == f"MySQL {result['version']}"
    printed = list(csv.DictReader(io.StringIO(csv_body(get(client, f"{API}/results/?format=csv&printed_cells=true")).decode())))
    same_row = next(r for r in printed if r["id"] == row["id"])
    assert same_row["tps"] == result["printed"]["tps"] and same_row["version"] == result["version"]
    assert row["statements_per_transaction"] == "20" and row["origin"] == "vendor"
    assert row["tps_per_core"] == f"{float(row['tps']) / int(row['vcpus']):.2f}"


def test_csv_bom_and_link_to_the_column_dictionary(client):
    plain = get(client, f"{API}/results/?format=csv&engine=ppas")
    assert plain["Link"] == '<http://testserver/api/v1/results/columns/>; rel="describedby"'
    with_bom = csv_body(get(client, f"{API}/results/?format=csv&engine=ppas&bom=true"))
    assert with_bom == b"\xef\xbb\xbf" + csv_body(plain)
    assert "bom" in get(client, f"{API}/results/?format=csv&bom=perhaps", status=400).json()["errors"]


def test_column_dictionary_describes_every_column(client):
    schema = get(client, f"{API}/results/columns/").json()
    fields = {f["name"]: f for f in schema["fields"]}
    assert list(fields) == CONTRACT + APPENDED
    assert fields["version"]["type"] == "string" and fields["vcpus"]["type"] == "integer"
    assert fields["tps"]["type"] == "number" and fields["tps"]["unit"] == "transactions per second"
    assert fields["published"]["type"] == "date" and schema["primaryKey"] == ["id"]
    assert all(f["description"] for f in schema["fields"])


def test_pandas_reads_the_csv_with_the_documented_options(client, catalogue_server):
    pandas = pytest.importorskip("pandas")
    options = get(client, f"{API}/results/columns/").json()["pandas"]
    assert options["dtype"]["version"] == "str"
    # The session's live server over the committed catalogue (pytest-django's live_server would flush it).
    frame = pandas.read_csv(f"{catalogue_server}{API}/results/?format=csv", **options)
    assert str(frame["vcpus"].dtype) == "Int64" and str(frame["max_connections"].dtype) == "Int64"
    assert str(frame["tps"].dtype) == "float64" and str(frame["published"].dtype).startswith("datetime64")
    versions = set(frame["version"])
    assert {"MySQL 5.7", "MySQL 8.0", "SQL Server 2008 R2"} <= versions and all(isinstance(v, str) for v in versions)
    assert "PostgreSQL 10" in versions, versions  # PostgreSQL majors stay text, not 10.0 (no options needed since 3.0.0)
    assert frame["tps"].isna().any() and (frame["family"] == "").any()  # missing numbers NaN, texts ''
    assert frame["id"].is_unique


def test_api_root_lists_every_endpoint(client):
    body = get(client, f"{API}/").json()
    for name, path in {"spec": "spec/", "results-columns": "results/columns/", "runs": "runs/", "targets": "targets/",
                       "profiles": "profiles/", "schema": "schema/", "docs": "docs/", "results": "results/"}.items():
        assert body[name] == f"http://testserver{API}/{path}", name


def test_fields_chooses_json_fields_and_csv_columns(client):
    body = get(client, f"{API}/results/?engine=ppas&fields=id&fields=tps&fields=origin").json()
    assert body["results"] and all(set(r) == {"id", "tps", "origin"} for r in body["results"])
    full = get(client, f"{API}/results/?engine=ppas").json()["results"]
    assert [(r["id"], r["tps"]) for r in body["results"]] == [(r["id"], r["tps"]) for r in full]
    text = csv_body(get(client, f"{API}/results/?format=csv&engine=ppas&fields=tps,vcpus,id")).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["tps", "vcpus", "id"]
    every = list(csv.DictReader(io.StringIO(csv_body(get(client, f"{API}/results/?format=csv&engine=ppas")).decode())))
    assert rows[1:] == [[r["tps"], r["vcpus"], r["id"]] for r in every]


@pytest.mark.parametrize("query", ["fields=colour", "format=csv&fields=printed", "fields=,"])
def test_unknown_fields_are_400(client, query):
    assert "fields" in get(client, f"{API}/results/?{query}", status=400).json()["errors"]


# --- Cursor pagination -----------------------------------------------------------------------------

def walk(client, query, size=7):
    url, seen, pages = f"{API}/results/?{query}&pagination=cursor&page_size={size}", [], 0
    while url:
        body = get(client, url).json()
        assert body["count"] is None and body["previous"] is None
        seen += [r["id"] for r in body["results"]]
        url, pages = body["next"], pages + 1
    return seen, pages


@pytest.mark.parametrize("query", ["engine=mysql", "engine=mysql&ordering=-tps", "ordering=family&ordering=-qps",
                                   "ordering=deployment&ordering=-vcpus", "ordering=-memory_ratio&ordering=published",
                                   "ordering=version&ordering=vendor&ordering=-iops", "ordering=table", "ordering=-iops",
                                   "ordering=tpm&ordering=-vcpus"])
def test_cursor_pages_walk_the_same_order_as_numbered_pages(client, query):
    seen, pages = walk(client, query)
    assert seen == ids(client, query)
    assert pages == -(-len(seen) // 7)


def test_cursor_pages_are_stable_when_a_result_is_added(client):
    query = "engine=mysql&ordering=-tps&page_size=10"
    first = get(client, f"{API}/results/?{query}&pagination=cursor").json()
    numbered = get(client, f"{API}/results/?{query}").json()
    # A new result that sorts first (the highest TPS) is published between two requests.
    row = PublishedResult.objects.get(pk=first["results"][0]["id"])
    row.pk, row.position, row.tps = None, 999, row.tps + 100000
    row.save()
    following = get(client, first["next"]).json()
    before = [r["id"] for r in first["results"]]
    after = [r["id"] for r in following["results"]]
    assert not set(before) & set(after) and row.pk not in after
    # Exactly the rows that came next before the insert: nothing repeated, nothing skipped.
    assert before + after == [i for i in ids(client, "engine=mysql&ordering=-tps") if i != row.pk][:20]
    # Numbered pages shift: the old page 1's last row comes again on page 2.
    page2 = [r["id"] for r in get(client, numbered["next"]).json()["results"]]
    assert page2[0] == numbered["results"][-1]["id"]


@pytest.mark.parametrize("query, name", [
    ("pagination=cursor&cursor=notacursor", "cursor"), ("cursor=abc", "cursor"), ("pagination=cursor&page=2", "page"),
    ("pagination=pages", "pagination"), ("pagination=cursor&pagination=page", "pagination"),
])
def test_bad_cursor_parameters_are_400(client, query, name):
    assert name in get(client, f"{API}/results/?{query}", status=400).json()["errors"]


def test_a_cursor_belongs_to_its_ordering(client):
    first = get(client, f"{API}/results/?ordering=-tps&pagination=cursor&page_size=5").json()
    cursor = parse_qs(urlparse(first["next"]).query)["cursor"][0]
    body = get(client, f"{API}/results/?ordering=vcpus&pagination=cursor&cursor={cursor}", status=400).json()
    assert "ordering" in body["errors"]["cursor"][0]
