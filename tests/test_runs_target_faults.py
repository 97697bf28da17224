"""A target that fails a run after its prepare began (issue 34): the run records the tables it may have left, and
a tool killed by a signal says so with its last line. Against a PostgreSQL and a MariaDB of the test's own
(testbed/tls_servers.py: TLS-only, free ports), which the tests stop and start again; a real worker with its own
TMPDIR runs real sysbench and pgbench."""

import os
import signal
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from runs.models import Run, RunState, Sample, Target

from testbed.runs_support import private_tmp, queue_worker, start_worker, stop_worker, tool_processes, wait_final, wait_for
from testbed.tls_servers import DATABASE, MAX_CONNECTIONS, PASSWORD, USER, running_servers

from .tiers import tier

pytestmark = pytest.mark.django_db(transaction=True)
QUEUE = "target-faults"
PGBENCH_TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]  # pgbench -i makes these


@pytest.fixture(scope="module")
@tier("fault")
def servers():
    with running_servers("perfdash-fault-servers-") as started:
        yield started


@pytest.fixture(scope="module")
def worker_tmp(tmp_path_factory):
    return private_tmp(tmp_path_factory, "fault-worker-tmp")


@pytest.fixture(scope="module")
@tier("fault")
def fault_worker(django_db_setup, bench_users, servers, worker_tmp):
    with queue_worker(QUEUE, "runs-faults", worker_tmp, concurrency=1) as proc:
        yield proc


def make_target(servers, engine):
    target = Target(name=f"fault-{engine}", engine=engine, host="localhost",
                    port=servers.mariadb_port if engine == "mysql" else servers.pg_port, database=DATABASE, user=USER,
                    tls_mode="verify-ca", tls_ca=servers.ca_pem, tls_cert=servers.client_cert_pem, queue=QUEUE)
    target.set_password(PASSWORD)
    target.set_tls_key(servers.client_key_pem)
    target.save()
    return target


def launch(operator_api, target, profile, **overrides):
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def measuring(run_id):
    """The run step is reporting transactions."""
    return Run.objects.get(pk=run_id).state == RunState.RUNNING and Sample.objects.filter(run_id=run_id, tps__gt=0).exists()


def tools_of(worker_tmp, run_id):
    return tool_processes(os.path.join(str(worker_tmp), f"perfdash-run{run_id}-"))


def restart(servers, engine):
    if engine == "mysql":
        servers.start_mariadb()
    else:
        servers.start_postgresql()


STOPPED = [("postgresql", "sysbench-oltp-rw-postgresql-quick", ["sbtest1"]),
           ("postgresql", "pgbench-tpcb-quick", PGBENCH_TABLES),
           ("mysql", "sysbench-oltp-rw-mysql-quick", ["sbtest1"])]


@pytest.mark.parametrize("engine,profile,tables", STOPPED, ids=["sysbench-pgsql", "pgbench", "sysbench-mysql"])
def test_a_target_stopped_mid_run_fails_the_run_naming_the_tables_it_left(
        servers, fault_worker, worker_tmp, committed, operator_api, client, operator_user, engine, profile, tables):
    run_id = launch(operator_api, make_target(servers, engine), profile, duration_s=60, threads=2)
    wait_for(lambda: measuring(run_id), timeout=120, message="the run step to report transactions")
    servers._stop("mariadb" if engine == "mysql" else "postgresql")
    try:
        run = wait_final(run_id, timeout=60)
    finally:
        restart(servers, engine)
    assert run.state == RunState.FAILED, run.reason
    assert run.leftover_tables == tables
    assert "Its tables may be left on the target (cleanup failed: " in run.reason
    assert ", ".join(tables) + "; the run page offers to drop them." in run.reason
    assert not tools_of(worker_tmp, run_id)
    # ... and the run page's "drop them" drops them once the target is back.
    client.force_login(operator_user)
    assert client.post(f"/runs/{run_id}/drop-leftovers/").status_code == 302
    assert Run.objects.get(pk=run_id).leftover_tables == []


