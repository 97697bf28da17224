"""A campaign's edition from real runs (issue 47, "Done when"): the session's worker runs sysbench against the
machine's MariaDB and pgbench against its PostgreSQL, three targets with declared sizes 2 vCPU/4 GB, 4/8 and 8/16.

Each row's TPS is checked against the runs as the runs API reports them and as the tool printed them in each run's
log (never against the draft itself); with a reference document, the review page puts the document's printed figure,
read here from its data file, beside our mean and names what differs in the set-up."""

import statistics
from decimal import ROUND_HALF_UP, Decimal

import pytest
import yaml
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import Target
from testbed.runs_support import DB_USER, PASSWORD, PG_DB, make_targets, make_user
from whitepaper.importer import DATA_DIR

from .test_campaigns import sized_mysql
from .test_runs_interleaved import finish_all, tps_from_log

pytestmark = pytest.mark.django_db(transaction=True)
QUICK = {"duration_s": 2, "report_interval_s": 1}


def staff_client(name):
    user = make_user(name, staff=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.force_login(user)
    return client


def sized_postgresql(name, vcpus, memory_gb):
    target = Target(name=name, engine="postgresql", host="127.0.0.1", port=5432, database=PG_DB, user=DB_USER,
                    vcpus=vcpus, memory_gb=memory_gb, family="general")
    target.set_password(PASSWORD)
    target.save()
    return target


def launched(api, profile, targets, repeats, reference=None):
    body = {"name": f"real {profile}", "profile": profile, "targets": [t.pk for t in targets], "repeats": repeats,
            "overrides": QUICK}
    if reference is not None:
        body["reference"] = reference
    answer = api.post("/api/v1/campaigns/", body, format="json")
    assert answer.status_code == 201, answer.content
    campaign = answer.json()
    finish_all([run for cell in campaign["cells"] for run in cell["runs"]])
    return api.get(f"/api/v1/campaigns/{campaign['id']}/").json()


def two_places(value):
    return str(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def test_a_sysbench_campaign_on_three_sizes_drafts_one_table_of_three_rows(committed, worker):
    api = staff_client("real-edition-staff")
    targets = [make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8), sized_mysql("mysql-8-16", 8, 16)]
    campaign = launched(api, "sysbench-oltp-rw-mysql-quick", targets, 3)
    assert campaign["state"] == "finished" and [c["n"] for c in campaign["cells"]] == [3, 3, 3]
    draft = api.post(f"/api/v1/campaigns/{campaign['id']}/draft/").json()
    assert (draft["tables"], draft["rows"]) == (1, 3)
    data = yaml.load(api.get(draft["data_file_url"]).content, Loader=yaml.BaseLoader)
    [table] = data["tables"]
    assert table["engine"] == "mysql" and table["version"].startswith("MariaDB ") and table["memory_ratio"] == "1:2"
    for cell, row, measured in zip(campaign["cells"], table["rows"], table["measurements"]):
        runs = [api.get(f"/api/v1/runs/{run}/").json() for run in cell["runs"]]
        from_api = [r["summary"]["tps"] for r in runs]
        from_logs = [tps_from_log(r) for r in (api_run_model(run) for run in cell["runs"])]
        assert from_api == pytest.approx(from_logs, rel=1e-6)  # the runs API says what the tool printed
        # The cell's series (the campaign's API) is the tool's: its mean and coefficient of variation.
        assert cell["mean_tps"] == pytest.approx(statistics.fmean(from_logs), abs=0.006)
        assert cell["cv"] == pytest.approx(statistics.stdev(from_logs) / statistics.fmean(from_logs), abs=1e-4)
        assert row[:2] == [str(cell["vcpus"]), str(cell["memory_gb"])]
        assert row[2] == two_places(sum(from_logs) / 3)
        assert measured["n"] == "3" and [float(v) for v in measured["tps_runs"]] == pytest.approx(from_logs, rel=1e-6)
        assert float(measured["tps_ci_low"]) < float(row[2]) < float(measured["tps_ci_high"])


def api_run_model(run_id):
    from runs.models import Run

    return Run.objects.get(pk=run_id)


def test_a_pgbench_campaign_with_a_reference_document_lists_its_printed_figures_and_the_differences(committed, worker):
    api = staff_client("real-edition-reference")
    reference = "huawei-2025-10-21-postgresql"
    from whitepaper.models import Document

    targets = [make_targets()["postgresql"], sized_postgresql("pg-4-8", 4, 8), sized_postgresql("pg-8-16", 8, 16)]
    campaign = launched(api, "pgbench-tpcb-quick", targets, 2, reference=Document.objects.get(slug=reference).pk)
    assert [c["n"] for c in campaign["cells"]] == [2, 2, 2]
    assert api.post(f"/api/v1/campaigns/{campaign['id']}/draft/").status_code == 201
    page = api.get(f"/runs/campaigns/{campaign['id']}/edition/").content.decode()
    # The document's printed TPS for each size we measured, read from its data file: the targets' family (general),
    # of the PostgreSQL major version this machine runs (asked of the server itself) when the document prints it,
    # else of its newest version.
    printed = yaml.load((DATA_DIR / f"{reference}.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    general = [t for t in printed["tables"] if t.get("engine") == "postgresql" and t.get("family") == "general"]
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        major = str(int(cursor.fetchone()[0]) // 10000)
    versions = {t["version"] for t in general}
    version = major if major in versions else max(versions, key=lambda v: [int(p) for p in v.split(".")])
    expected = {}
    for t in general:
        if t["version"] != version:
            continue
        for r in t["rows"]:
            row = dict(zip(t["columns"], r))
            if (row["vcpus"], row["memory_gb"]) in (("2", "4"), ("4", "8"), ("8", "16")):
                expected.setdefault(int(row["vcpus"]), row["tps"])
    assert sorted(expected) == [2, 4, 8], expected
    section = page.split('id="edition-reference"', 1)[1].split("</section>", 1)[0]
    for vcpus, tps in expected.items():
        row = section.split(f'<article class="reference-row" data-vcpus="{vcpus}"', 1)[1].split("</article>", 1)[0]
        assert f'<strong class="printed">{tps}</strong>' in row
        # Their set-up is sysbench on PostgreSQL for an hour; ours a 2 s pgbench: named, as decisive differences.
        assert 'data-key="tool"' in row and 'data-key="duration_s"' in row
