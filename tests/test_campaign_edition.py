"""A campaign's edition (issue 47.4-6): drafted from its finished cells into a data file of the catalogue's format,
reviewed (the previous edition of the series with the verdict rule's word on each changed TPS), published as a
document of internal measurements, retracted whole, and exported as a file that a fresh catalogue imports into the
same rows.

Without a worker: the runs are ended through the engine's own actions with TPS values chosen here, so that every
expected figure is a hand calculation (mean, standard deviation, the t interval with t(0.975, 2) = 4.302653). With the
real worker and the machine's MariaDB and PostgreSQL: tests/test_campaign_edition_real.py."""

import json
import math
import os
import re
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from django.utils import timezone

from runs import actions
from runs.campaign_edition import draft_edition
from runs.campaigns import launch_campaign
from runs.models import Campaign, Run
from testbed.runs_support import make_targets, make_user
from whitepaper.models import Document, PublishedResult

from .embedded import copy_of
from .test_campaigns import SYSBENCH, sized_mysql

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent
T_975_2 = 4.302652729911275  # Student's t, 0.975 quantile, 2 degrees of freedom (tables)


def staff_api(name="edition-staff"):
    """A staff member through the API (a token) who is also logged in for the pages (a session)."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    user = make_user(name, staff=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.force_login(user)
    return client


def targets_2_4_8():
    return [make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8), sized_mysql("mysql-8-16", 8, 16)]


def measured_campaign(profiles, targets, tps_by_target, name="Quick matrix"):
    """A campaign whose runs ended through the worker's actions, run i of target t measuring tps_by_target[t][i]
    (QPS twenty times it) on MariaDB 10.11."""
    user = make_user(f"op-{name}-{len(Campaign.objects.all())}", operator=True)
    campaign = launch_campaign(name=name, profile=profiles[SYSBENCH], overrides={}, targets=targets, user=user,
                               repeats=len(tps_by_target[0]))
    taken = {t.pk: iter(values) for t, values in zip(targets, tps_by_target)}
    for run in Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("pk"):
        tps = next(taken[run.target_id])
        Run.objects.filter(pk=run.pk).update(server_version="10.11.6-MariaDB-0+deb12u1", tool_version="1.0.20")
        run.refresh_from_db()
        assert actions.claim(run, "w", 1, "h", 2) and actions.start_measuring(run) and actions.start_cleanup(run)
        assert actions.succeed(run, {"tps": tps, "qps": tps * 20})
    return campaign


def interval(values):
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = T_975_2 * sd / math.sqrt(len(values))
    return mean, mean - half, mean + half, sd / mean


TPS = [[100.0, 110.0, 120.0], [200.0, 204.0, 208.0], [400.5, 399.5, 401.0]]


def test_the_draft_is_one_table_a_row_per_flavour_with_the_mean_n_and_interval(profiles):
    campaign = measured_campaign(profiles, targets_2_4_8(), TPS)
    api = staff_api()
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/draft/")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    slug = f"internal-{timezone.localdate():%Y-%m-%d}-quick-matrix"
    assert (body["slug"], body["tables"], body["rows"]) == (slug, 1, 3)
    data = yaml.load(api.get(body["data_file_url"]).content, Loader=yaml.BaseLoader)  # as the importer reads it
    [table] = data["tables"]
    assert (table["engine"], table["version"], table["family"], table["memory_ratio"]) == ("mysql", "MariaDB 10.11", "general", "1:2")
    assert table["columns"] == ["vcpus", "memory_gb", "tps", "qps", "latency_p95_ms"]
    # 110, 204 and 400.33 by hand; QPS twenty times each run's TPS.
    assert [r[:4] for r in table["rows"]] == [["2", "4", "110.00", "2200.00"], ["4", "8", "204.00", "4080.00"],
                                              ["8", "16", "400.33", "8006.67"]]
    for values, measured in zip(TPS, table["measurements"]):
        _mean, low, high, cv = interval(values)
        assert measured["n"] == "3" and [float(v) for v in measured["tps_runs"]] == values
        assert float(measured["tps_ci_low"]) == pytest.approx(low, abs=1e-3)
        assert float(measured["tps_ci_high"]) == pytest.approx(high, abs=1e-3)
        assert float(measured["cv"]) == pytest.approx(cv, abs=1e-5)
    assert data["document"]["vendor"] == "internal" and data["methodologies"][0]["tool"] == "sysbench"

    page = api.get(body["review_url"])  # the token's user is staff; the page is for operators too
    assert page.status_code == 200
    assert "110.00" in page.content.decode() and "85.16–134.84" in page.content.decode()  # 110 ± 4.302653·10/√3
    # The draft's chart: its one table a line of TPS (and QPS) against vCPUs, each point going to its table.
    chart = json.loads(re.search(r'<script id="edition-chart-data" type="application/json">(.*?)</script>',
                                 page.content.decode(), re.S)[1])
    assert [m["name"] for m in chart["metrics"]] == ["tps", "qps"]
    [line] = chart["series"]
    assert [(p["x"], p["tps"], p["qps"], p["url"]) for p in line["points"]] == [
        (2, 110.0, 2200.0, "#edition-table-1"), (4, 204.0, 4080.0, "#edition-table-1"), (8, 400.33, 8006.67, "#edition-table-1")]


def test_publishing_imports_the_draft_as_an_internal_document_and_retracting_removes_it(profiles, anonymous, settings):
    settings.CATALOGUE_STAMP_TTL = 0  # the test's transaction never commits (the writer forgets the stamp on commit)
    campaign = measured_campaign(profiles, targets_2_4_8(), TPS)
    api = staff_api()
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/publish/").status_code == 409  # nothing drafted
    slug = api.post(f"/api/v1/campaigns/{campaign.pk}/draft/").json()["slug"]
    answer = api.post(f"/api/v1/campaigns/{campaign.pk}/publish/")
    assert answer.status_code == 200, answer.content
    assert answer.json()["document"] == slug
    # Internal everywhere: a reader sees the rows only when asking for internal measurements.
    assert anonymous.get(f"/api/v1/results/?document={slug}").json()["results"] == []
    rows = anonymous.get(f"/api/v1/results/?document={slug}&ordering=vcpus&include_internal=true").json()["results"]
    assert [(r["origin"], r["flavor"]["vcpus"], r["tps"], r["runs_n"]) for r in rows] == [
        ("internal", 2, 110.0, 3), ("internal", 4, 204.0, 3), ("internal", 8, 400.33, 3)]
    _mean, low, high, _cv = interval(TPS[0])
    assert (rows[0]["tps_ci_low"], rows[0]["tps_ci_high"]) == (pytest.approx(low, abs=0.01), pytest.approx(high, abs=0.01))
    # Each row is linked to its first counted run (its public record), and carries its series.
    stored = PublishedResult.objects.filter(table__document__slug=slug).order_by("flavor__vcpus")
    assert [r.measurement["n"] for r in stored] == [3, 3, 3]
    first_runs = [Run.objects.filter(published_result=r).get() for r in stored]
    assert [r.summary["tps"] for r in first_runs] == [100.0, 200.0, 400.5]
    assert anonymous.get(f"/documents/{slug}/").status_code == 200
    # The feed: the edition as one entry, under its vendor's name (internal), not an entry per row.
    feed = anonymous.get("/feed/").content.decode()
    assert feed.count(f"Internal measurements: Quick matrix, {timezone.localdate():%Y-%m-%d}") == 1
    assert "Internal measurement: MariaDB" not in feed
    assert anonymous.get(first_runs[0].published_result.run_record_url).status_code == 200

    assert api.post(f"/api/v1/campaigns/{campaign.pk}/publish/").status_code == 200  # publishing again: the same rows
    assert PublishedResult.objects.filter(table__document__slug=slug).count() == 3

    staff = make_user("edition-retractor", staff=True)
    from django.test import Client

    client = Client()
    client.force_login(staff)
    assert client.post(f"/runs/campaigns/{campaign.pk}/edition/", {"action": "retract"}).status_code == 302
    assert not Document.objects.filter(slug=slug).exists() and not PublishedResult.objects.filter(table__document__slug=slug).exists()
    assert anonymous.get(f"/documents/{slug}/").status_code == 404
    assert not Run.objects.filter(published_result__isnull=False).exists()


def test_drafting_and_publishing_are_for_staff_and_refusals_say_why(profiles, operator_api, customer):
    mysql = make_targets()["mysql"]
    campaign = measured_campaign(profiles, [mysql], [[100.0, 101.0]])
    assert operator_api.post(f"/api/v1/campaigns/{campaign.pk}/draft/").status_code == 403
    assert operator_api.post(f"/api/v1/campaigns/{campaign.pk}/publish/").status_code == 403
    assert customer.get(f"/runs/campaigns/{campaign.pk}/edition/").status_code in (302, 403)
    empty = launch_campaign(name="empty", profile=profiles[SYSBENCH], overrides={}, targets=[mysql],
                            user=make_user("op-empty", operator=True), repeats=2)
    answer = staff_api().post(f"/api/v1/campaigns/{empty.pk}/draft/")
    assert answer.status_code == 409 and "nothing to draft" in answer.json()["detail"]
    assert staff_api("edition-canceller").post(f"/api/v1/campaigns/{empty.pk}/cancel/").status_code == 202
    # A document of the same series and day already published by another campaign: refused, nothing changed.
    api = staff_api("edition-staff-2")
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/draft/").status_code == 201
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/publish/").status_code == 200
    twin = measured_campaign(profiles, [sized_mysql("mysql-4-8", 4, 8)], [[50.0, 51.0]])
    assert api.post(f"/api/v1/campaigns/{twin.pk}/draft/").status_code == 201
    refused = api.post(f"/api/v1/campaigns/{twin.pk}/publish/")
    assert refused.status_code == 409 and "already in the catalogue" in refused.json()["detail"]
    kept = Campaign.objects.get(pk=campaign.pk).edition
    assert list(PublishedResult.objects.filter(table__document=kept).values_list("tps", flat=True)) == [Decimal("100.50")]


def test_a_rows_flags_go_with_it_and_other_load_is_published_only_acknowledged(profiles, anonymous, settings):
    settings.CATALOGUE_STAMP_TTL = 0
    campaign = measured_campaign(profiles, targets_2_4_8()[:2], [[100.0, 110.0], [200.0, 204.0]], name="Flagged")
    runs = list(Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("target_id", "pk"))
    # What the worker records of a run: the first 2-vCPU run's client host saturated, the tool on the database's own
    # host; the second 4-vCPU run's server counted 40 % more commits than the tool made (another client's).
    Run.objects.filter(pk=runs[0].pk).update(client_bound=True, client_info={"target_on_client_host": True})
    Run.objects.filter(pk__in=[r.pk for r in runs[1:]]).update(client_bound=False)
    Run.objects.filter(pk=runs[3].pk).update(insight={"steps": [{"step": 1, "threads": 4, "server": {
        "agreement_pct": 140.0, "tps": 285.6, "tool_tps": 204.0}}]})
    api = staff_api("flag-staff")
    body = api.post(f"/api/v1/campaigns/{campaign.pk}/draft/").json()
    data = yaml.load(api.get(body["data_file_url"]).content, Loader=yaml.BaseLoader)
    two, four = data["tables"][0]["measurements"]
    assert (two["client_bound"], two["client_bound_cause"], "other_load_runs" in two) == ("true", "shared_host", False)
    assert (four["client_bound"], four["other_load_runs"], four["other_load_acknowledged_by"]) == ("false", [str(runs[3].pk)], "")
    review = api.get(body["review_url"]).content.decode()
    assert 'data-flag="client_bound" data-cause="shared_host"' in review and 'data-flag="other_load"' in review
    assert 'id="edition-acknowledge"' in review and f"run(s) {runs[3].pk}:" in review

    refused = api.post(f"/api/v1/campaigns/{campaign.pk}/publish/", {}, format="json")
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["acknowledge_other_load"], refused.content
    assert f"run(s) {runs[3].pk}" in refused.json()["errors"]["acknowledge_other_load"][0]
    page = api.post(f"/runs/campaigns/{campaign.pk}/edition/", {"action": "publish", "confirm": "yes"}, follow=True)
    assert "acknowledge it to publish the edition anyway" in page.content.decode()
    assert not Document.objects.filter(slug=body["slug"]).exists() and Run.objects.get(pk=runs[3].pk).other_load_acknowledged_by is None

    assert api.post(f"/api/v1/campaigns/{campaign.pk}/publish/", {"acknowledge_other_load": True}, format="json").status_code == 200
    rows = anonymous.get(f"/api/v1/results/?document={body['slug']}&ordering=vcpus&include_internal=true").json()["results"]
    assert [(r["flavor"]["vcpus"], r["client_bound"], r["other_load"]) for r in rows] == [
        (2, True, None), (4, False, {"steps": [], "runs": [runs[3].pk], "acknowledged": True, "acknowledged_by": "flag-staff"})]
    document = anonymous.get(f"/documents/{body['slug']}/").content.decode()
    assert 'data-flag="client_bound" data-cause="shared_host"' in document and 'data-flag="other_load"' in document
    assert Run.objects.get(pk=runs[3].pk).other_load_acknowledged_by.get_username() == "flag-staff"
    exported = yaml.load(api.get(body["data_file_url"]).content, Loader=yaml.BaseLoader)
    assert exported["tables"][0]["measurements"][1]["other_load_acknowledged_by"] == "flag-staff"


def test_a_rows_latency_caveat_is_drafted_in_english_whoever_drafts_it(profiles):
    """The data file is in English: a run's latency caveat (pgbench given -r and -P on 2 threads, as runs before the
    driver dropped -r were) is written in English into the draft even when a Chinese page drafts it, and the row
    prints no p95 latency."""
    target = make_targets()["postgresql"]
    campaign = launch_campaign(name="Caveat", profile=profiles["pgbench-tpcb-quick"], overrides={}, targets=[target],
                               user=make_user("op-caveat", operator=True), repeats=2)
    for run in Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("pk"):
        Run.objects.filter(pk=run.pk).update(server_version="15.8 (Debian 15.8-0+deb12u1)", tool_version="15.8",
                                             command_line="pgbench -r -P 1 -j 2 -c 2 -T 3 -n perfdash_sb")
        run.refresh_from_db()
        assert actions.claim(run, "w", 1, "h", 2) and actions.start_measuring(run) and actions.start_cleanup(run)
        assert actions.succeed(run, {"tps": 500.0, "qps": 3500.0})
    from django.test import Client

    client = Client()
    client.force_login(make_user("caveat-staff", staff=True))
    assert client.post(f"/runs/campaigns/{campaign.pk}/edition/?lang=zh-hans", {"action": "draft"}).status_code == 302
    [table] = Campaign.objects.get(pk=campaign.pk).draft["tables"]
    [measured] = table["measurements"]
    assert measured["latency_caveat"].startswith("pgbench ran with -r and -P on 2 threads (-j)"), measured
    assert table["rows"][0][table["columns"].index("latency_p95_ms")] == ""
    page = client.get(f"/runs/campaigns/{campaign.pk}/edition/?lang=zh-hans").content.decode()
    assert 'data-flag="latency_caveat"' in page


def test_the_review_calls_a_changed_figure_a_change_only_when_the_verdict_rule_does(profiles, staff):
    targets = targets_2_4_8()
    old = measured_campaign(profiles, targets, [[110.0, 110.5, 109.5], [204.0, 205.0, 203.0], [400.0, 401.0, 402.0]])
    draft_edition(old, make_user("drafter", staff=True), day=timezone.localdate() - timedelta(days=30))
    assert staff.post(f"/runs/campaigns/{old.pk}/edition/", {"action": "publish", "confirm": "yes"}).status_code == 302
    assert Campaign.objects.get(pk=old.pk).edition is not None
    # The same series a month later: 2 vCPU within the runs' spread (ratio 1.002, its interval inside ±2.5 %),
    # 4 vCPU clearly faster (+47 %), 8 vCPU printing the same figures.
    new = measured_campaign(profiles, targets, [[110.2, 110.6, 109.9], [300.0, 301.0, 299.0], [400.0, 401.0, 402.0]])
    assert staff.post(f"/runs/campaigns/{new.pk}/edition/", {"action": "draft"}).status_code == 302
    page = staff.get(f"/runs/campaigns/{new.pk}/edition/").content.decode()
    assert Campaign.objects.get(pk=old.pk).edition.slug in page
    items = re.findall(r'<li data-status="(\w+)" data-verdict="([\w-]*)" data-change="(\w+)">(\d+) vCPU', page)
    found = {int(vcpus): (status, verdict, change) for status, verdict, change, vcpus in items}
    assert found == {2: ("changed", "equivalent", "false"), 4: ("changed", "faster", "true"), 8: ("same", "", "false")}
    # Publishing without the confirmation is refused and changes nothing.
    assert staff.post(f"/runs/campaigns/{new.pk}/edition/", {"action": "publish"}).status_code == 302
    assert Campaign.objects.get(pk=new.pk).edition is None


def rows_of(document):
    """The document's rows as comparable facts (a row's link to its run on this dashboard left out)."""
    return sorted(
        [r.table.label, r.position, r.engine_version.engine.slug, r.engine_version.version,
         r.flavor.family.slug if r.flavor.family else "", r.flavor.vcpus, r.flavor.memory_gb, r.flavor.memory_ratio,
         str(r.tps), str(r.qps), str(r.latency_p95_ms), {k: v for k, v in r.measurement.items() if k != "run"}]
        for r in PublishedResult.objects.filter(table__document__slug=document).select_related(
            "table", "engine_version__engine", "flavor__family"))


FRESH_ROWS = "import json; from tests.test_campaign_edition import rows_of; print(json.dumps(rows_of({slug!r}), default=str))"


def test_the_exported_file_imports_into_a_fresh_catalogue_with_the_same_rows(profiles, tmp_path, migrated_sqlite):
    """A fresh catalogue: a copy of the session's migrated SQLite database (conftest migrated_sqlite), nothing imported;
    the exported file imported into it by `manage.py import_whitepapers` in a process of its own."""
    campaign = measured_campaign(profiles, targets_2_4_8(), TPS)
    api = staff_api()
    slug = api.post(f"/api/v1/campaigns/{campaign.pk}/draft/").json()["slug"]
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/publish/").status_code == 200
    exported = tmp_path / f"{slug}.yaml"
    exported.write_bytes(api.get(f"/runs/campaigns/{campaign.pk}/edition.yaml").content)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_SETTINGS"))}
    env.update(DATABASE_URL=f"sqlite:///{copy_of(migrated_sqlite, tmp_path)}", DJANGO_SETTINGS_MODULE="config.settings")
    env.pop("REDIS_URL", None)
    manage = [sys.executable, "manage.py"]
    done = subprocess.run(manage + ["import_whitepapers", str(exported)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run(manage + ["shell", "-c", FRESH_ROWS.format(slug=slug)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = json.loads(done.stdout.strip().splitlines()[-1])
    here = json.loads(json.dumps(rows_of(slug), default=str))
    assert len(here) == 3 and fresh == here


def test_two_runs_far_apart_keep_their_interval_as_computed_below_zero(profiles):
    campaign = measured_campaign(profiles, [make_targets()["mysql"]], [[100.0, 300.0]], name="Far apart")
    api = staff_api()
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/draft/").status_code == 201
    assert api.post(f"/api/v1/campaigns/{campaign.pk}/publish/").status_code == 200
    [row] = PublishedResult.objects.filter(table__document=Campaign.objects.get(pk=campaign.pk).edition)
    # 200 ± t(0.975, 1) · 141.42 / √2 = 200 ± 12.7062 · 100: the low end below zero, said as it is.
    assert row.measurement["tps_ci"]["low"] == pytest.approx(200 - 1270.62, abs=0.01)
    assert row.measurement["tps_ci"]["high"] == pytest.approx(200 + 1270.62, abs=0.01)


def test_a_data_files_measurements_are_checked_naming_the_table_row_and_field(tmp_path):
    from whitepaper.importer import DataFileError, parse_document_file

    good = {"n": "2", "tps_runs": ["1.5", "2.5"], "stdev": "0.7", "cv": "0.35", "tps_ci_low": "-4.3", "tps_ci_high": "8.3",
            "method": "t"}
    base = {"document": {"slug": "internal-2026-01-01-x", "vendor": "internal", "title": "x", "published": "2026-01-01"},
            "methodologies": [{"slug": "m-x", "name": "x"}],
            "tables": [{"label": "t", "methodology": "m-x", "engine": "mysql", "columns": ["vcpus", "memory_gb", "tps"],
                        "rows": [["2", "4", "2.00"]], "measurements": [good]}]}
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(base))
    [row] = parse_document_file(path).tables[0].rows
    assert row.measurement["n"] == 2 and row.measurement["repeats"]["tps"] == [1.5, 2.5]
    for bad, reason in [({**good, "n": "3"}, "count tps_runs"), ({**good, "tps_runs": ["1.5", "-2"]}, "not a measured"),
                        ({**good, "extra": "1"}, "a measurement is a mapping"), ({**good, "cv": "x"}, "could not convert"),
                        ({**good, "client_bound": "yes"}, "client_bound is true, false or empty"),
                        ({**good, "client_bound": "false", "client_bound_cause": "shared_host"}, "for a client-bound row only"),
                        ({**good, "other_load_runs": ["../x"], "other_load_acknowledged_by": "a"}, "a list of run numbers"),
                        ({**good, "other_load_runs": ["12"]}, "must say who acknowledged it")]:
        base["tables"][0]["measurements"] = [bad]
        path.write_text(yaml.safe_dump(base))
        with pytest.raises(DataFileError) as caught:
            parse_document_file(path)
        assert "row 1" in str(caught.value) and "measurements" in str(caught.value) and reason in str(caught.value)
    base["tables"][0]["measurements"] = [good, good]
    path.write_text(yaml.safe_dump(base))
    with pytest.raises(DataFileError, match="one entry per row"):
        parse_document_file(path)
