"""Runs pages and API without a worker: roles, hostile input, the state machine, the reconciler,
publishing, secrets at rest. (Runs created here are never queued: the test transaction is rolled back
before on_commit, so nothing runs.)"""

import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from runs import actions
from runs.models import BenchmarkProfile, Run, RunState, Sample, ServerSample, Target
from runs.tasks import reconcile_runs
from whitepaper.models import PublishedResult

from testbed.runs_support import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def target():
    t = Target(name="maria", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench", vcpus=2, memory_gb=4)
    t.set_password(PASSWORD)
    t.save()
    return t


@pytest.fixture
def pg_target():
    return Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="sbtest", user="bench")


def make_run(target, profile, user, state=RunState.QUEUED, **fields):
    return Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=user, state=state, **fields)


def test_seed_profiles_is_idempotent_and_covers_the_methodologies(profiles):
    call_command("seed_profiles", stdout=open("/dev/null", "w"))
    assert BenchmarkProfile.objects.count() == len(profiles) == 11
    assert {"sysbench-oltp-rw-mysql", "sysbench-oltp-rw-postgresql", "pgbench-ro", "pgbench-rw", "pgbench-tpcb"} <= set(profiles)
    assert all(f"{slug}-quick" in profiles for slug in ("sysbench-oltp-rw-mysql", "pgbench-ro", "pgbench-rw", "pgbench-tpcb"))
    assert profiles["sysbench-oltp-rw-mysql"].thread_sweep == [8, 16, 32, 64, 128]
    assert profiles["sysbench-oltp-rw-mysql"].methodology.slug == "huawei-2025-10-21-mysql-sysbench-80"
    assert not profiles["hammerdb-tpcc-sqlserver"].runnable


def test_password_encrypted_at_rest_and_never_shown(target, operator_user, client, operator_api):
    with connection.cursor() as cur:
        cur.execute("SELECT password_encrypted FROM runs_target WHERE id = %s", [target.pk])
        stored = cur.fetchone()[0]
    assert PASSWORD not in stored and stored.startswith("gAAAA")  # a Fernet token
    assert Target.objects.get(pk=target.pk).password == PASSWORD
    client.force_login(operator_user)
    for url in ("/runs/targets/", f"/runs/targets/{target.pk}/", "/runs/new/"):
        assert PASSWORD not in client.get(url).content.decode()
    assert PASSWORD not in json.dumps(operator_api.get("/api/v1/targets/").json())
    # Saving the form with an empty password keeps the stored one.
    data = {"name": "maria", "engine": "mysql", "host": "127.0.0.1", "port": 3306, "database": "sbtest", "user": "bench",
            "password": "", "queue": "benchmarks"}
    assert client.post(f"/runs/targets/{target.pk}/", data).status_code == 302
    assert Target.objects.get(pk=target.pk).password == PASSWORD


RUNS_URLS = ["/runs/", "/runs/new/", "/runs/{run}/", "/runs/targets/", "/runs/targets/new/", "/runs/targets/{target}/",
             "/runs/{run}/export.json", "/runs/{run}/samples.csv", "/runs/profiles/", "/runs/profiles/new/",
             "/runs/profiles/{profile}/", "/runs/profiles/{profile}/delete/"]
POST_URLS = ["/runs/{run}/cancel/", "/runs/{run}/publish/", "/runs/targets/{target}/test/", "/runs/profiles/new/",
             "/runs/profiles/{profile}/delete/"]
API_URLS = ["/api/v1/runs/", "/api/v1/runs/{run}/", "/api/v1/runs/{run}/samples/", "/api/v1/targets/", "/api/v1/profiles/",
            "/api/v1/runs/{run}/server-samples/", "/api/v1/runs/{run}/export/", "/api/v1/runs/{run}/samples-csv/"]


