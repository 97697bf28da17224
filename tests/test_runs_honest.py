"""Runs that stay honest on shared servers (issue 23), through HTTP without a worker: the server-side
cross-check's warning and the acknowledgement publishing needs (23.3), no publish confirmation for a run
that cannot be published, the summary's latency line, a bad `reproduces` id (23.8). The insight stored on
the runs here is what the worker writes (runs/insight.py), with the numbers the issue reports."""

import pytest
from rest_framework.test import APIClient

from runs import actions
from runs.models import Run, RunState, Target
from whitepaper.models import PublishedResult

from testbed.runs_support import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def targets():
    made = {}
    for engine, port in (("postgresql", 5432), ("mysql", 3306)):
        t = Target(name=f"honest-{engine}", engine=engine, host="127.0.0.1", port=port, database="sbtest", user="bench",
                   vcpus=2, memory_gb=4)
        t.set_password(PASSWORD)
        t.save()
        made[engine] = t
    return made


def step(index, threads, server_tps, tool_tps, latency=None):
    """A step's insight as runs.insight.server_evidence writes it."""
    return {"step": index, "threads": threads, "latency": latency or {},
            "server": {"tps": server_tps, "tool_tps": tool_tps, "agreement_pct": round(100.0 * server_tps / tool_tps, 1)},
            "client": {"bound": False}}


def succeeded(target, profile, user, steps, tps):
    return Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=user,
                              state=RunState.SUCCEEDED, summary={"tps": tps, "transactions": 1000, "threads": 8, "step": 1},
                              insight={"steps": steps}, server_version="PostgreSQL 15.20", tool_version="16")