def test_a_tool_killed_by_a_signal_says_so_with_its_last_line(servers, fault_worker, worker_tmp, committed, operator_api):
    run_id = launch(operator_api, make_target(servers, "postgresql"), "sysbench-oltp-rw-postgresql-quick", duration_s=60, threads=2)
    wait_for(lambda: measuring(run_id), timeout=120, message="the run step to report transactions")
    running = [pid for pid, argv in tools_of(worker_tmp, run_id) if argv[0] == "sysbench" and "run" in argv]
    assert len(running) == 1
    os.kill(running[0], signal.SIGSEGV)
    run = wait_final(run_id, timeout=60)
    assert run.state == RunState.FAILED
    # Its last line was an interval report (it printed no error): that line, not only an exit status.
    assert run.reason.startswith("run failed: sysbench crashed (signal 11) after: [ "), run.reason
    assert "thds: 2 tps:" in run.reason
    assert run.leftover_tables == []  # the target was fine: the cleanup dropped them


def terminate_the_workers_database_connections():
    """pg_terminate_backend of every connection to the dashboard's database but this test's own."""
    ours = connection.cursor().connection.info.backend_pid
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        ended = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> %s "
                              "AND backend_type = 'client backend'", [connection.settings_dict["NAME"], ours]).fetchall()
    assert ended


def test_a_blip_of_the_dashboards_database_does_not_fail_a_running_benchmark(
        servers, fault_worker, worker_tmp, committed, operator_api):
    run_id = launch(operator_api, make_target(servers, "postgresql"), "sysbench-oltp-rw-postgresql-quick", duration_s=8, threads=2)
    wait_for(lambda: measuring(run_id), timeout=120, message="the run step to report transactions")
    terminate_the_workers_database_connections()
    run = wait_final(run_id, timeout=60)
    assert run.state == RunState.SUCCEEDED, run.reason
    # Every interval the tool reported is stored (1 s intervals over 8 s; sysbench's last one may fall after --time).
    assert Sample.objects.filter(run=run, warmup=False).count() >= 7
    assert "the dashboard's database did not answer for" in run.log and "reconnected, nothing lost" in run.log


def test_a_dashboard_database_gone_longer_than_the_grace_drops_the_tables_left(
        servers, fault_worker, worker_tmp, committed, operator_api):
    """Only the dashboard's database went away: the target still answers, so the worker drops the tables the stopped
    tool left (issue 50.2; before, they were named for a later "drop them")."""
    target = make_target(servers, "postgresql")
    Target.objects.filter(pk=target.pk).update(queue=QUEUE + "-nograce")
    impatient = start_worker(queues=QUEUE + "-nograce", concurrency=1, name="runs-nograce",
                             env={"TMPDIR": str(worker_tmp), "RUNS_DATABASE_GRACE_SECONDS": "0"})
    try:
        run_id = launch(operator_api, target, "sysbench-oltp-rw-postgresql-quick", duration_s=60, threads=2)
        wait_for(lambda: measuring(run_id), timeout=120, message="the run step to report transactions")
        terminate_the_workers_database_connections()
        run = wait_final(run_id, timeout=60)
    finally:
        stop_worker(impatient)
    assert run.state == RunState.FAILED
    assert "Lost the database connection" in run.reason
    assert run.leftover_tables == []
    assert "Its tables left on the target were dropped: sbtest1." in run.reason
    wait_for(lambda: not tools_of(worker_tmp, run_id), timeout=15, message="no tool left")
    with psycopg.connect(host=str(servers.pg_socket_dir), port=servers.pg_port, user="postgres", dbname=DATABASE) as pg:
        assert pg.execute("SELECT to_regclass('public.sbtest1')").fetchone()[0] is None  # the server's own word

def key_files(worker_tmp):
    """Files in the worker's TMPDIR that hold TLS material (the client key above all), with their directories."""
    return sorted(str(p) for p in Path(worker_tmp).rglob("*") if "perfdash" in p.name or p.name.endswith(".pem"))


def test_a_killed_pool_process_leaves_no_client_key_on_disk(servers, fault_worker, worker_tmp, committed, operator_api):
    """kill -9 of the pool process running a TLS run: the worker's next pool process removes the dead run's work
    directory (its decrypted client-key.pem) as it starts, and fails the run, well within 60 s."""
    run_id = launch(operator_api, make_target(servers, "postgresql"), "sysbench-oltp-rw-postgresql-quick", duration_s=60, threads=2)
    wait_for(lambda: measuring(run_id), timeout=120, message="the run step to report transactions")
    assert any(p.endswith("/client-key.pem") for p in key_files(worker_tmp))  # where the key lives while the run is alive
    pool_pid = Run.objects.get(pk=run_id).worker_pid
    assert pool_pid and pool_pid != fault_worker.pid
    os.kill(pool_pid, signal.SIGKILL)
    killed_at = time.monotonic()
    wait_for(lambda: not key_files(worker_tmp), timeout=60, message="no TLS file left 60 s after the pool process died")
    print(f"[measured] client key removed {time.monotonic() - killed_at:.1f} s after the pool process was killed")
    run = wait_final(run_id, timeout=60)
    assert run.state == RunState.FAILED and "died" in run.reason
    assert not tools_of(worker_tmp, run_id)


