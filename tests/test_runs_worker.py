"""Benchmark runs end to end: a real Celery worker process (Redis db 15), real sysbench and pgbench
against the machine's MariaDB and PostgreSQL (1 table x 1000 rows / pgbench scale 1, 2-3 s each)."""

import json
import os
import re
import signal
import time

import pymysql
import pytest

from runs.models import Run, RunState
from runs.tasks import reconcile_runs

from testbed.runs_support import (
    MYSQL_DB, PASSWORD, make_targets, run_processes, start_worker, stop_worker, wait_final, wait_for,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def targets(committed):
    return make_targets()


def launch(operator_api, target, profile, **overrides):
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def final_report(log, pattern):
    match = re.search(pattern, log, re.MULTILINE)
    assert match, f"no final report matching {pattern!r} in the log"
    return float(match.group(1))


def assert_secret_absent(*texts):
    for text in texts:
        assert PASSWORD not in text
        assert "s3cr3t" not in text  # not even a fragment


@pytest.mark.quick  # the quick tier's real sysbench run (scripts/test.sh --quick)
def test_sysbench_against_mariadb_through_the_api(worker, operator_api, targets, client, operator_user):
    body = launch(operator_api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=3, threads=2)
    assert body["state"] == "queued"
    seen_argv = []

    def tool_running():
        procs = run_processes(body["id"])
        seen_argv.extend(argv for _, argv in procs)
        return [argv for argv in seen_argv if "run" in argv]

    wait_for(tool_running, timeout=60, interval=0.05, message="sysbench to be running")
    for argv in seen_argv:  # read from /proc/<pid>/cmdline while the tool runs
        assert_secret_absent(" ".join(argv))
    tools = [argv for argv in seen_argv if argv[0] == "sysbench"]  # (a child caught between fork and exec is not)
    assert tools and all(any(a.startswith("--config-file=") for a in argv) for argv in tools)
    run = wait_final(body["id"])
    assert run.state == RunState.SUCCEEDED, run.reason
    samples = list(run.samples.all())
    assert len(samples) >= 2
    # sysbench's `thds:` counts threads still running: the last interval of a --forced-shutdown run can
    # show fewer than asked for, never more.
    odd = [(s.t, s.threads, s.tps, s.qps, s.latency_p95_ms) for s in samples
           if not (s.threads <= 2 and s.tps >= 0 and s.qps is not None and s.latency_p95_ms is not None)]
    assert not odd, odd
    assert any(s.threads == 2 for s in samples)
    # The stored summary is the tool's own final report.
    assert run.summary["tps"] == final_report(run.log, r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec\.\)")
    assert run.summary["qps"] == final_report(run.log, r"^\s*queries:\s+\d+\s+\(([\d.]+) per sec\.\)")
    assert run.summary["transactions"] == int(final_report(run.log, r"^\s*transactions:\s+(\d+)"))
    assert run.summary["latency_p95_ms"] == final_report(run.log, r"^\s*95th percentile:\s+([\d.]+)")
    assert run.tool_version == "1.0.20" and "MariaDB" in run.server_version
    assert run.client_cores == os.cpu_count() and run.client_host and run.worker.startswith("runs-test@")
    assert "--db-ps-mode=auto" in run.command_line and "--forced-shutdown=1" in run.command_line
    detail = operator_api.get(f"/api/v1/runs/{run.pk}/")
    assert detail.json()["state"] == "succeeded" and detail.json()["summary"]["tps"] == run.summary["tps"]
    samples_page = operator_api.get(f"/api/v1/runs/{run.pk}/samples/").json()
    assert samples_page["count"] == len(samples)
    after = operator_api.get(f"/api/v1/runs/{run.pk}/samples/?after={samples[0].id}").json()
    assert [s["id"] for s in after["results"]] == [s.id for s in samples[1:]]
    client.force_login(operator_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "succeeded" in html
    assert_secret_absent(run.log, run.command_line, run.reason, json.dumps(detail.json()), json.dumps(samples_page), html,
                         client.get(f"/runs/targets/{targets['mysql'].pk}/").content.decode(),
                         json.dumps(operator_api.get("/api/v1/targets/").json()), "\n".join(worker.output))
    # The tables were dropped by the cleanup step.
    conn = pymysql.connect(host="127.0.0.1", user="root", password="", database=MYSQL_DB)
    with conn.cursor() as cur:
        assert cur.execute("SHOW TABLES LIKE 'sbtest%'") == 0
    conn.close()


def test_sysbench_against_postgresql(worker, operator_api, targets):
    body = launch(operator_api, targets["postgresql"], "sysbench-oltp-rw-postgresql-quick", duration_s=2)
    run = wait_final(body["id"])
    assert run.state == RunState.SUCCEEDED, run.reason
    assert run.samples.count() >= 1 and "PostgreSQL 15" in run.server_version
    assert run.summary["tps"] == final_report(run.log, r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec\.\)")
    assert_secret_absent(run.log, run.command_line)


def server_commits(database):
    """PostgreSQL's own count of committed transactions in the database (independent of pgbench)."""
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        pg.execute("SELECT pg_stat_clear_snapshot()")
        return pg.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [database]).fetchone()[0]


@pytest.mark.quick  # the quick tier's real pgbench run
def test_pgbench_read_only_script_against_postgresql(worker, operator_api, targets):
    before = server_commits(targets["postgresql"].database)
    body = launch(operator_api, targets["postgresql"], "pgbench-ro-quick", duration_s=3, threads=2)
    run = wait_final(body["id"])
    assert run.state == RunState.SUCCEEDED, run.reason
    # No debug output: `pgbench -d` is --debug and prints a line per statement (and runs at a third).
    assert not re.search(r"^pgbench: client \d+ (executing|sending|receiving)", run.log, re.MULTILINE), run.log[:2000]
    # The server counted at least the transactions pgbench reports (each ro.sql transaction is one
    # autocommitted SELECT), and not many more: prepare, cleanup and connections add a few hundred.
    transactions = run.summary["transactions"]
    delta = wait_for(lambda: (d := server_commits(targets["postgresql"].database) - before) >= transactions and d,
                     timeout=10, message="the server's commit counter to catch up")
    assert delta <= transactions * 1.02 + 1000, (delta, transactions)
    samples = list(run.samples.all())
    assert len(samples) >= 2 and all(s.threads == 2 and s.tps > 0 for s in samples)  # progress lines on stderr
    assert run.summary["tps"] == final_report(run.log, r"^tps = ([\d.]+) \(without initial connection time\)")
    assert run.summary["query_mode"] == "prepared" and "-M prepared" in run.command_line
    assert "-D range=100000" in run.command_line and "ro.sql" in run.command_line
    assert run.tool_version.startswith("15")
    assert_secret_absent(run.log, run.command_line)


def test_cancel_stops_the_tool_and_cleans_up_within_seconds(worker, operator_api, targets):
    body = launch(operator_api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=60, thread_sweep=[2, 4])
    wait_for(lambda: Run.objects.get(pk=body["id"]).samples.count() >= 3, timeout=60, message="three samples")
    assert run_processes(body["id"])
    time_in_step = max(Run.objects.get(pk=body["id"]).samples.values_list("t", flat=True))
    started = time.monotonic()
    response = operator_api.post(f"/api/v1/runs/{body['id']}/cancel/")
    assert response.status_code == 202
    run = wait_final(body["id"], timeout=15)
    assert time.monotonic() - started < 10
    assert run.state == RunState.CANCELLED and "tables dropped" in run.reason
    # The reason names the real phase and step, and how far into it (sysbench printed >= 3 s of samples).
    match = re.match(r"Cancelled while running step 1 of 2 \(2 threads\), (\d+) s in;", run.reason)
    assert match, run.reason
    assert time_in_step <= int(match.group(1)) <= time_in_step + 6
    assert run_processes(body["id"]) == []  # no tool process left
    assert "Dropping table 'sbtest1'" in run.log
    assert operator_api.post(f"/api/v1/runs/{body['id']}/cancel/").status_code == 409  # already finished


def test_two_runs_on_one_target_do_not_overlap(worker, operator_api, targets):
    # The worker has two processes: without the per-target rule both runs would start at once.
    first = launch(operator_api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=2)
    second = launch(operator_api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=2)
    runs = sorted([wait_final(first["id"]), wait_final(second["id"])], key=lambda r: r.started_at)
    assert [r.state for r in runs] == [RunState.SUCCEEDED, RunState.SUCCEEDED], [r.reason for r in runs]
    assert runs[0].finished_at <= runs[1].started_at


def test_two_target_entries_naming_one_database_do_not_overlap(worker, operator_api, targets):
    # Issue 23.2: the same PostgreSQL database as "localhost" and as 127.0.0.1. Before, exclusion was per entry:
    # both pgbench set-ups ran at once, each dropped the other's tables, and both failed.
    from runs.models import Target

    pg = targets["postgresql"]
    alias = Target(name="same-db-by-name", engine="postgresql", host="localhost", port=pg.port, database=pg.database,
                   user=pg.user, vcpus=2, memory_gb=4, family="general")
    alias.set_password(PASSWORD)
    alias.save()
    assert alias.database_key() == pg.database_key()
    first = launch(operator_api, pg, "pgbench-ro-quick", duration_s=2)
    second = launch(operator_api, alias, "pgbench-ro-quick", duration_s=2)
    runs = sorted([wait_final(first["id"]), wait_final(second["id"])], key=lambda r: r.started_at)
    assert [r.state for r in runs] == [RunState.SUCCEEDED, RunState.SUCCEEDED], [r.reason for r in runs]
    assert runs[0].finished_at <= runs[1].started_at


def test_a_killed_worker_leaves_the_run_failed_with_the_reason(committed, worker, operator_api, targets):
    from runs.models import Target

    Target.objects.filter(pk=targets["mysql"].pk).update(queue="kill-test")
    doomed = start_worker(queues="kill-test", concurrency=1, name="runs-doomed")
    try:
        body = launch(operator_api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=60)
        wait_for(lambda: Run.objects.get(pk=body["id"]).samples.exists(), timeout=60, message="a first sample")
        assert run_processes(body["id"])
        os.killpg(doomed.pid, signal.SIGKILL)  # the whole worker: main process and its pool
        doomed.wait()
    finally:
        stop_worker(doomed, signal.SIGKILL)
    # The tool dies with its worker (no orphan benchmark spoiling the next run) ...
    wait_for(lambda: run_processes(body["id"]) == [], timeout=5, message="the orphaned tool to exit")
    assert Run.objects.get(pk=body["id"]).state == RunState.RUNNING
    # ... and the periodic reconciler (every 15 s in beat) marks the run failed with the reason.
    assert reconcile_runs() == [body["id"]]
    run = Run.objects.get(pk=body["id"])
    assert run.state == RunState.FAILED and "stopped reporting" in run.reason and "runs-doomed@" in run.reason
    # The target is free again, and the tables the dead run left behind do not spoil the next run.
    Target.objects.filter(pk=targets["mysql"].pk).update(queue="benchmarks")
    again = wait_final(launch(operator_api, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=1)["id"])
    assert again.state == RunState.SUCCEEDED, again.reason