# --- 23.3 -------------------------------------------------------------------------------------------------
def test_it_says_the_server_saw_other_load_on_the_run_page_the_export_and_the_publish_confirmation(client, operator_user, targets, profiles):
    # The run: the server counted 1,944.56 TPS while pgbench counted 187.13 (another client on the database).
    run = succeeded(targets["postgresql"], profiles["pgbench-tpcb-quick"], operator_user, [step(1, 8, 1944.56, 187.13)], 187.13)
    client.force_login(operator_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-other-load"' in page and "The server saw other load" in page
    assert "server 1944.56 TPS against the tool's 187.13 (1039.1 %)" in page  # 100 x 1944.56 / 187.13 = 1039.1
    assert "beyond the 10 % tolerance" in page
    export = client.get(f"/runs/{run.pk}/export.json").json()
    assert export["other_load"]["steps"] == [{"step": 1, "threads": 8, "server_tps": 1944.56, "tool_tps": 187.13,
                                              "agreement_pct": 1039.1}]
    assert export["other_load"]["tolerance_pct"] == 10.0 and export["other_load"]["acknowledged_at"] is None
    assert "other_load" in export["fields"]
    # The API says the same as the export.
    api = APIClient()
    api.force_authenticate(operator_user)
    assert api.get(f"/api/v1/runs/{run.pk}/").json()["other_load"] == export["other_load"]
    confirm = client.get(f"/runs/{run.pk}/publish/").content.decode()
    assert 'id="publish-other-load"' in confirm and 'name="acknowledge_other_load"' in confirm


def test_publishing_a_run_that_saw_other_load_needs_an_acknowledgement_kept_on_the_run(client, operator_user, targets, profiles):
    # The MariaDB run at 170 % (server-wide counters, another session running).
    run = succeeded(targets["mysql"], profiles["sysbench-oltp-rw-mysql-quick"], operator_user, [step(1, 2, 340.0, 200.0)], 200.0)
    client.force_login(operator_user)
    refused = client.post(f"/runs/{run.pk}/publish/")
    assert refused.status_code == 400 and 'id="acknowledge-error"' in refused.content.decode()
    run.refresh_from_db()
    assert run.published_result is None and run.other_load_acknowledged_at is None
    assert not PublishedResult.objects.filter(table__document__slug="internal-measurements").exists()
    assert client.post(f"/runs/{run.pk}/publish/", {"acknowledge_other_load": "on"}).status_code == 302
    run.refresh_from_db()
    assert run.published_result is not None
    assert run.other_load_acknowledged_by == operator_user and run.other_load_acknowledged_at is not None
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f"Published anyway: {operator_user.username} acknowledged it on" in page
    assert client.get(f"/runs/{run.pk}/export.json").json()["other_load"]["acknowledged_by"] == operator_user.username
    api = APIClient()
    api.force_authenticate(operator_user)
    assert api.get(f"/api/v1/runs/{run.pk}/").json()["other_load"]["acknowledged_by"] == operator_user.username


def test_a_run_within_the_tolerance_says_nothing_and_publishes_without_acknowledgement(client, operator_user, targets, profiles):
    # Alone, server and tool agree within 0.2 % (README); 109 % is still inside the stated 10 %.
    run = succeeded(targets["postgresql"], profiles["pgbench-tpcb-quick"], operator_user,
                    [step(1, 2, 300.6, 300.0), step(2, 4, 545.0, 500.0)], 500.0)
    client.force_login(operator_user)
    assert "The server saw other load" not in client.get(f"/runs/{run.pk}/").content.decode()
    assert "acknowledge_other_load" not in client.get(f"/runs/{run.pk}/publish/").content.decode()
    assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    run.refresh_from_db()
    assert run.published_result is not None and run.other_load_acknowledged_at is None


# --- 23.8 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("state", [RunState.FAILED, RunState.CANCELLED, RunState.RUNNING])
def test_no_publish_confirmation_for_a_run_that_cannot_be_published(client, operator_user, targets, profiles, state):
    run = Run.objects.create(target=targets["postgresql"], profile=profiles["pgbench-tpcb-quick"], params={}, requested_by=operator_user,
                             state=state, reason="run failed: connection refused")
    client.force_login(operator_user)
    response = client.get(f"/runs/{run.pk}/publish/", follow=True)
    html = response.content.decode()
    assert response.redirect_chain == [(f"/runs/{run.pk}/", 302)]
    assert "cannot be published" in html and "Its TPS" not in html and 'id="confirm-publish"' not in html
    assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    assert Run.objects.get(pk=run.pk).published_result is None


def test_the_pgbench_summary_shows_p95_and_max_from_its_latency_table(client, operator_user, targets, profiles):
    # pgbench's final report prints only "latency average"; the per-transaction log gave the latency table its p95 and max.
    latency = {"p50_ms": 0.811, "p95_ms": 1.702, "p99_ms": 2.9, "max_ms": 14.215, "count": 5203, "method": "pgbench -l"}
    run = succeeded(targets["postgresql"], profiles["pgbench-tpcb-quick"], operator_user, [step(1, 2, 520.3, 520.3, latency)], 520.3)
    Run.objects.filter(pk=run.pk).update(summary={**run.summary, "latency_avg_ms": 0.923})
    client.force_login(operator_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    line = page.split('id="summary-latency"')[1].split("</tr>")[0]
    assert "– / 0.923 / 14.215 / 1.702" in line and "from the latency table: pgbench -l" in line


@pytest.mark.parametrize("value,message", [("abc", "must be the id of a published result"), ("２", "must be the id of a published result"),
                                           ("99999999", "No published result has the id 99999999")])
def test_a_bad_reproduces_id_is_a_clear_error_on_the_form_and_the_api(client, operator_user, targets, profiles, value, message):
    client.force_login(operator_user)
    shown = client.get("/runs/new/", {"reproduce": value})
    assert shown.status_code == 400 and message in shown.content.decode() and 'id="reproduce-error"' in shown.content.decode()
    posted = client.post("/runs/new/", {"target": targets["postgresql"].pk, "profile": profiles["pgbench-tpcb-quick"].pk,
                                        "reproduces": value, "repeats": "1"})
    assert posted.status_code == 400 and message in posted.content.decode()
    api = APIClient()
    api.force_authenticate(operator_user)
    response = api.post("/api/v1/runs/", {"target": targets["postgresql"].pk, "profile": "pgbench-tpcb-quick",
                                          "reproduces": value}, format="json")
    assert response.status_code == 400 and message in response.json()["errors"]["reproduces"][0]
    assert not Run.objects.exists()


def test_the_api_takes_a_reproduces_id_of_the_targets_engine(operator_user, targets, profiles):
    api = APIClient()
    api.force_authenticate(operator_user)
    mysql_row = PublishedResult.objects.filter(engine_version__engine__slug="mysql").first()
    wrong = api.post("/api/v1/runs/", {"target": targets["postgresql"].pk, "profile": "pgbench-tpcb-quick",
                                       "reproduces": mysql_row.pk}, format="json")
    assert wrong.status_code == 400 and "reproduces" in wrong.json()["errors"]
    pg_row = PublishedResult.objects.filter(engine_version__engine__slug="postgresql").first()
    made = api.post("/api/v1/runs/", {"target": targets["postgresql"].pk, "profile": "pgbench-tpcb-quick",
                                      "reproduces": pg_row.pk}, format="json")
    assert made.status_code == 201 and made.json()["reproduces"] == pg_row.pk
    assert Run.objects.get(pk=made.json()["id"]).reproduces == pg_row


# --- 23.5 -------------------------------------------------------------------------------------------------
def test_a_schedule_refuses_a_period_shorter_than_its_runs(targets, profiles):
    from runs.models import Schedule

    staff = APIClient()
    staff.force_authenticate(make_user("honest-staff", staff=True))
    body = {"name": "every-minute", "target": targets["postgresql"].pk, "profile": "pgbench-ro-quick",
            "overrides": {"duration_s": 150}}
    # The schedule: every minute (60 s apart), runs of 150 s.
    refused = staff.post("/api/v1/schedules/", {**body, "cron": "* * * * *"}, format="json")
    assert refused.status_code == 400
    assert "60 s apart" in refused.json()["errors"]["cron"][0] and "take 150 s" in refused.json()["errors"]["cron"][0]
    # Two due times a minute apart once a day are as close; three repeats of 150 s (450 s) do not fit in 5 minutes.
    assert staff.post("/api/v1/schedules/", {**body, "cron": "0,1 3 * * *"}, format="json").status_code == 400
    three = staff.post("/api/v1/schedules/", {**body, "cron": "*/5 * * * *", "repeats": 3}, format="json")
    assert three.status_code == 400 and "300 s apart" in three.json()["errors"]["cron"][0] and "450 s" in three.json()["errors"]["cron"][0]
    assert not Schedule.objects.exists()
    assert staff.post("/api/v1/schedules/", {**body, "cron": "*/5 * * * *"}, format="json").status_code == 201
    # Weekdays only at 03:00: Friday to Monday is the longest gap, Monday to Tuesday (86,400 s) the shortest.
    long_runs = {**body, "name": "weekdays", "overrides": {"duration_s": 86400}, "cron": "0 3 * * 1-5",
                 "large_run_confirmed": True}  # a day-long run is large: confirmed (tests/test_runs_schedules_api.py)
    assert staff.post("/api/v1/schedules/", long_runs, format="json").status_code == 201


def test_a_schedule_skips_a_due_time_while_its_previous_run_still_goes_and_says_so(client, targets, profiles):
    from runs.models import Schedule
    from runs.schedules import save_schedule
    from runs.tasks import scheduled_run

    staff = make_user("honest-staff", staff=True)
    schedule = save_schedule(Schedule(name="every-5", target=targets["postgresql"], profile=profiles["pgbench-ro-quick"],
                                      cron="*/5 * * * *", created_by=staff))
    first = scheduled_run(schedule.pk)  # what beat's firing runs
    assert Run.objects.filter(schedule=schedule).count() == 1
    for state in (RunState.QUEUED, RunState.RUNNING):
        Run.objects.filter(pk=first).update(state=state)
        assert scheduled_run(schedule.pk) is None
    assert Run.objects.filter(schedule=schedule).count() == 1  # nothing piled up
    schedule.refresh_from_db()
    assert [(s["run"], s["state"]) for s in schedule.skips] == [(first, "running"), (first, "queued")]
    client.force_login(staff)
    page = client.get("/runs/schedules/").content.decode()
    assert f"Skipped 2 due times while its previous run was still queued or running (last {schedule.skips[0]['at']}: run #{first})" in page
    api = APIClient()
    api.force_authenticate(staff)
    assert api.get(f"/api/v1/schedules/{schedule.pk}/").json()["skips"][0]["run"] == first
    Run.objects.filter(pk=first).update(state=RunState.SUCCEEDED)
    assert scheduled_run(schedule.pk) not in (None, first)
    assert Run.objects.filter(schedule=schedule).count() == 2


# --- 23.6 -------------------------------------------------------------------------------------------------
def pg_tables(names):
    import psycopg

    from testbed.runs_support import PG_DB

    with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{PG_DB}") as conn:
        return sorted(r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE tablename = ANY(%s)", [names]))


def mysql_tables(names):
    import pymysql

    from testbed.runs_support import MYSQL_DB

    conn = pymysql.connect(host="127.0.0.1", user="root", password="", database=MYSQL_DB)
    with conn.cursor() as cur:
        cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
        found = sorted(r[0] for r in cur.fetchall() if r[0] in names)
    conn.close()
    return found


def dead_run(target, profile, user, settings, **overrides):
    """A run whose worker (on another host) went silent while running, as the reconciler finds it."""
    from datetime import timedelta

    from django.utils import timezone

    run = Run.objects.create(target=target, profile=profile, params=profile.resolve(overrides), overrides=overrides,
                             requested_by=user)
    assert actions.claim(run, "celery@elsewhere", 4242, "another-host", 8) and actions.start_measuring(run)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=settings.RUNS_STALE_AFTER_SECONDS + 1))
    return run


PGBENCH_TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]