def test_anonymous_and_non_staff_are_refused_everywhere(client, target, profiles, operator_user):
    run = make_run(target, profiles["sysbench-oltp-rw-mysql-quick"], operator_user)
    fmt = {"run": run.pk, "target": target.pk, "profile": profiles["pgbench-tpcb"].pk}
    for url, method in [(u, "get") for u in RUNS_URLS] + [(u, "post") for u in POST_URLS]:
        response = getattr(client, method)(url.format(**fmt))
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), (method, url)
    for url in API_URLS:
        assert APIClient().get(url.format(**fmt)).status_code in (401, 403), url
    assert APIClient().post("/api/v1/runs/", {}, format="json").status_code in (401, 403)
    assert APIClient().post(f"/api/v1/runs/{run.pk}/cancel/").status_code in (401, 403)
    plain = make_user("runs-plain")
    client.force_login(plain)
    for url in RUNS_URLS:
        assert client.get(url.format(**fmt)).status_code == 403, url
    for url in POST_URLS:
        assert client.post(url.format(**fmt)).status_code == 403, url
    api = APIClient()
    api.force_authenticate(plain)
    for url in API_URLS:
        assert api.get(url.format(**fmt)).status_code == 403, url
    assert api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick"}, format="json").status_code == 403
    assert Run.objects.get(pk=run.pk).state == RunState.QUEUED and Run.objects.count() == 1


