"""A consumer's client (issue 13): openapi-python-client (the version pinned in requirements-dev.txt)
generates a package from the live schema (the generator is pinned in requirements-dev.txt and installed at
set-up; nothing is fetched at test time) and a script with that package on its path uses it against the running server: a two-field ordering
with a two-engine filter (the full result type), a `fields=` page (the partial type), paging by cursor following
the Link header, the CSV (its own operation, read as text), spec lookup (an answer and an ambiguity), compare,
sizing, a 400, and the Parquet (read by the test with pandas, polars and DuckDB); mypy checks the script against the package with the plain anonymous Client (issue 25.3, 25.4)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pandas
import polars
import pytest
import requests

from tests.test_api_parquet import KEYS as HAND_READ_KEYS, ROWS as HAND_READ_ROWS

from .tiers import tier
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rds_performance_whitepaper_api_client"  # from the schema's title

SCRIPT = textwrap.dedent('''
    import json, sys
    from urllib.parse import parse_qs, urlparse

    import httpx
    from rds_performance_whitepaper_api_client import Client
    from rds_performance_whitepaper_api_client.api.compare import compare_retrieve
    from rds_performance_whitepaper_api_client.api.results import results_csv_retrieve, results_list, results_parquet_retrieve
    from rds_performance_whitepaper_api_client.api.sizing import sizing_retrieve
    from rds_performance_whitepaper_api_client.api.spec import spec_retrieve
    from rds_performance_whitepaper_api_client.types import File
    from rds_performance_whitepaper_api_client.models import (AmbiguousSpec, Comparison, PaginatedPartialResultList,
        PaginatedResultList, ParameterErrors, ResultsListFieldsItem, ResultsListOrderingItem, ResultsListPagination, SizingRetrieveMetric,
        SpecAnswer)

    base, huawei, alibaba, parquet_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    # The plain, anonymous client: public reads declare no security (mypy checks this script against it).
    client = Client(base_url=base, raise_on_unexpected_status=True, timeout=httpx.Timeout(60))
    out: dict[str, object] = {}

    # A two-field ordering and a two-engine filter (lists: repeated parameters). Without fields= the page is the
    # full PaginatedResultList: every field of a result typed as required.
    page = results_list.sync(client=client, engine=["mysql", "postgresql"], page_size=500,
                             ordering=[ResultsListOrderingItem.VCPUS, ResultsListOrderingItem.TPS_DESC])
    assert isinstance(page, PaginatedResultList), page
    vcpus: list[int] = [r.flavor.vcpus for r in page.results]
    out["list"] = {"count": page.count, "rows": [[r.id, r.engine, r.flavor.vcpus, r.tps] for r in page.results]}
    partial = results_list.sync(client=client, engine=["mysql"], page_size=2, fields=[ResultsListFieldsItem.ID, ResultsListFieldsItem.TPS])
    assert isinstance(partial, PaginatedPartialResultList), partial
    out["partial"] = [sorted(r.to_dict()) for r in partial.results]

    # Paging through every PostgreSQL result by cursor, following the Link header's rel="next" (the body's `next`).
    ids: list[int] = []
    pages, links = 0, []
    detailed = results_list.sync_detailed(client=client, engine=["postgresql"], page_size=25,
                                          ordering=[ResultsListOrderingItem.TPS_DESC],
                                          pagination=ResultsListPagination.CURSOR)
    body = detailed.parsed
    headers = httpx.Headers(dict(detailed.headers))
    while True:
        assert isinstance(body, PaginatedResultList), body
        ids += [r.id for r in body.results]
        pages += 1
        following = httpx.Response(200, headers=headers).links.get("next", {}).get("url")
        links.append(following == (body.next_ or None))
        if not following:
            break
        raw_page = client.get_httpx_client().get(following)
        raw_page.raise_for_status()
        body, headers = PaginatedResultList.from_dict(raw_page.json()), raw_page.headers
    out["cursor"] = {"ids": ids, "pages": pages, "link_is_next": all(links)}

    # The whole filtered set as CSV: its own operation, read as text.
    csv_text = results_csv_retrieve.sync(client=client, engine=["mysql"], version=["8.0"])
    assert isinstance(csv_text, str), csv_text
    out["csv"] = csv_text

    # The whole set as Parquet (issue 37.7): its own operation, read as a file (the test reads it with pandas,
    # polars and DuckDB).
    parquet = results_parquet_retrieve.sync(client=client)
    assert isinstance(parquet, File), parquet
    with open(parquet_path, "wb") as sink:
        sink.write(parquet.payload.read())

    # Spec lookup: one answer, then an ambiguity (409, which httpx raises for).
    answer = spec_retrieve.sync(client=client, engine="mysql", version="8.0", family="dedicated", vcpus=8, memory_gb=64)
    assert isinstance(answer, SpecAnswer), answer
    out["spec"] = {"tps": answer.result.tps, "document": answer.document.slug}
    ambiguous = spec_retrieve.sync_detailed(client=client, engine="mysql", version="5.7", family="general", vcpus=4,
                                            memory_gb=16)
    assert isinstance(ambiguous.parsed, AmbiguousSpec), ambiguous.parsed
    raw = httpx.get(base + "/api/v1/spec/", params={"engine": "mysql", "version": "5.7", "family": "general",
                                                     "vcpus": 4, "memory_gb": 16})
    try:
        raw.raise_for_status()
        raised = False
    except httpx.HTTPStatusError:
        raised = True
    out["ambiguous"] = {"status": int(ambiguous.status_code), "code": ambiguous.parsed.code,
                        "disambiguate_by": ambiguous.parsed.disambiguate_by,
                        "vendors": sorted({c.vendor for c in ambiguous.parsed.candidates}), "httpx_raises": raised}

    comparison = compare_retrieve.sync(client=client, sel=[str(huawei), str(alibaba)])
    assert isinstance(comparison, Comparison), comparison
    out["compare"] = {"mode": str(comparison.mode), "diffs": [f.difference_pct for f in comparison.flavours],
                      "qps_definitions_differ": comparison.caveats.qps_definitions_differ}

    sizing = sizing_retrieve.sync(client=client, engine="mysql", version="8.0", target=3000.0,
                                  metric=SizingRetrieveMetric.TPS)
    assert sizing is not None and not isinstance(sizing, ParameterErrors) and hasattr(sizing, "answers"), sizing
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
@tier("slow")
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
    # A consumer's generator configuration: the Parquet media type read as bytes (openapi-python-client knows
    # application/octet-stream, not the registered application/vnd.apache.parquet).
    (work / "config.yaml").write_text("content_type_overrides:\n  application/vnd.apache.parquet: application/octet-stream\n")
    generated = subprocess.run([str(python.parent / "openapi-python-client"), "generate", "--path", str(work / "schema.json"),
                                "--output-path", str(work / "client"), "--config", str(work / "config.yaml")],
                               capture_output=True, text=True, timeout=900, env=env, cwd=work)
    assert generated.returncode == 0, generated.stderr[-3000:]
    # every operation and model generated (a response it cannot read is a warning on stderr)
    assert "Warning" not in generated.stdout and "Cannot parse" not in generated.stderr, generated.stderr[-3000:]
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
    # The script type-checks against the generated package with the plain anonymous Client (before 2.1.0 every
    # call was typed as needing an AuthenticatedClient, and list items typed every field as optional).
    run([str(python), "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull, str(script)], env=env,
        cwd=script.parent)
    parquet = script.parent / "results.parquet"
    out = json.loads(run([str(python), str(script), catalogue_server, str(huawei), str(alibaba), str(parquet)], env=env))

    mysql, postgresql = ids(catalogue_server, "engine=mysql"), ids(catalogue_server, "engine=postgresql")
    rows = out["list"]["rows"]
    assert out["list"]["count"] == len(rows) == len(mysql) + len(postgresql)
    assert {r[1] for r in rows} == {"mysql", "postgresql"}
    keys = [(vcpus, -(tps if tps is not None else float("-inf"))) for _id, _e, vcpus, tps in rows]
    assert keys == sorted(keys)  # vCPUs ascending, then TPS descending (missing last)

    assert sorted(out["cursor"]["ids"]) == sorted(postgresql) and len(set(out["cursor"]["ids"])) == len(postgresql)
    assert out["cursor"]["pages"] == -(-len(postgresql) // 25)
    assert out["cursor"]["ids"] == ids(catalogue_server, "engine=postgresql&ordering=-tps")
    assert out["cursor"]["link_is_next"] is True
    assert out["partial"] == [["id", "tps"], ["id", "tps"]]
    assert out["csv"] == requests.get(f"{catalogue_server}/api/v1/results/?format=csv&engine=mysql&version=8.0",
                                      timeout=60).text
    assert out["csv"].splitlines()[0].startswith("vendor,document,published,engine,version")

    assert out["spec"] == {"tps": 3102.0, "document": "huawei-2025-10-21-mysql"}
    assert out["ambiguous"]["status"] == 409 and out["ambiguous"]["code"] == "ambiguous"
    assert out["ambiguous"]["httpx_raises"] is True and "vendor" in out["ambiguous"]["disambiguate_by"]
    assert out["ambiguous"]["vendors"] == ["alibaba", "huawei"]

    assert out["compare"] == {"mode": "flavours", "diffs": [None, -87.4], "qps_definitions_differ": True}
    assert out["sizing"] == {"vcpus": 8, "memory_gb": 64, "printed": "3102", "also": ["huawei-2023-08-03-rds"]}

    assert out["bad"]["code"] == "invalid" and list(out["bad"]["errors"]) == ["engine"]
    assert "oracle" in out["bad"]["errors"]["engine"][0]

    # The Parquet the generated client saved, read with no options: the rows read by hand in the documents.
    frames = {"pandas": [{k: (None if pandas.isna(v) else v) for k, v in r.items()}
                         for r in pandas.read_parquet(parquet).to_dict("records")],
              "polars": polars.read_parquet(parquet).to_dicts()}
    cursor = duckdb.connect().execute(f"SELECT * FROM read_parquet('{parquet}')")
    frames["duckdb"] = [dict(zip([d[0] for d in cursor.description], r)) for r in cursor.fetchall()]
    csv_ids = [int(i) for i in requests.get(f"{catalogue_server}/api/v1/results/csv/?fields=id", timeout=60).text.split()[1:]]
    for reader, records in frames.items():
        assert [r["id"] for r in records] == csv_ids, reader  # the CSV's rows, in its order
        for row in HAND_READ_ROWS:
            matches = [r for r in records if all(r[k] == row[k] for k in HAND_READ_KEYS if k in row)]
            assert len(matches) == 1 and {k: matches[0][k] for k in row} == row, (reader, row)


RUNS_SCRIPT = textwrap.dedent('''
    import json, sys

    import httpx
    from rds_performance_whitepaper_api_client import AuthenticatedClient
    from rds_performance_whitepaper_api_client.api.runs import runs_list
    from rds_performance_whitepaper_api_client.models import PaginatedRunList
    from rds_performance_whitepaper_api_client.types import Unset

    base, token = sys.argv[1], sys.argv[2]
    # The generated client's AuthenticatedClient sends `Authorization: Bearer <token>` (its default prefix).
    client = AuthenticatedClient(base_url=base, token=token, raise_on_unexpected_status=True, timeout=httpx.Timeout(60))
    page = runs_list.sync(client=client)
    assert isinstance(page, PaginatedRunList), page
    run = page.results[0]
    # Overrides are the fields a launch changed (each optional in RunOverrides): narrowed, then typed.
    overrides = run.overrides
    assert not isinstance(overrides, Unset)
    threads, sweep = overrides.threads, overrides.thread_sweep
    assert isinstance(threads, int) and isinstance(sweep, list), (threads, sweep)
    print(json.dumps({"threads": threads, "sweep": sweep, "url": run.url, "html_url": run.html_url,
                      "types": [type(threads).__name__, [type(t).__name__ for t in sweep]]}))
''')


@pytest.mark.django_db(transaction=True)
def test_a_generated_client_reads_typed_runs_with_a_bearer_token(catalogue_server, generated_client, django_db_blocker):
    """Issue 37.1/37.4/37.5: a run launched with the form's text values, read through the generated client's
    AuthenticatedClient (Bearer): typed values, the run's API URL. The rows are committed (the live server reads
    them on its own connection: a transactional test) and removed afterwards."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from runs.models import BenchmarkProfile, Run, Target
    from runs.services import launch_run

    python, env = generated_client
    with django_db_blocker.unblock():
        user = User.objects.create_user("client-37", is_staff=True)
        token = Token.objects.create(user=user)
        target = Target.objects.create(name="client-37", engine="mysql", host="127.0.0.1", port=3306, database="sbtest",
                                       user="bench")
        seeded = not BenchmarkProfile.objects.exists()
        seed_profiles_for_tests()
        profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
        run = launch_run(target=target, profile=profile, overrides={"threads": "4", "thread_sweep": "2, 4"}, user=user)
        try:
            script = Path(env["PYTHONPATH"]).parent / "runs_script.py"
            script.write_text(RUNS_SCRIPT)
            run_([str(python), "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull, str(script)], env=env,
                 cwd=script.parent)
            out = json.loads(run_([str(python), str(script), catalogue_server, token.key], env=env))
        finally:
            Run.objects.filter(pk=run.pk).delete()
            target.delete()
            user.delete()
            if seeded:  # the session's database as it was
                BenchmarkProfile.objects.all().delete()
    assert out["threads"] == 4 and out["sweep"] == [2, 4] and out["types"] == ["int", ["int", "int"]]
    assert out["url"] == f"{catalogue_server}/api/v1/runs/{run.pk}/"
    assert out["html_url"] == f"{catalogue_server}/runs/{run.pk}/"


run_ = run


WRITE_SCRIPT = textwrap.dedent('''
    import json, sys

    import httpx
    from rds_performance_whitepaper_api_client import AuthenticatedClient, Client
    from rds_performance_whitepaper_api_client.api.results import results_list
    from rds_performance_whitepaper_api_client.api.runs import runs_create
    from rds_performance_whitepaper_api_client.api.schedules import (schedules_create, schedules_destroy,
        schedules_partial_update, schedules_update)
    from rds_performance_whitepaper_api_client.models import (ParameterErrors, PatchedScheduleRequest, ResultsListFormat,
        Run, RunRequest, Schedule, ScheduleRequest)

    base, token, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
    client = AuthenticatedClient(base_url=base, token=token, timeout=httpx.Timeout(60))
    out: dict[str, object] = {}

    # Create a run: the request body has the writable fields only (target and profile required).
    run = runs_create.sync(client=client, body=RunRequest(target=target, profile="sysbench-oltp-rw-mysql-quick"))
    assert isinstance(run, Run), run
    out["run"] = {"id": run.id, "state": str(run.state), "target": run.target, "profile": run.profile}

    # A bad create is the one error shape, typed (not additional_properties).
    bad = runs_create.sync(client=client, body=RunRequest(target=target, profile="no-such-profile"))
    assert isinstance(bad, ParameterErrors), bad
    out["bad"] = {"code": bad.code, "errors": sorted(bad.errors.to_dict())}

    # Create, replace, change and delete a schedule.
    made = schedules_create.sync(client=client, body=ScheduleRequest(
        name="client-52", target=target, profile="sysbench-oltp-rw-mysql-quick", cron="0 3 * * *", enabled=False))
    assert isinstance(made, Schedule), made
    replaced = schedules_update.sync(id=str(made.id), client=client, body=ScheduleRequest(
        name="client-52b", target=target, profile="sysbench-oltp-rw-mysql-quick", cron="30 2 * * 1", enabled=False))
    assert isinstance(replaced, Schedule), replaced
    patched = schedules_partial_update.sync(id=str(made.id), client=client, body=PatchedScheduleRequest(repeats=2))
    assert isinstance(patched, Schedule), patched
    out["schedule"] = {"name": patched.name, "cron": patched.cron, "repeats": patched.repeats}
    deleted = schedules_destroy.sync_detailed(id=str(made.id), client=client)
    out["deleted"] = int(deleted.status_code)

    # The results list as CSV, the request results_list sends (its parser reads JSON; the CSV's own operation is
    # results_csv_retrieve): no paging parameter is sent, the schema's defaults being values every format accepts.
    request = results_list._get_kwargs(engine=["mysql"], version=["8.0"], format_=ResultsListFormat.CSV)
    csv = Client(base_url=base, timeout=httpx.Timeout(60)).get_httpx_client().request(**request)
    out["csv"] = {"status": csv.status_code, "params": sorted(dict(csv.request.url.params)), "text": csv.text}
    print(json.dumps(out))
''')


@pytest.mark.django_db(transaction=True)
def test_a_generated_clients_create_and_update_calls_import_and_work_under_mypy_strict(
        catalogue_server, generated_client, django_db_blocker):
    """Issue 52.5, 52.6, 52.9: the write modules import (a body in three content types made them fail with NameError:
    Unset), their bodies are the writable fields only, errors are typed as the one error shape, and
    results_list(format_=CSV) answers the CSV (the schema's pagination=page default made it a 400)."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from runs.models import BenchmarkProfile, Run, Schedule, Target

    python, env = generated_client
    with django_db_blocker.unblock():
        user = User.objects.create_user("client-52", is_staff=True, is_superuser=True)
        token = Token.objects.create(user=user)
        target = Target.objects.create(name="client-52", engine="mysql", host="127.0.0.1", port=3306, database="sbtest",
                                       user="bench")
        target_id = target.pk
        seeded = not BenchmarkProfile.objects.exists()
        seed_profiles_for_tests()
        try:
            script = Path(env["PYTHONPATH"]).parent / "write_script.py"
            script.write_text(WRITE_SCRIPT)
            run_([str(python), "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, str(script)],
                 env=env, cwd=script.parent)
            out = json.loads(run_([str(python), str(script), catalogue_server, token.key, str(target.pk)], env=env))
        finally:
            Run.objects.filter(target=target).delete()
            Schedule.objects.filter(target=target).delete()
            target.delete()
            user.delete()
            if seeded:
                BenchmarkProfile.objects.all().delete()
    assert out["run"]["state"] == "queued" and out["run"]["target"] == target_id
    assert out["run"]["profile"] == "sysbench-oltp-rw-mysql-quick"
    assert out["bad"] == {"code": "invalid", "errors": ["profile"]}
    assert out["schedule"] == {"name": "client-52b", "cron": "30 2 * * 1", "repeats": 2}
    assert out["deleted"] == 204
    assert out["csv"]["status"] == 200 and out["csv"]["params"] == ["engine", "format", "version"]
    assert out["csv"]["text"] == requests.get(f"{catalogue_server}/api/v1/results/csv/?engine=mysql&version=8.0",
                                              timeout=60).text
