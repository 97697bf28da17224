#!/usr/bin/env python
"""One client with N threads against two clients with N/2 threads each, on the same target.

Two real Celery benchmark workers (-c 1) on one pool queue, each naming itself as another client host
(RUNS_CLIENT_HOST=bench-a / bench-b), run sysbench oltp_read_write on the machine's MariaDB through the
dashboard (POST /api/v1/runs/), alternating: a one-client run of THREADS threads, then a two-client run
(client_hosts=2) of the same THREADS split in two, ROUNDS times. Prints each run's TPS, the two-client
runs' per-client TPS and share and how far apart their run steps started (the clients' own recorded
start times), then the medians and their ratio.

Read it honestly: both "client hosts" are processes on this same 2-core machine, which also runs MariaDB
(and other people's test suites). Two clients here add no client CPU, so the two set-ups should agree
within noise; the figure shows that splitting a run over clients costs nothing measurable and measures
the same thing, not that more client hosts raise TPS. That needs client hosts with their own cores.

Usage:  .venv/bin/python benchmarks/multi_client.py [ROUNDS] [SECONDS] [THREADS]
Uses its own database perfdash_multi_bench (PostgreSQL), target database perfdash_sb_multi, Redis db 12,
queue multi-bench.
"""

import os
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_multi_bench")
os.environ["REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
os.environ.setdefault("TEST_BENCH_DB", "perfdash_sb_multi")

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 8
QUEUE = "multi-bench"
TABLES, ROWS = 2, 10000


def start_worker(host):
    env = {**os.environ, "CONN_MAX_AGE": "0", "RUNS_CLIENT_HOST": host}
    return subprocess.Popen([str(Path(sys.executable).parent / "celery"), "-A", "config", "worker", "-Q", QUEUE, "-c", "1",
                             "-n", f"{host}@%h", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def main():
    api = bootstrap.launcher()
    from runs.models import Run

    target = bootstrap.local_target("bench-mariadb-multi", "mysql", queue=QUEUE)

    def run(client_hosts):
        overrides = {"threads": THREADS, "duration_s": SECONDS, "tables": TABLES, "rows_per_table": ROWS}
        if client_hosts > 1:
            overrides["client_hosts"] = client_hosts
        response = api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                              "overrides": overrides}, format="json")
        assert response.status_code == 201, response.content
        run_id = response.json()["id"]
        while not (r := Run.objects.get(pk=run_id)).is_final:
            time.sleep(1)
        assert r.state == "succeeded", r.reason
        return r

    workers = [start_worker("bench-a"), start_worker("bench-b")]
    time.sleep(5)
    one, two, skews = [], [], []
    try:
        for i in range(ROUNDS):
            single = run(1)
            double = run(2)
            starts = [datetime.fromisoformat(c.step_starts["run-1"]) for c in double.clients.order_by("index")]
            skew_ms = abs((starts[0] - starts[1]).total_seconds()) * 1000
            one.append(single.summary["tps"])
            two.append(double.summary["tps"])
            skews.append(skew_ms)
            parts = ", ".join(f"{c['host']} {c['threads']} thr {c['tps']:.2f} TPS ({c['share_pct']} %)"
                              for c in double.summary["clients"])
            print(f"round {i + 1}: 1 client x {THREADS} threads {single.summary['tps']:9.2f} TPS   "
                  f"2 clients x {THREADS // 2} threads {double.summary['tps']:9.2f} TPS (= {parts}; "
                  f"run steps started {skew_ms:.0f} ms apart)   ratio {double.summary['tps'] / single.summary['tps']:.3f}",
                  flush=True)
    finally:
        for w in workers:
            os.killpg(w.pid, 15)
            w.wait()
    print()
    print(f"{ROUNDS} rounds alternating, sysbench oltp_read_write on MariaDB, {TABLES} tables x {ROWS} rows, {SECONDS} s, "
          f"{THREADS} threads in all; machine: {os.cpu_count()} cores shared by both clients, MariaDB and other work "
          f"(load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])})")
    print(f"median TPS: 1 client {statistics.median(one):.2f}, 2 clients {statistics.median(two):.2f}; ratio of medians "
          f"{statistics.median(two) / statistics.median(one):.3f}; per-round ratios "
          f"{', '.join(f'{b / a:.3f}' for a, b in zip(one, two))}; start skew median {statistics.median(skews):.0f} ms, "
          f"max {max(skews):.0f} ms")
    print("Both clients share the same 2 cores here: agreement within noise is what to expect, not a gain.")


if __name__ == "__main__":
    main()