def freeze(servers, engine, sig=signal.SIGSTOP):
    """SIGSTOP (or SIGCONT) the whole server: its postmaster or mariadbd and every backend (one process group)."""
    os.killpg(servers.procs["mariadb" if engine == "mysql" else "postgresql"].pid, sig)


# Big enough that the prepare step lasts seconds here (pgbench -i scale 20: 2M rows; sysbench 2 x 300,000 rows).
SLOW_PREPARE = [("postgresql", "pgbench-tpcb-quick", {"scale": 20}, PGBENCH_TABLES),
                ("mysql", "sysbench-oltp-rw-mysql-quick", {"tables": 2, "rows_per_table": 300_000}, ["sbtest1", "sbtest2"])]


def preparing(worker_tmp, run_id):
    """The prepare step's tool is running (pgbench -i without -I; sysbench ... prepare)."""
    return any(argv[-1] == "prepare" or ("-i" in argv and "-I" not in argv) for _, argv in tools_of(worker_tmp, run_id))


@pytest.mark.parametrize("engine,profile,overrides,tables", SLOW_PREPARE, ids=["pgbench", "sysbench-mysql"])
def test_a_target_frozen_during_prepare_fails_the_run_within_15_s_naming_its_tables(
        servers, fault_worker, worker_tmp, committed, operator_api, engine, profile, overrides, tables):
    run_id = launch(operator_api, make_target(servers, engine), profile, duration_s=3, threads=2, **overrides)
    wait_for(lambda: preparing(worker_tmp, run_id), timeout=120, interval=0.05, message="the prepare step")
    freeze(servers, engine)
    frozen_at = time.monotonic()
    try:
        run = wait_final(run_id, timeout=60)
        took = time.monotonic() - frozen_at
    finally:
        freeze(servers, engine, signal.SIGCONT)
    print(f"[measured] {engine} frozen in prepare: run failed {took:.1f} s later")
    assert run.state == RunState.FAILED, run.reason
    assert took < 15, took
    assert "prepare failed: the target stopped answering: no output for 3 s, and a new connection got no answer" in run.reason
    assert run.leftover_tables == tables
    assert not tools_of(worker_tmp, run_id)


@pytest.mark.parametrize("engine,profile,overrides,tables", SLOW_PREPARE, ids=["pgbench", "sysbench-mysql"])
def test_cancel_during_prepare_takes_effect_within_10_s_when_the_cleanup_cannot_reach_the_target(
        servers, fault_worker, worker_tmp, committed, operator_api, engine, profile, overrides, tables):
    run_id = launch(operator_api, make_target(servers, engine), profile, duration_s=3, threads=2, **overrides)
    wait_for(lambda: preparing(worker_tmp, run_id), timeout=120, interval=0.05, message="the prepare step")
    freeze(servers, engine)  # the cleanup that follows the cancel meets a frozen server
    try:
        assert operator_api.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 202
        asked_at = time.monotonic()
        run = wait_final(run_id, timeout=60)
        took = time.monotonic() - asked_at
    finally:
        freeze(servers, engine, signal.SIGCONT)
    print(f"[measured] {engine} cancelled in prepare, cleanup against the frozen server: cancelled {took:.1f} s later")
    assert run.state == RunState.CANCELLED, run.reason
    assert took < 10, took
    assert run.reason.startswith("Cancelled while preparing (loading the tables)")
    assert "its tables could not be dropped (cleanup stopped: the target stopped answering" in run.reason
    assert run.leftover_tables == tables
    assert not tools_of(worker_tmp, run_id)


