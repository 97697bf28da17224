#!/usr/bin/env python
"""What does pgbench's per-transaction log (-l) cost the client? The sampling rule in runs/drivers/pgbench.py
(LOG_LINES_PER_SECOND, MAX_TPS_PER_CLIENT) rests on this and on pgbench_log_in_dashboard.py (rw.sql, in the dashboard).

pgbench runs Alibaba's ro.sql (the fastest script the dashboard runs: its transactions are cheapest, so
a log line weighs most) with 2 clients, without the log and with it at several --sampling-rate values,
in an order rotated round by round, ROUNDS times, every run with -P 1 as Alibaba's command line and the
dashboard's have it (progress reports make pgbench time every transaction, log or not). For each: pgbench's own CPU (user + system, getrusage of the child) per
transaction, which depends far less on other load than TPS does, and TPS.

Usage:  .venv/bin/python benchmarks/pgbench_log_cost.py [ROUNDS] [SECONDS]
Uses the runs tests' user and its own database perfdash_sb_logcost on the local PostgreSQL.
"""

import os
import resource
import statistics
import subprocess
import sys
import tempfile

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
os.environ["TEST_BENCH_DB"] = "perfdash_sb_logcost"

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
VARIANTS = {"no log": [], "rate 1": ["-l", "--sampling-rate=1"], "rate 0.62": ["-l", "--sampling-rate=0.62"],
            "rate 0.067": ["-l", "--sampling-rate=0.067"]}


def main():
    from testbed.runs_support import DB_USER, PASSWORD, PG_DB, ensure_database_users

    ensure_database_users()
    env = {**os.environ, "PGPASSWORD": PASSWORD}
    conn = ["-h", "127.0.0.1", "-p", "5432", "-U", DB_USER, PG_DB]  # pgbench [OPTION]... [DBNAME]
    subprocess.run(["pgbench", "-i", "-q", "-s", "1", *conn], check=True, capture_output=True, env=env)
    script = ROOT / "runs" / "drivers" / "scripts" / "ro.sql"
    cpu, tps = {k: [] for k in VARIANTS}, {k: [] for k in VARIANTS}
    names = list(VARIANTS)
    for i in range(ROUNDS):
        for name in names[i % len(names):] + names[:i % len(names)]:  # the order rotates round by round
            extra = VARIANTS[name]
            with tempfile.TemporaryDirectory() as workdir:  # the log goes here, as in the worker's workdir
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                out = subprocess.run(["pgbench", "-M", "prepared", "-P", "1", "-c", "2", "-j", "2", "-T", str(SECONDS), "-f", str(script),
                                      "-D", "scale=1", "-D", "range=100000", *extra, *conn],
                                     cwd=workdir, check=True, capture_output=True, text=True, env=env).stdout
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = int(next(ln for ln in out.splitlines() if ln.startswith("number of transactions actually")).split(":")[1])
            used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            cpu[name].append(1e6 * used / done)
            tps[name].append(float(next(ln for ln in out.splitlines() if ln.startswith("tps = ")).split()[2]))
    base_cpu, base_tps = statistics.median(cpu["no log"]), statistics.median(tps["no log"])
    print(f"pgbench ro.sql, 2 clients, {SECONDS} s, {ROUNDS} rounds, order rotated, -P 1; load average at the end: "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])} on {os.cpu_count()} cores")
    for name in VARIANTS:
        c, t = statistics.median(cpu[name]), statistics.median(tps[name])
        print(f"{name:11s} pgbench CPU per transaction: median {c:6.2f} us ({c - base_cpu:+5.2f} us vs no log); "
              f"TPS median {t:9.1f} (ratio {t / base_tps:.3f})")


if __name__ == "__main__":
    main()