def test_the_reconciler_drops_the_tables_a_dead_worker_left_on_the_target(bench_users, operator_user, profiles, settings):
    import os
    import subprocess

    from runs.tasks import reconcile_runs

    from testbed.runs_support import DB_USER, PG_DB

    target = Target(name="left-pg", engine="postgresql", host="127.0.0.1", port=5432, database=PG_DB, user=DB_USER)
    target.set_password(PASSWORD)
    target.save()
    # What the dead run's prepare step had made: pgbench's own tables (scale 1).
    subprocess.run(["pgbench", "-i", "-s", "1", "-q", "-h", "127.0.0.1", "-p", "5432", "-U", DB_USER, PG_DB],
                   env={**os.environ, "PGPASSWORD": PASSWORD}, check=True, capture_output=True)
    assert pg_tables(PGBENCH_TABLES) == sorted(PGBENCH_TABLES)
    run = dead_run(target, profiles["pgbench-ro-quick"], operator_user, settings)
    assert reconcile_runs() == [run.pk]
    run.refresh_from_db()
    assert run.state == RunState.FAILED and "stopped reporting" in run.reason
    assert "Its tables left on the target were dropped: pgbench_accounts, pgbench_branches, pgbench_tellers, pgbench_history." in run.reason
    assert pg_tables(PGBENCH_TABLES) == [] and run.leftover_tables == []
    assert PASSWORD not in run.reason


