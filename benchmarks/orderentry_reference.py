#!/usr/bin/env python
"""The order-entry workload (runs/drivers/orderentry.py, derived from TPC-C) beside an independent implementation of
the same class on the same PostgreSQL and machine (issue 48): Percona-Lab's sysbench-tpcc (Lua for sysbench 1.0,
https://github.com/Percona-Lab/sysbench-tpcc), fetched by hand and never committed; its directory is the argument.

Both load the same warehouses into a database of this script's own (perfdash_oe_reference, dropped at the end) and
run the same clients for the same seconds, alternately, ROUNDS times each. Both are measured the same way, from the
server: new orders are the change in sum(d_next_o_id) of each one's district table over its whole run (read before
and after), per minute (NOPM), per client. Reported: each round's NOPM per client, the geometric mean of the per-round
ratios ours / reference, and the mixes (ours 45/43/4/4/4 %; sysbench-tpcc 10/10/1/1/1 of 23, HammerDB's: a new-order
share of 43.5 % against 45 %, so ours may run up to 3 % more new orders for the same transaction rate). Both at READ
COMMITTED (sysbench-tpcc --trx_level=RC). The target is ours within 25 % of the reference.

On MariaDB (ENGINE=mariadb) ours is the sysbench Lua script, a statement a round trip as sysbench-tpcc's is; on
PostgreSQL ours is pgbench scripts whose new-order and delivery are a few set-based statements (about 5 round trips a
new-order against sysbench-tpcc's 4 an order line, about 46): the two engines together tell how much of a difference is
the round trips.

Usage:  [ENGINE=postgresql|mariadb] .venv/bin/python benchmarks/orderentry_reference.py SYSBENCH_TPCC_DIR [WAREHOUSES]
        [CLIENTS] [SECONDS] [ROUNDS]     (defaults 2 warehouses, 4 clients, 20 s, 3 rounds)
Output: benchmarks/orderentry_reference.<engine>.out.txt keeps the latest run, with its command."""

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import tempfile

import psycopg
import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from runs.drivers.base import Connection  # noqa: E402
from runs.drivers.orderentry import (  # noqa: E402
    NEW_ORDERS_SQL, cleanup_argv, parse_sysbench_types, parse_transaction_types, prepare_argvs, run_argv, sysbench_argv,
)
from runs.drivers.sysbench import secret_files  # noqa: E402

DB = "perfdash_oe_reference"
ENGINE = os.environ.get("ENGINE", "postgresql")
MARIADB = ENGINE == "mariadb"
HOST, PORT, USER = ("127.0.0.1", 3306, "root") if MARIADB else ("127.0.0.1", 5432, "postgres")


def admin(sql):
    if MARIADB:
        conn = pymysql.connect(host=HOST, port=PORT, user=USER, autocommit=True)
        conn.cursor().execute(sql.replace(" WITH (FORCE)", ""))
        conn.close()
        return
    with psycopg.connect(host=HOST, port=PORT, user=USER, dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


def scalar(sql):
    if MARIADB:
        conn = pymysql.connect(host=HOST, port=PORT, user=USER, database=DB, autocommit=True)
        cur = conn.cursor()
        cur.execute(sql)
        value = cur.fetchone()[0]
        conn.close()
        return value
    with psycopg.connect(host=HOST, port=PORT, user=USER, dbname=DB, autocommit=True) as conn:
        return conn.execute(sql).fetchone()[0]


def run(argv, cwd=None):
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed: {done.stdout[-1500:]} {done.stderr[-1500:]}")
    return done.stdout


def reference_argv(directory, warehouses, clients, seconds, command):
    driver = "mysql" if MARIADB else "pgsql"
    return ["sysbench", str(Path(directory) / "tpcc.lua"), f"--db-driver={driver}", f"--{driver}-host={HOST}",
            f"--{driver}-port={PORT}", f"--{driver}-user={USER}", f"--{driver}-db={DB}", "--tables=1", f"--scale={warehouses}",
            f"--threads={clients}", f"--time={seconds}", "--report-interval=0", "--trx_level=RC", "--use_fk=0", command]


def nopm_of(sql, argv, cwd, seconds):
    before = scalar(sql)
    started = time.monotonic()
    out = run(argv, cwd)
    elapsed = time.monotonic() - started
    return (scalar(sql) - before) * 60 / seconds, elapsed, out


def main():
    directory = Path(sys.argv[1]).resolve()
    warehouses, clients, seconds, rounds = (int(a) for a in (sys.argv[2:] + ["2", "4", "20", "3"][len(sys.argv) - 2:])[:4])
    admin(f"DROP DATABASE IF EXISTS {DB}")
    admin(f"CREATE DATABASE {DB}")
    conn = Connection("mysql" if MARIADB else "postgresql", HOST, PORT, DB, USER)
    workdir = Path(tempfile.mkdtemp(prefix="orderentry-reference-"))
    for name, text in secret_files(conn, "").items():
        (workdir / name).write_text(text)
    lines = [f"$ ENGINE={ENGINE} .venv/bin/python benchmarks/orderentry_reference.py {directory.name} {warehouses} "
             f"{clients} {seconds} {rounds}",
             f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.2f}; {warehouses} warehouses, "
             f"{clients} clients, {seconds} s a run, READ COMMITTED, {ENGINE} on 127.0.0.1"]
    try:
        started = time.monotonic()
        for argv in ([sysbench_argv("prepare", workdir, warehouses, warehouses)] if MARIADB
                     else prepare_argvs(conn, warehouses)):
            run(argv)
        lines.append(f"load: ours {time.monotonic() - started:.1f} s")
        started = time.monotonic()
        run(reference_argv(directory, warehouses, warehouses, seconds, "prepare"), cwd=directory)  # a thread a warehouse
        lines.append(f"load: sysbench-tpcc {time.monotonic() - started:.1f} s")
        ratios = []
        for r in range(1, rounds + 1):
            argv = (sysbench_argv("run", workdir, warehouses, clients, duration_s=seconds) if MARIADB
                    else run_argv(conn, warehouses, clients, duration_s=seconds))
            ours, _, out = nopm_of(NEW_ORDERS_SQL, argv, None, seconds)
            parse = parse_sysbench_types if MARIADB else parse_transaction_types
            mix = {k: v.get("share_pct") for k, v in parse(out).items()}
            ref, _, _ = nopm_of("SELECT sum(d_next_o_id) FROM district1",
                                reference_argv(directory, warehouses, clients, seconds, "run"), directory, seconds)
            ratios.append(ours / ref)
            lines.append(f"round {r}: NOPM per client: ours {ours / clients:,.0f}, sysbench-tpcc {ref / clients:,.0f}, "
                         f"ours / reference {ours / ref:.3f}; our mix {mix}")
        mean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append(f"ours / reference, geometric mean over {rounds} rounds: {mean:.3f} (target: 0.75-1.25)")
    finally:
        run(sysbench_argv("cleanup", workdir, warehouses, 1) if MARIADB else cleanup_argv(conn))
        admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(__file__).with_name(f"orderentry_reference.{ENGINE}.out.txt").write_text(text)


if __name__ == "__main__":
    main()