def test_operator_pages_render_with_bounded_queries(client, operator_user, target, pg_target, profiles, django_assert_max_num_queries):
    for i in range(12):
        make_run(target if i % 2 else pg_target, profiles["sysbench-oltp-rw-mysql-quick"] if i % 2 else profiles["pgbench-ro-quick"],
                 operator_user, state=RunState.SUCCEEDED, summary={"tps": 100.0 + i, "qps": 2000.0})
    client.force_login(operator_user)
    with django_assert_max_num_queries(8):
        html = client.get("/runs/").content.decode()
    assert html.count('class="state state-succeeded"') == 12
    with django_assert_max_num_queries(8):
        assert client.get("/runs/targets/").status_code == 200
    run = Run.objects.first()
    Sample.objects.bulk_create([Sample(run=run, t=i, threads=2, tps=100) for i in range(50)])
    ServerSample.objects.bulk_create([ServerSample(run=run, t=i, sampled_at=timezone.now(), server_tps=99, client_cpu_pct=50)
                                      for i in range(50)])
    with django_assert_max_num_queries(8):
        assert client.get(f"/runs/{run.pk}/").status_code == 200
    # The export reads the run and each kind of sample once, however many samples there are: session, user,
    # group, run, methodology, samples, server samples, the series' runs, clients (and their samples when
    # there are clients).
    with django_assert_max_num_queries(10):
        record = json.loads(client.get(f"/runs/{run.pk}/export.json").content)
    assert len(record["samples"]) == 50 and len(record["server_samples"]) == 50
    partial = client.get(f"/runs/{run.pk}/?part=status", HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="run-status"') and "<html" not in partial
    api = APIClient()
    api.force_authenticate(operator_user)
    with CaptureQueriesContext(connection) as ctx:
        body = api.get("/api/v1/runs/").json()
    assert len(ctx.captured_queries) <= 8 and len(body["results"] if isinstance(body, dict) else body) == 12
    filtered = client.get("/runs/?state=succeeded&tool=pgbench", HTTP_HX_REQUEST="true").content.decode()
    assert filtered.count('class="state state-succeeded"') == 6 and "<html" not in filtered


HOSTILE_TARGETS = [
    ("host", "127.0.0.1; rm -rf /"), ("host", "$(reboot)"), ("host", "`id`"), ("host", "-oProxyCommand=x"),
    ("host", "db host"), ("host", "db|cat"), ("host", "db\nexample"), ("database", "--help"), ("database", "x; DROP"),
    ("user", "root'--"), ("user", "-U"), ("port", "0"), ("port", "70000"), ("port", "-1"), ("queue", "Q ueue"),
    ("password", 'quote"inside'), ("password", "line\nbreak"),
    # Issue 23.4 and 23.8: the scheduler's and reconciler's queue; a password of 100,000 characters.
    ("queue", "celery"), ("password", "p" * 100_000),
]


@pytest.mark.parametrize("field,value", HOSTILE_TARGETS)
def test_hostile_target_input_is_refused_with_the_field_named(client, operator_user, field, value):
    client.force_login(operator_user)
    data = {"name": "t1", "engine": "mysql", "host": "127.0.0.1", "port": "3306", "database": "sbtest", "user": "bench",
            "password": "ok", "queue": "benchmarks", field: value}
    response = client.post("/runs/targets/new/", data)
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert not Target.objects.exists()


HOSTILE_RUNS = [
    ({"threads": -1}, "threads"), ({"threads": 100000}, "threads"), ({"threads": "8; rm -rf /"}, "threads"),
    ({"threads": True}, "threads"), ({"duration_s": 0}, "duration_s"), ({"duration_s": 10**9}, "duration_s"),
    ({"report_interval_s": 5, "duration_s": 3}, "report_interval_s"), ({"warmup_s": -5}, "warmup_s"),
    # Issue 23.8: digits other than ASCII ("２", "١", "𝟐" read as 2 by int()) were accepted and stored as typed.
    ({"threads": "２"}, "threads"), ({"threads": "١"}, "threads"), ({"threads": "𝟐"}, "threads"),
    ({"thread_sweep": ["２", "4"]}, "thread_sweep"), ({"duration_s": "３0"}, "duration_s"),
    ({"tables": 0}, "tables"), ({"rows_per_table": 10**12}, "rows_per_table"), ({"thread_sweep": list(range(1, 13))}, "thread_sweep"),
    ({"thread_sweep": ["8", "$(id)"]}, "thread_sweep"), ({"thread_sweep": [8, 8]}, "thread_sweep"),
    ({"thread_sweep": "8,0"}, "thread_sweep"), ({"shell": "id"}, "overrides"), ({"scale": 10}, "overrides"),
    ({"prepared": "maybe"}, "prepared"),
]


@pytest.mark.parametrize("overrides,field", HOSTILE_RUNS)
def test_hostile_run_overrides_are_refused_and_nothing_runs(operator_api, target, profiles, overrides, field):
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick", "overrides": overrides},
                        format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert not Run.objects.exists()


def test_other_hostile_run_requests(operator_api, target, pg_target, profiles, staff_user, operator_user, client):
    cases = [
        ({"target": target.pk, "profile": "no-such-profile"}, "profile"),
        ({"target": 999999, "profile": "sysbench-oltp-rw-mysql-quick"}, "target"),
        ({"target": "1 OR 1=1", "profile": "sysbench-oltp-rw-mysql-quick"}, "target"),
        ({"target": target.pk, "profile": "pgbench-ro-quick"}, "profile"),  # engine mismatch
        ({"target": target.pk, "profile": "hammerdb-tpcc-sqlserver"}, "profile"),
        ({"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick", "overrides": [1, 2]}, "overrides"),
        ({"target": pg_target.pk, "profile": "pgbench-ro-quick", "overrides": {"range": 10**9}}, "range"),
        ({"target": pg_target.pk, "profile": "pgbench-ro-quick", "overrides": {"threads": 2, "jobs": 4}}, "jobs"),
        ({"target": pg_target.pk, "profile": "pgbench-ro-quick", "overrides": {"tables": 4}}, "overrides"),
    ]
    for body, field in cases:
        response = operator_api.post("/api/v1/runs/", body, format="json")
        assert response.status_code == 400 and field in response.json()["errors"], (body, response.content)
    assert operator_api.get(f"/api/v1/runs/{0}/samples/?after=-1").status_code == 404
    # Another user's run: an operator_user may not cancel or publish it (staff_user may).
    theirs = make_run(target, profiles["sysbench-oltp-rw-mysql-quick"], staff_user)
    assert operator_api.post(f"/api/v1/runs/{theirs.pk}/cancel/").status_code == 403
    assert operator_api.get(f"/api/v1/runs/{theirs.pk}/samples/?after=-1").status_code == 400
    client.force_login(operator_user)
    assert client.post(f"/runs/{theirs.pk}/cancel/").status_code == 403
    assert client.post(f"/runs/{theirs.pk}/publish/").status_code == 403
    assert Run.objects.get(pk=theirs.pk).state == RunState.QUEUED and Run.objects.count() == 1
    # The form refuses the same things, naming the field.
    response = client.post("/runs/new/", {"target": target.pk, "profile": profiles["sysbench-oltp-rw-mysql-quick"].pk, "threads": "-3"})
    assert response.status_code == 200 and "threads" in response.context["form"].errors
    response = client.post("/runs/new/", {"target": target.pk, "profile": profiles["sysbench-oltp-rw-mysql-quick"].pk, "scale": "5"})
    assert "scale" in response.context["form"].errors
    assert Run.objects.count() == 1


def test_valid_run_is_created_queued_with_its_parameters(operator_api, operator_user, target, profiles):
    launch = {"target": target.pk, "profile": "sysbench-oltp-rw-mysql", "overrides": {"thread_sweep": [8, 16], "duration_s": 30}}
    assert list(operator_api.post("/api/v1/runs/", launch, format="json").json()["errors"]) == ["confirm"]  # 64 x 10M rows
    response = operator_api.post("/api/v1/runs/", {**launch, "confirm": True}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["state"] == "queued" and body["params"]["thread_sweep"] == [8, 16] and body["params"]["tables"] == 64
    assert body["step_count"] == 2 and body["requested_by"] == operator_user.username


def test_state_machine_and_one_active_run_per_target(target, profiles, operator_user):
    profile = profiles["sysbench-oltp-rw-mysql-quick"]
    first, second = make_run(target, profile, operator_user), make_run(target, profile, operator_user)
    assert not actions.start_measuring(first)  # queued -> running is not a move
    assert actions.claim(first, "w1", 1, "h", 2) and first.state == RunState.PREPARING
    assert not actions.claim(second, "w2", 2, "h", 2) and second.state == RunState.QUEUED  # waits: the target is busy
    assert actions.start_measuring(first) and actions.start_cleanup(first) and actions.succeed(first, {"tps": 1.0})
    assert not actions.fail(first, "late") and Run.objects.get(pk=first.pk).state == RunState.SUCCEEDED
    assert actions.claim(second, "w2", 2, "h", 2)
    assert actions.cancel(second, operator_user) and second.cancel_requested and second.state == RunState.PREPARING
    assert actions.finish_cancelled(second, "stopped") and second.state == RunState.CANCELLED
    third = make_run(target, profile, operator_user)
    assert actions.cancel(third, operator_user) and third.state == RunState.CANCELLED  # a queued run is cancelled at once
    assert third.reason == f"Cancelled by {operator_user.username} before it started."
    assert not actions.cancel(third, operator_user)


def test_reconciler_fails_runs_whose_worker_went_silent(target, profiles, operator_user, settings):
    run = make_run(target, profiles["sysbench-oltp-rw-mysql-quick"], operator_user)
    actions.claim(run, "celery@elsewhere", 4242, "another-host", 8)
    actions.start_measuring(run)
    assert reconcile_runs() == []  # heartbeat fresh
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=settings.RUNS_STALE_AFTER_SECONDS + 1))
    assert reconcile_runs() == [run.pk]
    run.refresh_from_db()
    assert run.state == RunState.FAILED and "stopped reporting" in run.reason and "another-host" in run.reason


