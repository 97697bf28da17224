"""Compare, sizing and the best result per flavour through the API (issue 13): the pages' answers as
JSON, from the same domain functions. Expected numbers are the documents' (whitepaper/data/*.yaml, line
numbers below) and hand calculations."""

import re
from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.test_origins import fresh_stamp, internal  # noqa: F401  (fixtures: a published run)

pytestmark = pytest.mark.django_db

API = "/api/v1"
MYSQL_2025 = "huawei-2025-10-21-mysql"
RDS_2023 = "huawei-2023-08-03-rds"
ALIBABA = "alibaba-2019-06-18-rds"


def get(client, path, status=200):
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code, response.content[:600])
    return response.json()


def result_id(client, query):
    body = get(client, f"{API}/results/?{query}")
    assert body["count"] == 1, (query, body["count"])
    return body["results"][0]["id"]


def series(**keys):
    return quote("&".join(f"{k}={v}" for k, v in keys.items()), safe="")


@pytest.fixture
def two_flavours(client):
    # huawei-2025-10-21-mysql.yaml:534  8 vCPU 64 GB dedicated 8.0: TPS 3102, QPS 62045 (20 statements)
    # alibaba-2019-06-18-rds.yaml:196   mysql.x8.medium.2, 2 vCPU 16 GB 5.7: TPS 391, QPS 7054 (about 18)
    huawei = result_id(client, f"document={MYSQL_2025}&version=8.0&family=dedicated&vcpus=8&memory_gb=64")
    alibaba = result_id(client, f"document={ALIBABA}&flavor=mysql.x8.medium.2")
    return huawei, alibaba


# --- Compare -------------------------------------------------------------------------------------

def test_compare_two_flavours_gives_the_difference_and_the_qps_caveat(client, two_flavours):
    huawei, alibaba = two_flavours
    body = get(client, f"{API}/compare/?sel={huawei}&sel={alibaba}")
    assert body["mode"] == "flavours" and body["metric"] == "tps" and body["baseline"] == 0
    assert body["unit"] == "transactions per second" and body["sizes"] == []
    base, other = body["flavours"]
    assert (base["value"], base["printed"], base["baseline"], base["difference_pct"]) == (3102, "3102", True, None)
    assert (other["value"], other["printed"]) == (391, "391")
    assert other["difference_pct"] == -87.4  # (391 - 3102) / 3102 = -87.39 %
    assert other["result"]["id"] == alibaba and other["result"]["origin"] == "vendor"
    assert [s["kind"] for s in body["selections"]] == ["result", "result"]
    caveats = body["caveats"]
    assert caveats["qps_definitions_differ"] is True and caveats["statements_per_transaction"] == [18, 20]
    assert "20 per sysbench transaction" in caveats["qps_note"]
    fields = {d["field"] for d in caveats["methodology_differences"]}
    assert "tool_version" not in fields or len(caveats["methodology_differences"]) >= 1
    assert "client" in fields  # Huawei names its ECS client, Alibaba does not state one


def test_compare_baseline_and_metric_as_the_page_takes_them(client, two_flavours):
    huawei, alibaba = two_flavours
    body = get(client, f"{API}/compare/?sel={huawei}&sel={alibaba}&base=1&metric=qps")
    first, base = body["flavours"]
    assert base["baseline"] and body["baseline"] == 1 and body["unit"] == "queries per second"
    assert first["difference_pct"] == 779.6  # (62045 - 7054) / 7054 = +779.57 %
    page = client.get(f"/compare/?sel={huawei}&sel={alibaba}&base=1&metric=qps").content.decode()
    assert "+779.6%" in page  # the page shows the same number


def test_compare_qps_normalised_to_one_definition(client, two_flavours):
    # QPS on 18 statements per transaction (the page's normalised QPS): Huawei 62045 x 18 / 20 = 55840.50,
    # Alibaba 7054 x 18 / 18 = 7054; against Alibaba: (55840.5 - 7054) / 7054 = +691.61 %.
    huawei, alibaba = two_flavours
    body = get(client, f"{API}/compare/?sel={huawei}&sel={alibaba}&base=1&metric=qps_normalised")
    first, base = body["flavours"]
    assert body["metric"] == "qps_normalised" and base["baseline"]
    assert body["unit"] == "queries per second, normalised to 18 statements per transaction"
    assert float(first["value"]) == 55840.5 and float(base["value"]) == 7054
    assert first["difference_pct"] == 691.6


def test_compare_same_methodology_has_no_caveat(client):
    a = result_id(client, f"document={MYSQL_2025}&version=8.0&family=dedicated&vcpus=8&memory_gb=64")
    b = result_id(client, f"document={MYSQL_2025}&version=8.0&family=dedicated&vcpus=16&memory_gb=64")
    caveats = get(client, f"{API}/compare/?sel={a}&sel={b}")["caveats"]
    assert caveats == {"qps_definitions_differ": False, "statements_per_transaction": [20], "qps_note": None,
                       "methodology_differences": []}


