"""Runs you can trust, through the pages and the API (no worker: runs here are never queued).
Expected set-ups come from the data files (whitepaper/data/*.yaml), written out by hand."""

import re

import pytest
from rest_framework.test import APIClient

from runs.models import Run, RunState, Target
from whitepaper.models import Document, PublishedResult

from testbed.runs_support import PASSWORD

pytestmark = pytest.mark.django_db


def make_target(name="maria", engine="mysql", **fields):
    t = Target(name=name, engine=engine, host="127.0.0.1", port=3306 if engine == "mysql" else 5432, database="sbtest",
               user="bench", **fields)
    t.set_password(PASSWORD)
    t.save()
    return t


def huawei_mysql80_row(vcpus=2, memory_gb=4):
    # huawei-2025-10-21-mysql.yaml, methodology huawei-2025-10-21-mysql-sysbench-80: sysbench 1.0.18,
    # 64 tables x 10,000,000 rows, 200 threads, 3600 s.
    return PublishedResult.objects.get(table__methodology__slug="huawei-2025-10-21-mysql-sysbench-80",
                                       flavor__vcpus=vcpus, flavor__memory_gb=memory_gb, flavor__family__slug="general")


def target_options(html):
    select = re.search(r'<select name="target".*?</select>', html, re.DOTALL).group(0)
    return {int(v) for v in re.findall(r'<option value="(\d+)"', select)}


def field_value(html, name):
    match = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert match, f"no input {name}"
    value = re.search(r'value="([^"]*)"', match.group(0))
    return value.group(1) if value else ""


# --- reproduce ---------------------------------------------------------------------------------------
def test_reproduce_fills_the_rows_methodology_offers_only_its_engine_and_clears_the_sweep(client, staff_user, profiles):
    maria = make_target("maria", "mysql")
    make_target("pg", "postgresql")  # another engine's target, which the form must not offer
    row = huawei_mysql80_row()
    client.force_login(staff_user)
    html = client.get(f"/runs/new/?reproduce={row.pk}").content.decode()
    assert f'<option value="{profiles["sysbench-oltp-rw-mysql"].pk}" selected>' in html
    assert (field_value(html, "tables"), field_value(html, "rows_per_table")) == ("64", "10000000")
    assert (field_value(html, "threads"), field_value(html, "duration_s")) == ("200", "3600")
    assert field_value(html, "thread_sweep") == ""  # the row is one thread count, not the profile's 8..128 sweep
    assert target_options(html) == {maria.pk}  # not the PostgreSQL target
    # Choosing the target (htmx re-renders the profile and parameters) keeps the methodology.
    partial = client.get("/runs/new/", {"target": maria.pk, "profile": profiles["sysbench-oltp-rw-mysql"].pk, "reproduces": row.pk,
                                        "tables": "64", "rows_per_table": "10000000", "threads": "200", "duration_s": "3600",
                                        "thread_sweep": ""},
                         HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="target").content.decode()
    assert "<html" not in partial
    assert f'<option value="{profiles["sysbench-oltp-rw-mysql"].pk}" selected>' in partial
    assert field_value(partial, "tables") == "64" and field_value(partial, "thread_sweep") == ""
    # Launch with what the form shows: one step of 200 threads, the row's size, linked to the row. It is the full
    # whitepaper profile: the first launch shows the estimate and asks to confirm (issue 33.8), the second confirms.
    form = {"target": maria.pk, "profile": profiles["sysbench-oltp-rw-mysql"].pk, "reproduces": row.pk,
            "tables": "64", "rows_per_table": "10000000", "threads": "200", "duration_s": "3600",
            "thread_sweep": "", "report_interval_s": "3", "warmup_s": "0", "prepared": "true"}
    response = client.post("/runs/new/", form)
    assert response.status_code == 200 and list(response.context["form"].errors) == ["confirm"]
    assert "640,000,000 rows" in response.content.decode() and not Run.objects.exists()
    response = client.post("/runs/new/", {**form, "confirm": "on"})
    assert response.status_code == 302, response.context["form"].errors
    run = Run.objects.get()
    assert run.reproduces == row and run.params["thread_sweep"] == [] and run.params["threads"] == 200
    assert (run.params["tables"], run.params["rows_per_table"], run.params["duration_s"]) == (64, 10_000_000, 3600)
    assert run.step_count == 1


@pytest.mark.parametrize("document, engine, why", [
    # alibaba-2019-06-18-rds.yaml: the MySQL methodology names no tool.
    ("alibaba-2019-06-18-rds", "mysql", "does not say which benchmark tool"),
    # huawei-2023-08-03-rds.yaml: SQL Server rows were measured with HammerDB.
    ("huawei-2023-08-03-rds", "sqlserver", "HammerDB"),
])
def test_a_row_that_cannot_run_here_says_why(client, staff_user, profiles, document, engine, why):
    make_target("maria", "mysql")
    row = PublishedResult.objects.filter(table__document__slug=document, engine_version__engine__slug=engine).first()
    client.force_login(staff_user)
    html = client.get(f"/runs/new/?reproduce={row.pk}").content.decode()
    assert "This row cannot be reproduced here." in html and why in html
    assert 'id="run-form"' not in html and 'id="launch"' not in html