def test_publish_a_succeeded_run_into_internal_measurements(client, staff_user, target, profiles):
    result = PublishedResult.objects.filter(table__methodology__tool="sysbench", flavor__vcpus=2).select_related("table").first()
    run = make_run(target, profiles["sysbench-oltp-rw-mysql-quick"], staff_user, state=RunState.SUCCEEDED, reproduces=result,
                   server_version="10.11.19-MariaDB-0+deb12u1", tool_version="1.0.20",
                   summary={"tps": 812.345, "qps": 16246.9, "transactions": 2437, "threads": 2})
    client.force_login(staff_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Published against measured" in page and 'id="publish"' in page
    assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    run.refresh_from_db()
    published = run.published_result
    assert published.run == run  # provenance back to the run
    assert published.document.slug == "internal-measurements" and published.document.vendor.slug == "internal"
    assert published.display("tps") == "812.35" and published.flavor.vcpus == 2 and published.flavor.memory_gb == 4
    assert str(published.engine_version) == "MySQL MariaDB 10.11"
    assert client.post(f"/runs/{run.pk}/publish/").status_code == 302  # a second time: refused with a message
    assert PublishedResult.objects.filter(table__document__slug="internal-measurements").count() == 1


def test_reproduce_prefills_the_run_form(client, staff_user, target, profiles):
    result = PublishedResult.objects.filter(table__methodology__tool="sysbench", engine_version__engine__slug="mysql").first()
    client.force_login(staff_user)
    response = client.get(f"/runs/new/?reproduce={result.pk}")
    form = response.context["form"]
    assert form.initial["reproduces"] == result.pk
    assert form.initial["profile"] == profiles["sysbench-oltp-rw-mysql"].pk
    assert "Reproducing the published row" in response.content.decode()


def test_target_test_connection_reports_the_error_without_the_password(client, staff_user):
    t = Target(name="nowhere", engine="mysql", host="127.0.0.1", port=1, database="x", user="u")
    t.set_password(PASSWORD)
    t.save()
    client.force_login(staff_user)
    response = client.post(f"/runs/targets/{t.pk}/test/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "✘" in html and PASSWORD not in html and "<html" not in html


def test_staff_see_reproduce_on_catalogue_rows_and_the_runs_link(client, staff_user):
    result = PublishedResult.objects.select_related("table__document").first()
    assert "?reproduce=" not in client.get(result.table.document.get_absolute_url()).content.decode()
    client.force_login(staff_user)
    html = client.get(result.table.document.get_absolute_url()).content.decode()
    assert f'/runs/new/?reproduce={result.pk}"' in html and 'href="/runs/"' in html


def test_the_targets_api_says_whether_a_target_is_archived(target, operator_user):
    # Issue 23.8: an archived target takes no new runs; an API consumer could not tell which.
    from django.test import Client
    from django.utils import timezone

    archived = Target(name="retired", engine="mysql", host="127.0.0.1", port=3306, database="x", user="u",
                      archived_at=timezone.now())
    archived.save()
    client = Client()
    client.force_login(operator_user)
    body = client.get("/api/v1/targets/").json()
    rows = {t["name"]: t for t in (body["results"] if isinstance(body, dict) else body)}
    assert rows[target.name]["archived_at"] is None
    assert rows["retired"]["archived_at"] is not None


def test_run_parameters_are_the_same_list_on_the_form_the_page_and_the_api(client, operator_user, target, profiles,
                                                                            operator_api):
    """One definition of a run's parameters (runs.params.PARAMETERS): the form offers them, the run page lists them,
    the API's RunOverrides schema describes them and a profile states them, all the same names in the same order."""
    expected = ["threads", "thread_sweep", "duration_s", "report_interval_s", "warmup_s", "tables", "rows_per_table",
                "scale", "range", "jobs", "prepared", "client_hosts",  # the list of a run's parameters
                "rate_tps", "latency_limit_ms",  # issue 35's open loop
                "capacity_bound_ms", "capacity_factor", "capacity_max_tps", "capacity_budget_pct"]  # and capacity search
    client.force_login(operator_user)
    html = client.get("/runs/new/").content.decode()
    form_names = [n for n in re.findall(r'<(?:input|select)[^>]*\bname="([a-z_]+)"', html)
                  if n not in ("csrfmiddlewaretoken", "target", "profile", "reproduces", "repeats")]
    assert form_names == expected
    schema = operator_api.get("/api/v1/schema/", {"format": "json"}).json()
    assert list(schema["components"]["schemas"]["RunOverrides"]["properties"]) == expected
    profile_fields = list(schema["components"]["schemas"]["Profile"]["properties"])
    launch_only = ("client_hosts", "rate_tps", "latency_limit_ms", "capacity_bound_ms", "capacity_factor", "capacity_max_tps",
                   "capacity_budget_pct")  # a launch's, not a profile's
    assert profile_fields[profile_fields.index("runnable") + 1:] == [n for n in expected if n not in launch_only]
    # The run page lists a sysbench run's own parameters in that order (the workload last).
    run = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                              "overrides": {"threads": 3, "client_hosts": 1}}, format="json").json()
    page = client.get(f"/runs/{run['id']}/").content.decode()
    shown = re.findall(r'data-param="([a-z_]+)"', page)
    assert shown == ["threads", "duration_s", "report_interval_s", "warmup_s", "tables", "rows_per_table", "prepared",
                     "workload"], shown