def test_cancel_while_a_frozen_prepare_is_being_judged_ends_cancelled(servers, fault_worker, worker_tmp, committed,
                                                                       operator_api):
    """Issue 50.8: the cancel comes while the worker is still finding out whether the frozen server answers a new
    connection (RUNS_STALL_SECONDS, then a probe of RUNS_STALL_PROBE_SECONDS): the run was failed as silent though its
    cancel had been asked for. It ends cancelled, its tables named with why they were not dropped."""
    engine, profile, overrides, tables = SLOW_PREPARE[1]
    run_id = launch(operator_api, make_target(servers, engine), profile, duration_s=3, threads=2, **overrides)
    wait_for(lambda: preparing(worker_tmp, run_id), timeout=120, interval=0.05, message="the prepare step")
    freeze(servers, engine)
    try:
        time.sleep(3.5)  # past RUNS_STALL_SECONDS: the probe of a new connection is waiting on the frozen server
        assert operator_api.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 202
        run = wait_final(run_id, timeout=60)
    finally:
        freeze(servers, engine, signal.SIGCONT)
    assert run.state == RunState.CANCELLED, run.reason
    assert run.reason.startswith("Cancelled while preparing (loading the tables)"), run.reason
    assert run.leftover_tables == tables
    assert run.leftover_cause.startswith("cleanup skipped: the target stopped answering"), run.leftover_cause


def test_the_leftover_notice_says_why_and_a_later_run_that_drops_the_tables_clears_it(
        servers, fault_worker, worker_tmp, committed, operator_api, operator):
    """Issue 50.8: the notice blamed a dead worker whatever happened; and an old run kept offering to drop tables a
    later run on the same database had already dropped (the later run's reset and cleanup)."""
    engine, profile, overrides, tables = SLOW_PREPARE[1]
    target = make_target(servers, engine)
    run_id = launch(operator_api, target, profile, duration_s=3, threads=2, **overrides)
    wait_for(lambda: preparing(worker_tmp, run_id), timeout=120, interval=0.05, message="the prepare step")
    freeze(servers, engine)
    try:
        run = wait_final(run_id, timeout=60)
    finally:
        freeze(servers, engine, signal.SIGCONT)
    assert run.state == RunState.FAILED and run.leftover_tables == tables
    page = operator.get(f"/runs/{run_id}/").content.decode()
    notice = page[page.index('id="run-leftovers"'):][:600]
    assert "(the target stopped answering)" in notice and "sbtest1, sbtest2" in notice, notice
    assert "worker died" not in notice
    # A later run of the same set-up on the same database: its reset and cleanup drop sbtest1 and sbtest2.
    later = wait_final(launch(operator_api, target, profile, duration_s=1, threads=1, **overrides), timeout=120)
    assert later.state == RunState.SUCCEEDED, later.reason
    earlier = Run.objects.get(pk=run_id)
    assert earlier.leftover_tables == [] and earlier.leftover_cause == ""
    assert 'id="run-leftovers"' not in operator.get(f"/runs/{run_id}/").content.decode()
    assert operator_api.get(f"/api/v1/runs/{run_id}/").json()["leftover_tables"] == []


