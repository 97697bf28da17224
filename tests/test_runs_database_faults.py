"""The dashboard's own database failing under a running benchmark (issue 50.1, 50.2), with a real worker and real
sysbench on the machine's MariaDB; the faults are made on the test database itself (pg_terminate_backend of its
connections, ALLOW_CONNECTIONS false), from a connection to another database.

- A blip (every connection terminated) at any moment of a run, from its claim to its end, is waited out: twenty of
  them over several runs, each hitting the worker, and every run succeeds with every one of its samples. Before, the
  log's write (a LogChunk insert) and the state changes were outside the retrying guard: 3 of 7 runs failed.
- A database still refusing connections when RUNS_DATABASE_GRACE_SECONDS ends: the worker fails the run with the
  database's own error as soon as it takes a write again, and drops the tables (the target answers). Before, the task
  crashed writing the failure and the run stayed "running" until a reconciler called the living worker dead."""

import random
import time

import psycopg
import pymysql
import pytest
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from runs.models import Run, RunState, Sample, Target

from testbed.runs_support import (DB_USER, MYSQL_DB, PASSWORD, logged_steps, printed_intervals, private_tmp, queue_worker,
                                  run_processes, wait_for)

from .tiers import tier

pytestmark = pytest.mark.django_db(transaction=True)

PROFILE = "sysbench-oltp-rw-mysql-quick"
GRACE_QUEUE = "db-grace-test"
GRACE_SECONDS = 2


def admin():
    """A connection to another database of the same server: it survives what is done to the test database."""
    db = settings.DATABASES["default"]
    return psycopg.connect(f"postgresql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/postgres",
                           autocommit=True)


def dashboard_database():
    return connection.settings_dict["NAME"]


def survive(read):
    """read() on the test's own connection, which the faults terminate too: reconnect and read again."""
    for _ in range(300):
        try:
            return read()
        except (OperationalError, InterfaceError):
            connection.close()
            time.sleep(0.1)
    raise AssertionError("the test database did not come back")


def make_target(name, queue="benchmarks"):
    target = Target(name=name, engine="mysql", host="127.0.0.1", port=3306, database=MYSQL_DB, user=DB_USER,
                    vcpus=2, memory_gb=4, queue=queue)
    target.set_password(PASSWORD)
    target.save()
    return target


def launch(api, target, **overrides):
    response = survive(lambda: api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "overrides": overrides},
                                        format="json"))
    assert response.status_code == 201, response.content
    return response.json()["id"]


def mariadb_tables():
    """The sysbench tables on the benchmark database, as MariaDB itself lists them."""
    with pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", database=MYSQL_DB) as conn:
        with conn.cursor() as cursor:
            cursor.execute("SHOW TABLES LIKE 'sbtest%%'")
            return sorted(row[0] for row in cursor.fetchall())