def test_compare_series_per_size(client):
    s57 = series(engine="mysql", version="5.7", family="dedicated", memory_ratio="1:4", document=RDS_2023)
    s80 = series(engine="mysql", version="8.0", family="dedicated", memory_ratio="1:4", document=RDS_2023)
    body = get(client, f"{API}/compare/?sel={s57}&sel={s80}&base=1")
    assert body["mode"] == "series" and body["flavours"] == []
    assert [s["kind"] for s in body["selections"]] == ["series", "series"]
    assert "MySQL 5.7" in body["selections"][0]["label"]
    row = next(r for r in body["sizes"] if (r["vcpus"], r["memory_gb"]) == (16, 64))
    # huawei-2023-08-03-rds.yaml:364 (5.7, 表 1-7) TPS 3017; :509 (8.0, 表 1-13) TPS 4006; baseline 8.0
    assert [c["printed"] for c in row["cells"]] == ["3017", "4006"]
    assert row["cells"][0]["difference_pct"] == -24.7 and row["cells"][1]["difference_pct"] is None
    page = client.get(f"/compare/?sel={s57}&sel={s80}&base=1").content.decode()
    assert "(-24.7%)" in page
    sizes = [(r["vcpus"], r["memory_gb"]) for r in body["sizes"]]
    assert sizes == sorted(sizes)


def test_compare_splits_a_series_into_lines_of_one_edition(client):
    # Dedicated MySQL 5.7 1:4 of Huawei is printed by the 2023 and the 2025 documents: by default the newest
    # figure of each flavour (the 2025 line); with latest=false each edition is its own line.
    newest = series(engine="mysql", version="5.7", family="dedicated", vendor="huawei", memory_ratio="1:4")
    every = series(engine="mysql", version="5.7", family="dedicated", vendor="huawei", memory_ratio="1:4", latest="false")
    one = series(engine="mysql", version="5.7", family="dedicated", memory_ratio="1:4", document=RDS_2023)
    body = get(client, f"{API}/compare/?sel={newest}&sel={every}&sel={one}")
    first, second, third = body["selections"]
    assert [line["label"] for line in first["lines"]] == [""] and first["merged"] is None
    assert [line["label"] for line in second["lines"]] == ["2023", "2025"]
    assert len(second["results"]) == 2 * len(first["results"]) == 2 * len(third["results"])
    cell = body["sizes"][0]["cells"][1]
    assert cell["value"] is None and [c["line"] for c in cell["candidates"]] == ["2023", "2025"]


@pytest.mark.parametrize("query, names", [
    ("sel=1", {"sel"}),
    ("", {"sel"}),
    ("sel=1&sel=2&sel=3&sel=4&sel=5&sel=6&sel=7", {"sel"}),
    ("sel=1&sel=999999999", {"sel"}),
    ("sel=1&sel=engine%3Doracle", {"sel"}),
    ("sel=1&sel=engine%3Dmysql%26colour%3Dred", {"sel"}),
    ("sel=1&sel=2&metric=speed", {"metric"}),
    ("sel=1&sel=2&base=2", {"base"}),
    ("sel=1&sel=2&base=-1", {"base"}),
    ("sel=1&sel=2&metric=tps&metric=qps", {"metric"}),
    ("sel=1&sel=2&colour=red", {"colour"}),
    ("sel=1&sel=2&include_internal=perhaps", {"include_internal"}),
])
def test_compare_bad_input_is_a_400_naming_the_parameter(client, query, names):
    body = get(client, f"{API}/compare/?{query}", status=400)
    assert body["code"] == "invalid" and set(body["errors"]) == names, body


def test_compare_internal_measurements_only_when_asked(client, internal):  # noqa: F811
    vendor = result_id(client, f"document={MYSQL_2025}&version=8.0&family=dedicated&vcpus=8&memory_gb=64")
    body = get(client, f"{API}/compare/?sel={vendor}&sel={internal.pk}", status=400)
    assert f"No published result {internal.pk}" in body["errors"]["sel"][0]
    body = get(client, f"{API}/compare/?sel={vendor}&sel={internal.pk}&include_internal=true")
    assert body["flavours"][1]["result"]["origin"] == "internal" and body["flavours"][1]["printed"] == "812.35"
    assert "Internal measurement" in body["selections"][1]["label"]


# --- Sizing --------------------------------------------------------------------------------------

def page_sizing_rows(client, query):
    html = client.get(f"/sizing/?{query}").content.decode()
    link = r'<a href="/flavors/\d+/">(\d+)</a>'  # the size cells link to the flavour's page (issue 36.4)
    return [tuple(int(x) for x in m) for m in re.findall(rf"<tr><td[^>]*>{link}</td><td[^>]*>{link}</td>", html)]


