"""A consumer's client (issue 13): openapi-python-client (the version pinned in requirements-dev.txt)
generates a package from the live schema (the generator is pinned in requirements-dev.txt and installed at
set-up; nothing is fetched at test time) and a script with that package on its path uses it against the running server: a two-field ordering
with a two-engine filter, paging through results by cursor, spec lookup (an answer and an ambiguity),
compare, sizing, and a 400."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import requests

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rds_performance_whitepaper_api_client"  # from the schema's title

SCRIPT = textwrap.dedent('''
    import json, sys
    from urllib.parse import parse_qs, urlparse

    import httpx
    from rds_performance_whitepaper_api_client import Client
    from rds_performance_whitepaper_api_client.api.compare import compare_retrieve
    from rds_performance_whitepaper_api_client.api.results import results_list
    from rds_performance_whitepaper_api_client.api.sizing import sizing_retrieve
    from rds_performance_whitepaper_api_client.api.spec import spec_retrieve
    from rds_performance_whitepaper_api_client.models import (AmbiguousSpec, Comparison, ParameterErrors,
        ResultsListOrderingItem, ResultsListPagination, SizingRetrieveMetric, SpecAnswer)

    base, huawei, alibaba = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    client = Client(base_url=base, raise_on_unexpected_status=True, timeout=60)
    out = {}

    # A two-field ordering and a two-engine filter (lists: repeated parameters).
    page = results_list.sync(client=client, engine=["mysql", "postgresql"], page_size=500,
                             ordering=[ResultsListOrderingItem.VCPUS, ResultsListOrderingItem.TPS_DESC])
    out["list"] = {"count": page.count, "rows": [[r.id, r.engine, r.flavor.vcpus, r.tps] for r in page.results]}

    # Paging through every PostgreSQL result by cursor, following `next`.
    ids, cursor, pages = [], None, 0
    while True:
        kwargs = {"cursor": cursor} if cursor else {}
        page = results_list.sync(client=client, engine=["postgresql"], page_size=25, ordering=[ResultsListOrderingItem.TPS_DESC],
                                 pagination=ResultsListPagination.CURSOR, **kwargs)
        ids += [r.id for r in page.results]
        pages += 1
        if not page.next_:
            break
        cursor = parse_qs(urlparse(page.next_).query)["cursor"][0]
    out["cursor"] = {"ids": ids, "pages": pages}

    # Spec lookup: one answer, then an ambiguity (409, which httpx raises for).
    answer = spec_retrieve.sync(client=client, engine="mysql", version="8.0", family="dedicated", vcpus=8, memory_gb=64)
    assert isinstance(answer, SpecAnswer), answer
    out["spec"] = {"tps": answer.result.tps, "document": answer.document.slug}
    detailed = spec_retrieve.sync_detailed(client=client, engine="mysql", version="5.7", family="general", vcpus=4,
                                           memory_gb=16)
    assert isinstance(detailed.parsed, AmbiguousSpec), detailed.parsed
    raw = httpx.get(base + "/api/v1/spec/", params={"engine": "mysql", "version": "5.7", "family": "general",
                                                     "vcpus": 4, "memory_gb": 16})
    try:
        raw.raise_for_status()
        raised = False
    except httpx.HTTPStatusError:
        raised = True
    out["ambiguous"] = {"status": int(detailed.status_code), "code": detailed.parsed.code,
                        "disambiguate_by": detailed.parsed.disambiguate_by,
                        "vendors": sorted({c.vendor for c in detailed.parsed.candidates}), "httpx_raises": raised}

    comparison = compare_retrieve.sync(client=client, sel=[str(huawei), str(alibaba)])
    assert isinstance(comparison, Comparison), comparison
    out["compare"] = {"mode": str(comparison.mode), "diffs": [f.difference_pct for f in comparison.flavours],
                      "qps_definitions_differ": comparison.caveats.qps_definitions_differ}

    sizing = sizing_retrieve.sync(client=client, engine="mysql", version="8.0", target=3000.0,
                                  metric=SizingRetrieveMetric.TPS)
    first = sizing.answers[0]
    out["sizing"] = {"vcpus": first.result.flavor.vcpus, "memory_gb": first.result.flavor.memory_gb,
                     "printed": first.printed, "also": [a.document for a in first.also]}

    bad = results_list.sync(client=client, engine=["mysql", "oracle"])
    assert isinstance(bad, ParameterErrors), bad
    out["bad"] = {"code": bad.code, "errors": bad.errors.to_dict()}
    print(json.dumps(out))
''')


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=900, **kwargs)
    assert result.returncode == 0, (argv, result.stdout[-3000:], result.stderr[-3000:])
    return result.stdout


@pytest.fixture(scope="module")
def generated_client(catalogue_server, tmp_path_factory):
    """The suite's python with the package generated from the live schema on its path. The generator and the
    package's dependencies (httpx, attrs, python-dateutil) are pinned in requirements-dev.txt and installed at
    set-up: nothing is fetched at test time."""
    work = tmp_path_factory.mktemp("api-client")
    python = Path(sys.executable)
    env = {**os.environ, "PYTHONPATH": str(work / "client")}
    schema = requests.get(f"{catalogue_server}/api/v1/schema/?format=json", timeout=60)
    schema.raise_for_status()
    (work / "schema.json").write_bytes(schema.content)
    output = run([str(python.parent / "openapi-python-client"), "generate", "--path", str(work / "schema.json"),
                  "--output-path", str(work / "client")], env=env, cwd=work)
    assert "Warning" not in output, output  # every operation and model generated
    return python, env


def ids(server, query):
    body = requests.get(f"{server}/api/v1/results/?page_size=500&{query}", timeout=60).json()
    assert body["count"] == len(body["results"])
    return [r["id"] for r in body["results"]]


def test_a_generated_client_lists_pages_looks_up_compares_sizes_and_reads_a_400(catalogue_server, generated_client):
    python, env = generated_client
    # huawei-2025-10-21-mysql.yaml:534 (8 vCPU 64 GB dedicated 8.0: TPS 3102, QPS 62045) and
    # alibaba-2019-06-18-rds.yaml:196 (mysql.x8.medium.2: TPS 391, QPS 7054).
    (huawei,) = ids(catalogue_server, "document=huawei-2025-10-21-mysql&version=8.0&family=dedicated&vcpus=8&memory_gb=64")
    (alibaba,) = ids(catalogue_server, "document=alibaba-2019-06-18-rds&flavor=mysql.x8.medium.2")
    script = Path(env["PYTHONPATH"]).parent / "script.py"
    script.write_text(SCRIPT)
    out = json.loads(run([str(python), str(script), catalogue_server, str(huawei), str(alibaba)], env=env))

    mysql, postgresql = ids(catalogue_server, "engine=mysql"), ids(catalogue_server, "engine=postgresql")
    rows = out["list"]["rows"]
    assert out["list"]["count"] == len(rows) == len(mysql) + len(postgresql)
    assert {r[1] for r in rows} == {"mysql", "postgresql"}
    keys = [(vcpus, -(tps if tps is not None else float("-inf"))) for _id, _e, vcpus, tps in rows]
    assert keys == sorted(keys)  # vCPUs ascending, then TPS descending (missing last)

    assert sorted(out["cursor"]["ids"]) == sorted(postgresql) and len(set(out["cursor"]["ids"])) == len(postgresql)
    assert out["cursor"]["pages"] == -(-len(postgresql) // 25)
    assert out["cursor"]["ids"] == ids(catalogue_server, "engine=postgresql&ordering=-tps")

    assert out["spec"] == {"tps": 3102.0, "document": "huawei-2025-10-21-mysql"}
    assert out["ambiguous"]["status"] == 409 and out["ambiguous"]["code"] == "ambiguous"
    assert out["ambiguous"]["httpx_raises"] is True and "vendor" in out["ambiguous"]["disambiguate_by"]
    assert out["ambiguous"]["vendors"] == ["alibaba", "huawei"]

    assert out["compare"] == {"mode": "flavours", "diffs": [None, -87.4], "qps_definitions_differ": True}
    assert out["sizing"] == {"vcpus": 8, "memory_gb": 64, "printed": "3102", "also": ["huawei-2023-08-03-rds"]}

    assert out["bad"]["code"] == "invalid" and list(out["bad"]["errors"]) == ["engine"]
    assert "oracle" in out["bad"]["errors"]["engine"][0]