# The command line of a real run made before the driver dropped -r (ro.sql, 2 clients, -j 2, against the TLS test
# server): pgbench printed "latency average = 0.002 ms" at 79,356 TPS, where 2 clients / TPS is 0.0252 ms.
BROKEN_LATENCY_COMMAND = (
    "pgbench -i -q -s 1 -h localhost -p 55125 -U perfdash_tls perfdash_tls\n"
    "pgbench -M prepared -P 1 -c 2 -j 2 -T 5 -v -r -f /w/runs/drivers/scripts/ro.sql -D scale=1 -D range=100000 "
    "-l --log-prefix=latency-step1 --sampling-rate=0.027 -h localhost -p 55125 -U perfdash_tls perfdash_tls\n"
    "pgbench -i -I d -h localhost -p 55125 -U perfdash_tls perfdash_tls")


@pytest.mark.parametrize("command_line,caveat", [
    (BROKEN_LATENCY_COMMAND, True),
    (BROKEN_LATENCY_COMMAND.replace(" -r ", " "), False),  # as the driver runs pgbench now
    (BROKEN_LATENCY_COMMAND.replace("-j 2", "-j 1"), False),  # one thread: pgbench measures right
])
def test_a_pgbench_run_made_with_r_and_P_on_several_threads_says_its_latency_is_not_to_be_trusted(
        client, operator_user, operator_api, pg_target, profiles, command_line, caveat):
    run = make_run(pg_target, profiles["pgbench-ro-quick"], operator_user, state=RunState.SUCCEEDED, command_line=command_line,
                   summary={"step": 1, "threads": 2, "transactions": 395900, "tps": 79356.441111, "qps": 79356.441111,
                            "latency_avg_ms": 0.002},
                   insight={"steps": [{"step": 1, "threads": 2, "latency": {"p95_ms": 0.001, "method": "pgbench -l"}}],
                            "latency": {"p95_ms": 0.001}})
    client.force_login(operator_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    headline = html.split('id="run-headline"', 1)[1].split("</p>", 1)[0]
    assert "79356.44" in headline
    assert ('id="run-latency-caveat"' in html) is caveat
    assert ("p95" in headline) is not caveat  # a wrong p95 is not a headline figure
    api = operator_api.get(f"/api/v1/runs/{run.pk}/").json()
    assert bool(api["latency_caveat"]) is caveat
    exported = json.loads(client.get(f"/runs/{run.pk}/export.json").content)
    assert exported["latency_caveat"] == api["latency_caveat"]
    if caveat:
        assert "-r and -P on 2 threads" in api["latency_caveat"] and "Its TPS is." in api["latency_caveat"]


def test_compare_leaves_out_a_latency_measured_wrong(client, operator_user, pg_target, profiles):
    def run(command_line, p95):
        return make_run(pg_target, profiles["pgbench-ro-quick"], operator_user, state=RunState.SUCCEEDED, command_line=command_line,
                        summary={"tps": 80000.0, "qps": 80000.0}, insight={"latency": {"p95_ms": p95}})
    good, broken = run(BROKEN_LATENCY_COMMAND.replace(" -r ", " "), 0.031), run(BROKEN_LATENCY_COMMAND, 0.001)
    client.force_login(operator_user)
    html = client.get(f"/runs/compare/?run={good.pk}&run={broken.pk}&base={good.pk}").content.decode()
    row = html.split(f'<tr data-run="{broken.pk}"', 1)[1].split("</tr>", 1)[0]
    assert "0.001" not in row and "latency not to be trusted" in row  # not a "-97 %" against the baseline
    assert "0.031" in html.split(f'<tr data-run="{good.pk}"', 1)[1].split("</tr>", 1)[0]


def test_the_live_part_sends_what_changed_since_the_page_had_it(client, operator_user, pg_target, profiles,
                                                                 django_assert_max_num_queries):
    """Issue 39.4: the run page's one update stream. Each answer brings the status, the samples and log lines after
    the page's cursors, and the set-up or results part only when they changed; an ended run's answer ends the stream
    and carries the whole tail of its log, now one text."""
    run = make_run(pg_target, profiles["pgbench-ro-quick"], operator_user, state=RunState.RUNNING, step=1,
                   server_settings={"max_connections": "100"}, server_settings_hash="ab" * 32)
    Sample.objects.bulk_create([Sample(run=run, t=i, threads=2, tps=100 + i) for i in range(3)])
    run.append_log(["line 1", "line 2"])
    client.force_login(operator_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "line 1\nline 2" in page and 'id="run-settings-details" hx-preserve' in page
    assert "hx-trigger=\"every" not in page  # no other poller on the page

    def live(url, most=9):
        with django_assert_max_num_queries(most):
            answer = client.get(url, HTTP_HX_REQUEST="true")
        assert answer.status_code == 200
        html = answer.content.decode()
        data = re.search(r'<script id="run-live-data" type="application/json">(.*?)</script>', html, re.S)
        following = re.search(r'<div id="run-live"[^>]*hx-get="([^"]+)"', html)
        return html, json.loads(data.group(1)), following and following.group(1).replace("&amp;", "&")

    first_url = re.search(r'<div id="run-live"[^>]*hx-get="([^"]+)"[^>]*hx-trigger="load, retry"', page, re.S).group(1).replace("&amp;", "&")
    # A poll while only samples and log lines changed: session, user, operator group, the run (with its command line,
    # which the latency caveat reads; without its relations, which only some states show), samples, server samples,
    # log lines.
    html, data, url = live(first_url, most=7)
    assert [s["tps"] for s in data["samples"]] == [100, 101, 102]
    assert 'id="run-status" data-final="false" data-state="running" hx-swap-oob="true"' in html
    assert 'id="run-setup"' not in html and 'id="run-results"' not in html and 'id="run-log"' not in html
    assert "delay:1s" in html and len(html) < 4000  # the run's report interval; a small answer

    Sample.objects.create(run=run, t=3, threads=2, tps=103)
    run.append_log(["line 3"])
    html, data, url = live(url, most=7)
    assert [s["tps"] for s in data["samples"]] == [103]
    assert '<pre id="run-log" hx-swap-oob="beforeend">line 3\n</pre>' in html
    assert 'id="run-setup"' not in html and 'id="run-results"' not in html

    Run.objects.filter(pk=run.pk).update(step=2)  # the next step: the results part is sent again, the set-up is not
    html, data, url = live(url)
    assert data["samples"] == [] and 'id="run-results" hx-swap-oob="true"' in html and 'id="run-setup"' not in html

    assert actions.start_cleanup(run) and actions.succeed(run, {"tps": 101.5})
    run.refresh_from_db()
    assert run.log == "line 1\nline 2\nline 3" and not run.log_chunks.exists()
    html, data, url = live(url)
    assert url is None and '<pre class="log" id="run-log" hx-swap-oob="true">line 1\nline 2\nline 3</pre>' in html
    assert 'data-final="true"' in html and 'id="run-results" hx-swap-oob="true"' in html