def test_sizing_answers_the_smallest_flavour_once_per_flavour(client):
    body = get(client, f"{API}/sizing/?engine=mysql&version=8.0&target=3000")
    assert (body["engine"], body["version"], body["vendor"], body["metric"], body["target"]) == \
        ("mysql", "8.0", None, "tps", 3000)
    first = body["answers"][0]
    # huawei-2025-10-21-mysql.yaml:534 and huawei-2023-08-03-rds.yaml:531: 8 vCPU 64 GB dedicated, TPS 3102 in both
    assert (first["result"]["flavor"]["vcpus"], first["result"]["flavor"]["memory_gb"]) == (8, 64)
    assert (first["value"], first["printed"]) == (3102, "3102")
    assert first["result"]["document"]["slug"] == MYSQL_2025 and first["result"]["flavor"]["family"]["slug"] == "dedicated"
    assert [(a["document"], a["printed"]) for a in first["also"]] == [(RDS_2023, "3102")]
    assert all(a["value"] >= 3000 for a in body["answers"])
    sizes = [(a["result"]["flavor"]["vcpus"], a["result"]["flavor"]["memory_gb"]) for a in body["answers"]]
    assert sizes == page_sizing_rows(client, "engine=mysql&version=8.0&target=3000")  # the page's answer


def test_sizing_by_qps_and_vendor(client):
    body = get(client, f"{API}/sizing/?engine=mysql&target=7000&metric=qps&vendor=alibaba")
    assert body["metric"] == "qps" and body["unit"] == "queries per second"
    assert {a["result"]["vendor"] for a in body["answers"]} == {"alibaba"}
    # alibaba-2019-06-18-rds.yaml:196: mysql.x8.medium.2 (2 vCPU, 16 GB) QPS 7054 is the smallest reaching 7000
    assert body["answers"][0]["result"]["flavor"]["spec_code"] == "mysql.x8.medium.2"
    assert body["answers"][0]["printed"] == "7054"


def test_sizing_queries_do_not_grow_with_answers(client):
    with CaptureQueriesContext(connection) as few:
        small = get(client, f"{API}/sizing/?engine=mysql&version=8.0&target=9000")
    with CaptureQueriesContext(connection) as many:
        large = get(client, f"{API}/sizing/?engine=mysql&target=100")
    assert len(large["answers"]) > len(small["answers"]) + 5
    assert len(many) <= len(few) + 1, [q["sql"][:120] for q in many.captured_queries]


@pytest.mark.parametrize("query, names", [
    ("version=8.0&target=3000", {"engine"}),
    ("engine=mysql", {"target"}),
    ("engine=oracle&target=1", {"engine"}),
    ("engine=mysql&target=lots", {"target"}),
    ("engine=mysql&target=-1", {"target"}),
    ("engine=mysql&version=9.9&target=1", {"version"}),
    ("engine=mysql&vendor=nobody&target=1", {"vendor"}),
    ("engine=mysql&metric=tpm&target=1", {"metric"}),
    ("engine=mysql&target=1&target=2", {"target"}),
    ("engine=mysql&target=1&cores=4", {"cores"}),
    ("engine=mysql&target=1&include_internal=perhaps", {"include_internal"}),
])
def test_sizing_bad_input_is_a_400_naming_the_parameter(client, query, names):
    body = get(client, f"{API}/sizing/?{query}", status=400)
    assert body["code"] == "invalid" and set(body["errors"]) == names, body


def test_sizing_internal_measurements_only_when_asked(client, internal):  # noqa: F811
    # The published run: 2 vCPU / 4 GB, 812.35 TPS. No vendor document prints a 2 vCPU MySQL flavour
    # reaching 800 TPS with 4 GB, so it answers only when asked.
    plain = get(client, f"{API}/sizing/?engine=mysql&target=800")
    asked = get(client, f"{API}/sizing/?engine=mysql&target=800&include_internal=true")
    assert internal.pk not in {a["result"]["id"] for a in plain["answers"]}
    row = next(a for a in asked["answers"] if a["result"]["id"] == internal.pk)
    assert row["result"]["origin"] == "internal" and row["printed"] == "812.35"


# --- Best result per flavour ---------------------------------------------------------------------

def all_rows(client, query):
    body = get(client, f"{API}/results/?page_size=500&{query}")
    assert body["count"] == len(body["results"])
    return body["results"]


def variant(r):
    f = r["flavor"]
    return (r["vendor"], r["engine"], r["version"], (f["family"] or {}).get("slug"), f["memory_ratio"],
            r["deployment"], r["edition"], f["vcpus"], f["memory_gb"], f["spec_code"])