# --- what differs --------------------------------------------------------------------------------------
def test_a_toy_run_is_not_shown_as_a_reproduction(client, staff_user, profiles):
    target = make_target("maria", "mysql", vcpus=2, memory_gb=4)
    row = huawei_mysql80_row()
    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    run = Run.objects.create(target=target, profile=quick, params=quick.resolve({"duration_s": 5}), requested_by=staff_user,
                             state=RunState.SUCCEEDED, reproduces=row, tool_version="1.0.20", client_host="client-1",
                             client_cores=2, summary={"tps": 900.0, "qps": 18000.0, "transactions": 4500})
    client.force_login(staff_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    differing = set(re.findall(r'<tr class="differs" data-aspect="([a-z_]+)"', html))
    # 1 x 1000 rows for 5 s with 2 threads against 64 x 10,000,000 for 3600 s with 200; sysbench 1.0.20 vs 1.0.18.
    assert differing == {"tables", "rows_per_table", "duration_s", "threads", "tool_version", "client"}
    assert 'id="not-faithful"' in html and "(different set-up)" in html
    same = re.findall(r'<tr class="" data-aspect="([a-z_]+)"', html)
    # Engine and major version: this stored run recorded no server version, so they cannot be compared (issue 33.4).
    assert set(same) == {"tool", "vcpus", "memory_gb", "engine", "major_version"}


# --- publish and retract -------------------------------------------------------------------------------

def test_what_differs_lists_the_round_trip_measured_before_the_run(client, staff_user, profiles):
    target = make_target("maria", "mysql", vcpus=2, memory_gb=4)
    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    run = Run.objects.create(target=target, profile=quick, params=quick.resolve({"duration_s": 5}), requested_by=staff_user,
                             state=RunState.SUCCEEDED, reproduces=huawei_mysql80_row(), tool_version="1.0.20",
                             round_trip={"median_ms": 2.569, "min_ms": 2.356, "max_ms": 4.83, "queries": 7},
                             summary={"tps": 900.0, "qps": 18000.0, "transactions": 4500})
    client.force_login(staff_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    # The document prints no round trip (its client is in the target's zone): shown, never counted as a difference.
    row = re.search(r'<tr class="" data-aspect="round_trip">(.*?)</tr>', html, re.S).group(1)
    assert "client-to-target round trip" in row and "not stated" in row and "2.569 ms (median)" in row
    assert 'id="summary-round-trip">2.569<' in html and "2.569 ms median of 7 queries before the run" in html

def test_publish_asks_first_uses_the_targets_flavour_or_an_internal_family_and_staff_can_retract(client, staff_user, operator_user, profiles):
    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    row = huawei_mysql80_row()
    free_text = make_target("free", "mysql", vcpus=2, memory_gb=4, family="general")  # "general": free text, not Huawei's
    with_flavor = make_target("flavoured", "mysql", flavor=row.flavor)
    runs = [Run.objects.create(target=t, profile=quick, params=quick.resolve({}), requested_by=operator_user, state=RunState.SUCCEEDED,
                               server_version="10.11.19-MariaDB", tool_version="1.0.20", summary={"tps": 812.345, "qps": 16246.9})
            for t in (free_text, with_flavor)]
    client.force_login(operator_user)
    confirm = client.get(f"/runs/{runs[0].pk}/publish/")
    assert confirm.status_code == 200 and 'id="confirm-publish"' in confirm.content.decode()
    assert not PublishedResult.objects.filter(table__document__slug="internal-measurements").exists()  # nothing yet
    stamp = Document.objects.order_by("-changed_at").values_list("changed_at", flat=True).first()
    for run in runs:
        assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
        run.refresh_from_db()
    internal, vendor = runs[0].published_result, runs[1].published_result
    assert internal.flavor.vendor.slug == "internal" and internal.flavor.family.slug == "internal-target"
    assert internal.flavor.family.name != "General-purpose"
    assert vendor.flavor == row.flavor  # the target's catalogue flavour, as declared
    assert internal.table.document.vendor.slug == vendor.table.document.vendor.slug == "internal"
    assert Document.objects.order_by("-changed_at").values_list("changed_at", flat=True).first() > stamp
    # Retract: operators may not; staff_user give a reason; the row is gone from the API, the run keeps why.
    assert client.post(f"/runs/{runs[0].pk}/retract/", {"reason": "toy"}).status_code == 403
    client.force_login(staff_user)
    assert client.post(f"/runs/{runs[0].pk}/retract/", {"reason": ""}).status_code == 200  # the reason is required
    assert PublishedResult.objects.filter(pk=internal.pk).exists()
    assert client.post(f"/runs/{runs[0].pk}/retract/", {"reason": "1 table x 1000 rows: a smoke run"}).status_code == 302
    run = Run.objects.get(pk=runs[0].pk)
    assert run.published_result is None and run.retraction_reason == "1 table x 1000 rows: a smoke run"
    assert run.retracted_by == staff_user and not run.can_publish
    assert not PublishedResult.objects.filter(pk=internal.pk).exists()
    assert APIClient().get(f"/api/v1/results/{internal.pk}/").status_code == 404
    assert f"Retracted by {staff_user.username}" in client.get(f"/runs/{run.pk}/").content.decode()


# --- queued runs ---------------------------------------------------------------------------------------
def test_a_queued_run_says_which_run_it_waits_for_and_counts_its_eta_from_there(client, operator_user, profiles):
    target = make_target("maria", "mysql")
    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    first = Run.objects.create(target=target, profile=quick, params=quick.resolve({"duration_s": 100}), requested_by=operator_user,
                               state=RunState.PREPARING)
    second = Run.objects.create(target=target, profile=quick, params=quick.resolve({"duration_s": 30}), requested_by=operator_user)
    third = Run.objects.create(target=target, profile=quick, params=quick.resolve({"duration_s": 20}), requested_by=operator_user)
    client.force_login(operator_user)
    html = client.get(f"/runs/{third.pk}/").content.decode()
    assert f'Waiting for <a href="/runs/{first.pk}/">run #{first.pk}</a>' in html
    api = APIClient()
    api.force_authenticate(operator_user)
    body = api.get(f"/api/v1/runs/{third.pk}/").json()
    # The active run has 100 s to go (preparing), the second 30 s, then this one 20 s.
    assert body["waiting_for"] == first.pk and body["eta_seconds"] == 100 + 30 + 20
    assert api.get(f"/api/v1/runs/{second.pk}/").json()["eta_seconds"] == 100 + 30
    assert api.get(f"/api/v1/runs/{first.pk}/").json()["waiting_for"] is None
    # Nothing ahead: it waits for a worker on its queue.
    Run.objects.filter(pk__in=[first.pk, second.pk]).update(state=RunState.CANCELLED)
    assert "Waiting for a benchmark worker on queue “benchmarks”" in client.get(f"/runs/{third.pk}/").content.decode()


# --- launch_run is the one gate ---------------------------------------------------------------------------
def test_form_and_api_give_the_same_errors_from_launch_run(client, operator_user, profiles):
    maria = make_target("maria", "mysql")
    archived = make_target("old", "mysql")
    client.force_login(operator_user)
    assert client.post(f"/runs/targets/{archived.pk}/archive/").status_code == 302
    api = APIClient()
    api.force_authenticate(operator_user)
    pg_profile = profiles["pgbench-ro-quick"]
    body = api.post("/api/v1/runs/", {"target": maria.pk, "profile": pg_profile.slug, "overrides": {"threads": 0}}, format="json").json()["errors"]
    form = client.post("/runs/new/", {"target": maria.pk, "profile": pg_profile.pk, "threads": "0"}).context["form"].errors
    assert set(body) == {"profile", "threads"}
    assert body["profile"] == form["profile"] == ["Profile pgbench-ro-quick is for PostgreSQL; target maria is MySQL / MariaDB."]
    assert body["threads"] == form["threads"]
    body = api.post("/api/v1/runs/", {"target": archived.pk, "profile": "sysbench-oltp-rw-mysql-quick"}, format="json").json()["errors"]
    assert body == {"target": ["Target old is archived: it takes no new runs."]}
    assert not Run.objects.exists()
    # The archived target stays (with its runs), out of the run form's choices.
    html = client.get("/runs/new/").content.decode()
    assert target_options(html) == {maria.pk}


def test_reproduce_offers_the_methodologys_profile_not_an_operators_older_one(client, staff_user, profiles):
    """Operators make profiles of their own (issue 50.9). One made before the seeded profile of the same tool and engine
    (a lower id) was what reproduce offered: a set-up of someone's, not the document's."""
    from runs.models import BenchmarkProfile

    seeded = profiles["sysbench-oltp-rw-mysql"]
    fields = {f.name: getattr(seeded, f.name) for f in BenchmarkProfile._meta.concrete_fields if f.name not in ("id", "slug")}
    BenchmarkProfile.objects.filter(pk=seeded.pk).delete()
    mine = BenchmarkProfile.objects.create(**{**fields, "methodology": None, "threads": 16, "duration_s": 60,
                                              "name": "my sysbench"}, slug="my-sysbench-mysql")
    again = BenchmarkProfile.objects.create(**fields, slug="sysbench-oltp-rw-mysql")  # seeded anew: a higher id
    assert mine.pk < again.pk
    make_target("maria", "mysql")
    client.force_login(staff_user)
    html = client.get(f"/runs/new/?reproduce={huawei_mysql80_row().pk}").content.decode()
    assert f'<option value="{again.pk}" selected>' in html and f'<option value="{mine.pk}" selected>' not in html
