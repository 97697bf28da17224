#!/usr/bin/env python
"""How fast the tools load a run's data, and how much disk a row takes: the numbers behind the launch's
estimate of a large run (runs/footprint.py, issue 33.8).

Loads, as a run's prepare step does, with the tools started directly (command lines written here from the
tools' manuals):
  - sysbench oltp_read_write prepare, 1 table x ROWS rows, on MariaDB (127.0.0.1:3306);
  - sysbench oltp_read_write prepare, 1 table x ROWS rows, on PostgreSQL (127.0.0.1:5432);
  - pgbench -i -q -s SCALE (SCALE x 100,000 pgbench_accounts rows) on PostgreSQL.
For each: the wall time of the load (rows a second) and the size of what it left: InnoDB's file of the table
(MariaDB: sbtest1.ibd, file-per-table), pg_total_relation_size of the tables (PostgreSQL: heap, indexes,
TOAST), in bytes per row. Then it drops the tables.

Usage:  .venv/bin/python benchmarks/load_rate.py [ROWS] [SCALE]      (default 1,000,000 and 10)
Connects as the test suite's bench user (testbed/runs_support.py: perfdash_bench) to TEST_BENCH_DB
(default perfdash_sb); the machine's MariaDB and PostgreSQL must be running.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pymysql

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
from testbed.runs_support import DB_USER, MYSQL_DB, PASSWORD, PG_DB, ensure_database_users  # noqa: E402

MARIADB_DATADIR = Path("/var/lib/mysql")


def timed(argv, env=None):
    start = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True, text=True, env={**os.environ, **(env or {})})
    return time.monotonic() - start


def sysbench(driver, action, rows):
    conn = (["--mysql-host=127.0.0.1", "--mysql-port=3306", f"--mysql-user={DB_USER}", f"--mysql-password={PASSWORD}",
             f"--mysql-db={MYSQL_DB}"] if driver == "mysql" else
            ["--pgsql-host=127.0.0.1", "--pgsql-port=5432", f"--pgsql-user={DB_USER}", f"--pgsql-password={PASSWORD}",
             f"--pgsql-db={PG_DB}"])
    return ["sysbench", "oltp_read_write", f"--db-driver={'mysql' if driver == 'mysql' else 'pgsql'}", *conn,
            "--tables=1", f"--table-size={rows}", "--threads=1", action]


def pg_size(tables):
    with psycopg.connect(host="127.0.0.1", port=5432, user=DB_USER, password=PASSWORD, dbname=PG_DB) as conn:
        return sum(conn.execute("SELECT pg_total_relation_size(%s)", [t]).fetchone()[0] for t in tables)


def report(label, rows, seconds, size):
    print(f"{label:<34} {rows:>11,} rows in {seconds:7.1f} s = {rows / seconds:>9,.0f} rows/s;  "
          f"{size:>13,} bytes = {size / rows:6.1f} bytes/row")


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    scale = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    ensure_database_users()
    print(f"# uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")

    subprocess.run(sysbench("mysql", "cleanup", rows), capture_output=True)
    seconds = timed(sysbench("mysql", "prepare", rows))
    with pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", database=MYSQL_DB) as conn:
        with conn.cursor() as cur:
            cur.execute("FLUSH TABLES sbtest1")  # the file holds what the load wrote
    size = (MARIADB_DATADIR / MYSQL_DB / "sbtest1.ibd").stat().st_size
    report("sysbench prepare, MariaDB", rows, seconds, size)
    subprocess.run(sysbench("mysql", "cleanup", rows), check=True, capture_output=True)

    subprocess.run(sysbench("pgsql", "cleanup", rows), capture_output=True)
    seconds = timed(sysbench("pgsql", "prepare", rows))
    report("sysbench prepare, PostgreSQL", rows, seconds, pg_size(["sbtest1"]))
    subprocess.run(sysbench("pgsql", "cleanup", rows), check=True, capture_output=True)

    pgbench = ["pgbench", "-h", "127.0.0.1", "-p", "5432", "-U", DB_USER, PG_DB]
    seconds = timed(["pgbench", "-i", "-q", "-s", str(scale), *pgbench[1:]], env={"PGPASSWORD": PASSWORD})
    size = pg_size(["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"])
    report(f"pgbench -i -s {scale}, PostgreSQL", scale * 100_000, seconds, size)
    subprocess.run(["pgbench", "-i", "-I", "d", *pgbench[1:]], check=True, capture_output=True, env={**os.environ, "PGPASSWORD": PASSWORD})
    print(f"# uptime after:  {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