def test_best_defaults_to_the_newest_document_per_flavour(client):
    rows = all_rows(client, "engine=mysql&version=5.7")
    newest = {}
    for r in rows:  # per flavour, the rows of the newest document (date, then slug)
        key, doc = variant(r), (r["document"]["published"], r["document"]["slug"])
        newest.setdefault(key, []).append((doc, r["id"]))
    expected = sorted(i for group in newest.values() for doc, i in group if doc == max(d for d, _ in group))
    body = get(client, f"{API}/results/best/?engine=mysql&version=5.7&page_size=500")
    assert sorted(r["id"] for r in body["results"]) == expected and body["count"] == len(expected)
    counts = {key: len(group) for key, group in newest.items()}
    assert all(r["variant_rows"] == counts[variant(r)] for r in body["results"])
    assert any(r["variant_rows"] == 2 for r in body["results"])  # 2023 and 2025 both print Huawei 5.7
    # The same as latest=true on the list, for this engine version.
    latest = all_rows(client, "engine=mysql&version=5.7&latest=true")
    assert sorted(r["id"] for r in latest) == expected


def test_best_by_a_metric_takes_the_highest_across_documents(client):
    rows = all_rows(client, "engine=postgresql&vendor=huawei")
    best = {}
    for r in rows:
        key = variant(r)
        rank = (r["tps"] is not None, r["tps"] or 0, r["document"]["published"], r["document"]["slug"])
        if key not in best or rank > best[key][0]:
            best[key] = (rank, r["id"])
    body = get(client, f"{API}/results/best/?engine=postgresql&vendor=huawei&by=tps&page_size=500&ordering=-tps")
    assert sorted(r["id"] for r in body["results"]) == sorted(i for _rank, i in best.values())
    tps = [r["tps"] for r in body["results"]]
    assert tps == sorted(tps, reverse=True)
    # PostgreSQL 12 dedicated 1:4, 2 vCPU 8 GB: huawei-2023-08-03-rds.yaml:662 prints 446.71 TPS, the newer
    # huawei-2025-10-21-postgresql.yaml:126 prints 435.68: the highest is the older edition's.
    query = "engine=postgresql&version=12&family=dedicated&memory_ratio=1:4&vcpus=2&memory_gb=8"
    (by_tps,) = get(client, f"{API}/results/best/?{query}&by=tps")["results"]
    (newest,) = get(client, f"{API}/results/best/?{query}")["results"]
    assert (by_tps["printed"]["tps"], by_tps["document"]["slug"], by_tps["variant_rows"]) == ("446.71", RDS_2023, 2)
    assert (newest["printed"]["tps"], newest["document"]["slug"]) == ("435.68", "huawei-2025-10-21-postgresql")


@pytest.mark.parametrize("query, name", [("by=speed", "by"), ("engine=oracle", "engine"), ("by=tps&by=qps", "by"),
                                         ("ordering=colour", "ordering"), ("page_size=0", "page_size")])
def test_best_bad_input_is_a_400(client, query, name):
    assert name in get(client, f"{API}/results/best/?{query}", status=400)["errors"]


def test_best_pages_and_is_vendor_published_unless_asked(client, internal):  # noqa: F811
    first = get(client, f"{API}/results/best/?engine=mysql&page_size=10")
    second = get(client, first["next"].replace("http://testserver", ""))
    assert not {r["id"] for r in first["results"]} & {r["id"] for r in second["results"]}
    everything = get(client, f"{API}/results/best/?engine=mysql&page_size=500")["results"]
    assert internal.pk not in {r["id"] for r in everything}
    asked = get(client, f"{API}/results/best/?engine=mysql&page_size=500&include_internal=true")["results"]
    assert internal.pk in {r["id"] for r in asked}


# --- Listed and documented -------------------------------------------------------------------------

def test_root_and_schema_list_compare_sizing_and_best(client):
    root = get(client, f"{API}/")
    for name, path in [("compare", "/compare/"), ("sizing", "/sizing/"), ("results-best", "/results/best/")]:
        assert root[name].endswith(f"{API}{path}")
    schema = get(client, f"{API}/schema/?format=json")
    for path in ("/api/v1/compare/", "/api/v1/sizing/", "/api/v1/results/best/"):
        operation = schema["paths"][path]["get"]
        assert {"200", "400", "429"} <= set(operation["responses"]), path
    compare = {p["name"]: p for p in schema["paths"]["/api/v1/compare/"]["get"]["parameters"]}
    assert compare["sel"]["required"] and compare["sel"]["schema"]["type"] == "array"
    assert set(compare["metric"]["schema"]["enum"]) == {"tps", "qps", "qps_normalised", "tps_per_core", "tpm", "ro_qps", "rw_qps"}