def assert_the_worker_takes_the_next_run_within_15_s(run, operator_api):
    """The worker is free again: a next run on the (resumed) server leaves the queue within 15 s and succeeds."""
    next_id = launch(operator_api, run.target, run.profile.slug, duration_s=1, threads=1)
    wait_for(lambda: Run.objects.get(pk=next_id).state != RunState.QUEUED, timeout=15, interval=0.1,
             message="the worker to take the next run")
    run = wait_final(next_id, timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason


# (engine, profile, overrides, where the cancel finds the run): warm-up on one engine, the run step on the other.
MEASURED_CANCEL = [("postgresql", "sysbench-oltp-rw-postgresql-quick", {"warmup_s": 60, "duration_s": 3},
                    "Cancelled while warming up step 1 of 1 (2 threads), "),
                   ("mysql", "sysbench-oltp-rw-mysql-quick", {"duration_s": 60}, "Cancelled while running step 1 of 1 (2 threads), ")]


@pytest.mark.parametrize("engine,profile,overrides,where", MEASURED_CANCEL, ids=["warmup-pgsql", "run-mysql"])
def test_cancel_during_a_measured_step_against_a_frozen_target_takes_effect_within_10_s(
        servers, fault_worker, worker_tmp, committed, operator_api, engine, profile, overrides, where):
    run_id = launch(operator_api, make_target(servers, engine), profile, threads=2, **overrides)
    wait_for(lambda: measuring(run_id), timeout=120, interval=0.1, message="the tool to report transactions")
    freeze(servers, engine)  # the tool waits on the frozen server; so does the cleanup that follows the cancel
    try:
        assert operator_api.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 202
        asked_at = time.monotonic()
        run = wait_final(run_id, timeout=60)
        took = time.monotonic() - asked_at
    finally:
        freeze(servers, engine, signal.SIGCONT)
    print(f"[measured] {engine} cancelled while {where.split(' while ')[1].split(' step')[0]} against the frozen server: "
          f"cancelled {took:.1f} s later")
    assert run.state == RunState.CANCELLED, run.reason
    assert took < 10, took
    assert run.reason.startswith(where), run.reason
    assert "its tables could not be dropped (cleanup stopped: the target stopped answering" in run.reason
    assert run.leftover_tables == ["sbtest1"]
    assert not tools_of(worker_tmp, run_id)
    assert_the_worker_takes_the_next_run_within_15_s(run, operator_api)


@pytest.mark.parametrize("cancel", [False, True], ids=["frozen", "frozen-then-cancelled"])
def test_a_target_frozen_during_cleanup_ends_the_run_within_10_s_naming_its_tables(
        servers, fault_worker, worker_tmp, committed, operator_api, cancel):
    """The cleanup is caught for certain: a transaction of the test's own holds a share lock on sbtest1, so the
    cleanup's DROP TABLE waits for it; the server is then frozen (and the run cancelled)."""
    run_id = launch(operator_api, make_target(servers, "postgresql"), "sysbench-oltp-rw-postgresql-quick", duration_s=2, threads=2)
    wait_for(lambda: measuring(run_id), timeout=120, interval=0.1, message="the tool to report transactions")
    holder = psycopg.connect(host=str(servers.pg_socket_dir), port=servers.pg_port, user="postgres", dbname=DATABASE)
    try:
        holder.execute("LOCK TABLE sbtest1 IN ACCESS SHARE MODE")  # the run's reads and writes go on; a DROP waits
        wait_for(lambda: Run.objects.get(pk=run_id).state == RunState.CLEANING_UP
                 and any(argv[-1] == "cleanup" for _, argv in tools_of(worker_tmp, run_id)),
                 timeout=60, interval=0.05, message="the cleanup step")
        freeze(servers, "postgresql")
        try:
            if cancel:
                assert operator_api.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 202
            asked_at = time.monotonic()
            run = wait_final(run_id, timeout=60)
            took = time.monotonic() - asked_at
        finally:
            freeze(servers, "postgresql", signal.SIGCONT)
    finally:
        holder.close()
    print(f"[measured] postgresql frozen in cleanup{', then cancelled' if cancel else ''}: {run.state} {took:.1f} s later")
    assert took < 10, took
    if cancel:
        assert run.state == RunState.CANCELLED, run.reason
        assert run.reason.startswith("Cancelled while cleaning up"), run.reason
        assert "its tables could not be dropped (cleanup stopped: the target stopped answering: no output for 3 s" in run.reason
    else:
        assert run.state == RunState.FAILED, run.reason
        assert run.reason.startswith("cleanup stopped: the target stopped answering: no output for 3 s, and a new "
                                     "connection got no answer"), run.reason
        assert "Its tables may be left on the target" in run.reason
    assert run.leftover_tables == ["sbtest1"]
    assert not tools_of(worker_tmp, run_id)
    assert_the_worker_takes_the_next_run_within_15_s(run, operator_api)


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_the_connection_test_of_a_frozen_target_answers_within_its_bound(servers, engine, operator):
    # A frozen server accepts the TCP connection (the kernel does) and then says nothing: the page's "Test connection"
    # must answer that it got no answer, not hang the request (issue 34.1: every phase that talks to a target).
    target = make_target(servers, engine)
    freeze(servers, engine)
    try:
        started = time.monotonic()
        response = operator.post(f"/runs/targets/{target.pk}/test/")
        took = time.monotonic() - started
    finally:
        freeze(servers, engine, signal.SIGCONT)
    assert response.status_code == 200
    assert took < 15, took
    page = response.content.decode()
    # The driver's own words: libpq "connection timeout expired", PyMySQL "... (timed out)".
    assert 'class="errors"' in page and ("timeout" in page or "timed out" in page), page
    assert PASSWORD not in page
    assert Target.objects.get(pk=target.pk).version_checked_at is None


def test_too_many_threads_fail_with_the_tools_reason(servers, fault_worker, committed, operator_api):
    # More threads than the server takes connections. Against the test's own MariaDB (max_connections 60): flooding
    # the machine's shared server would refuse other tests' connections while this one runs.
    run_id = launch(operator_api, make_target(servers, "mysql"), "sysbench-oltp-rw-mysql-quick", threads=MAX_CONNECTIONS + 20,
                    duration_s=2)
    run = wait_final(run_id)
    assert run.state == RunState.FAILED
    assert "Worker threads failed to initialize" in run.reason and "Too many connections" in run.reason