def test_an_unreachable_target_keeps_what_was_left_and_the_run_page_drops_it_later(bench_users, client, operator_user, profiles, settings):
    import pymysql

    from runs.tasks import reconcile_runs

    from testbed.runs_support import DB_USER, MYSQL_DB

    target = Target(name="left-maria", engine="mysql", host="127.0.0.1", port=1, database=MYSQL_DB, user=DB_USER)
    target.set_password(PASSWORD)
    target.save()
    run = dead_run(target, profiles["sysbench-oltp-rw-mysql-quick"], operator_user, settings, tables=2)
    assert reconcile_runs() == [run.pk]
    run.refresh_from_db()
    assert run.state == RunState.FAILED and run.leftover_tables == ["sbtest1", "sbtest2"]
    assert "may be left on the target" in run.reason and "sbtest1, sbtest2; the run page offers to drop them" in run.reason
    client.force_login(operator_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-leftovers"' in page and "sbtest1, sbtest2 may be left on the target" in page and 'id="drop-leftovers"' in page
    # The notice says why (issue 50.8): the worker died before the cleanup, and the target could not be reached.
    assert "the run ended before its cleanup, and the target could not be reached to drop them" in page
    api = APIClient()
    api.force_authenticate(operator_user)
    assert api.get(f"/api/v1/runs/{run.pk}/").json()["leftover_tables"] == ["sbtest1", "sbtest2"]
    # The target is reachable again (its port fixed) and the tables are there.
    target.port = 3306
    target.save()
    conn = pymysql.connect(host="127.0.0.1", user="root", password="", database=MYSQL_DB, autocommit=True)
    with conn.cursor() as cur:
        for name in ("sbtest1", "sbtest2"):
            cur.execute(f"CREATE TABLE IF NOT EXISTS {name} (id INT PRIMARY KEY)")
    conn.close()
    # Not while another run uses that database: the tables would be its own.
    other = Run.objects.create(target=target, profile=profiles["sysbench-oltp-rw-mysql-quick"], params={}, requested_by=operator_user)
    assert actions.claim(other, "celery@x", 1, "h", 1)
    answer = client.post(f"/runs/{run.pk}/drop-leftovers/", follow=True).content.decode()
    assert f"Run {other.pk} is using this database now" in answer and mysql_tables(["sbtest1", "sbtest2"]) == ["sbtest1", "sbtest2"]
    Run.objects.filter(pk=other.pk).update(state=RunState.SUCCEEDED)
    answer = client.post(f"/runs/{run.pk}/drop-leftovers/", follow=True).content.decode()
    assert "Dropped from the target: sbtest1, sbtest2." in answer and 'id="drop-leftovers"' not in answer
    assert mysql_tables(["sbtest1", "sbtest2"]) == [] and Run.objects.get(pk=run.pk).leftover_tables == []