def test_twenty_blips_over_several_runs_lose_nothing(worker, committed, operator_api):
    target = make_target("blips")
    duration = 6
    blips, run_ids = [], []
    random.seed(50)
    with admin() as pg:
        while len(blips) < 20 or len(run_ids) < 3:
            assert len(run_ids) < 8, f"{len(blips)} blips hit the worker in {len(run_ids)} runs"
            run_id = launch(operator_api, target, duration_s=duration)
            run_ids.append(run_id)
            # From the launch to the end: the claim, the set-up, prepare, the measured step, cleanup and the end. A
            # run still not final after 3 minutes (a 6 s run) is stuck: the test fails saying where, never hangs.
            deadline = time.monotonic() + 180
            while not survive(lambda: Run.objects.get(pk=run_id).is_final):
                stuck = survive(lambda: Run.objects.get(pk=run_id))
                assert time.monotonic() < deadline, (run_id, stuck.state, stuck.log[-3000:], "".join(worker.output)[-6000:])
                time.sleep(random.uniform(0.3, 0.8))
                connection.close()  # ours is not counted: every backend left is the worker's
                killed = pg.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s "
                                    "AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
                                    [dashboard_database()]).fetchone()[0]
                if killed:
                    blips.append(run_id)
    assert len(blips) >= 20
    for run_id in run_ids:
        run = survive(lambda: Run.objects.get(pk=run_id))
        assert run.state == RunState.SUCCEEDED, (run_id, run.reason, run.log[-2000:],
                                                 "".join(line for line in worker.output if "Traceback" in line
                                                         or line.startswith(("  File", "django.", "psycopg"))
                                                         or f"run {run_id}" in line)[-6000:])
        # Every interval sysbench printed is stored, none twice: the samples against the tool's own lines in the log,
        # which reach the database by another write (a lost log chunk would show as a gap, a lost sample as a miss);
        # the log goes on to the tool's final report. sysbench prints 5 or 6 lines in 6 s (its last may fall after --time).
        steps = logged_steps(run.log)
        printed = printed_intervals(steps[-2][1])  # the measured step: the last before cleanup
        assert printed == [float(s) for s in range(1, len(printed) + 1)] and len(printed) >= duration - 1, (run_id, printed)
        assert "transactions:" in run.log
        seconds = sorted(survive(lambda: list(Sample.objects.filter(run_id=run_id, warmup=False).values_list("t", flat=True))))
        assert seconds == printed, (run_id, seconds, printed)
        # reset (tables left behind), prepare, run, cleanup: each step's command logged once, none lost or written twice
        assert [command.split()[-1] for command, _ in steps] == ["cleanup", "prepare", "run", "cleanup"], run.log
    assert any("reconnected, nothing lost" in survive(lambda: Run.objects.get(pk=r).log) for r in blips)
    assert mariadb_tables() == []  # every cleanup ran


@pytest.fixture
@tier("fault")
def grace_worker(django_db_setup, bench_users, tmp_path_factory):
    tmp = private_tmp(tmp_path_factory, "db-grace-worker")
    with queue_worker(GRACE_QUEUE, "runs-db-grace", tmp, concurrency=1,
                      RUNS_DATABASE_GRACE_SECONDS=str(GRACE_SECONDS)) as proc:
        yield proc


def test_a_database_still_refusing_at_the_grace_fails_the_run_from_the_worker(grace_worker, committed, operator_api):
    run_id = launch(operator_api, make_target("refused", queue=GRACE_QUEUE), duration_s=60)
    wait_for(lambda: Sample.objects.filter(run_id=run_id, tps__gt=0).exists(), timeout=60, message="a first sample")
    assert mariadb_tables() == ["sbtest1"]
    name = dashboard_database()
    connection.close()
    with admin() as pg:
        try:
            pg.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
            pg.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name])
            time.sleep(GRACE_SECONDS + 3)  # the fault's length: refused past the grace, then taken back
        finally:
            pg.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
    allowed_at = time.time()
    run = wait_for(lambda: (r := survive(lambda: Run.objects.get(pk=run_id))).is_final and r, timeout=30,
                   message="the worker to fail the run")
    assert run.state == RunState.FAILED
    assert "Lost the database connection while running" in run.reason
    assert "is not currently accepting connections" in run.reason  # the database's own error
    assert "stopped reporting" not in run.reason
    assert run.finished_at.timestamp() - allowed_at < 10
    assert "Its tables left on the target were dropped: sbtest1" in run.reason
    assert mariadb_tables() == []
    wait_for(lambda: run_processes(run_id) == [], timeout=10, message="sysbench to be gone")


@pytest.mark.django_db(transaction=False)
def test_a_state_change_keeps_the_runs_target_and_profile(operator_user, profiles, django_assert_num_queries):
    """The engine reads run.target and run.profile after each state change (the claim, start measuring, cleanup) outside
    its retrying guard: a plain refresh_from_db forgot them, so that read was a query, and a blip at that moment failed
    one run in twenty of the blip test ("Lost the database connection while running")."""
    from runs import actions

    target = make_target("kept")
    run = Run.objects.create(target=target, profile=profiles[PROFILE], params=profiles[PROFILE].resolve({}),
                             requested_by=operator_user)
    run = Run.objects.select_related("target", "profile").get(pk=run.pk)
    assert actions.claim(run, "celery@test", 1, "test-host", 2)
    assert actions.start_measuring(run)
    with django_assert_num_queries(0):
        assert (run.target.name, run.profile.tool, run.state) == ("kept", "sysbench", RunState.RUNNING)
