"""The order-entry workload derived from TPC-C on the machine's MariaDB through sysbench 1.0 and the project's Lua
script (runs/drivers/scripts/orderentry/mysql_orderentry.lua), run by hand as the benchmark user, its password in a
0600 config file as the sysbench driver writes it. The same checks as on PostgreSQL (tests/test_orderentry_pgbench.py),
from the database's own rows: the load's cardinalities and TPC-C's consistency conditions 1-4, new orders as the change
in sum(d_next_o_id) against the orders committed, the mix, the 1 % rolled back, the remote warehouses' rates."""

import os
import subprocess

import pymysql
import pytest

from runs.drivers.base import Connection
from runs.drivers.orderentry import MIX, NEW_ORDERS_SQL, broken_conditions, parse_sysbench_types, sysbench_argv
from runs.drivers.sysbench import secret_files
from testbed.runs_support import DB_USER, MYSQL_DB, PASSWORD

from .tiers import tier

WAREHOUSES = 2


def sysbench(argv):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def one(cursor, sql):
    cursor.execute(sql)
    return cursor.fetchone()[0]


@pytest.fixture(scope="module")
@tier("tool")  # real sysbench runs
def workdir(bench_users, tmp_path_factory):
    directory = tmp_path_factory.mktemp("orderentry-sysbench")
    for name, text in secret_files(Connection("mysql", "127.0.0.1", 3306, MYSQL_DB, DB_USER), PASSWORD).items():
        path = directory / name
        path.write_text(text)
        path.chmod(0o600)
    sysbench(sysbench_argv("prepare", directory, WAREHOUSES, WAREHOUSES))
    yield directory
    sysbench(sysbench_argv("cleanup", directory, WAREHOUSES, 1))
    with connect() as db:
        assert one(db.cursor(), f"SELECT count(*) FROM information_schema.tables WHERE table_schema = '{MYSQL_DB}' "
                                "AND table_name LIKE 'oe\\\\_%'") == 0


def connect():
    return pymysql.connect(host="127.0.0.1", port=3306, user=DB_USER, password=PASSWORD, database=MYSQL_DB, autocommit=True)


def test_the_load_has_the_specifications_rows_and_holds_the_consistency_conditions(workdir):
    with connect() as db:
        cur = db.cursor()
        counts = {t: one(cur, f"SELECT count(*) FROM {t}") for t in ("oe_item", "oe_warehouse", "oe_district", "oe_customer",
                                                                    "oe_history", "oe_orders", "oe_new_order", "oe_stock")}
        assert counts == {"oe_item": 100_000, "oe_warehouse": 2, "oe_district": 20, "oe_customer": 60_000,
                          "oe_history": 60_000, "oe_orders": 60_000, "oe_new_order": 18_000, "oe_stock": 200_000}
        lines = one(cur, "SELECT count(*) FROM oe_order_line")
        assert 5 * 60_000 < lines < 15 * 60_000 and lines == one(cur, "SELECT sum(o_ol_cnt) FROM oe_orders")
        assert one(cur, NEW_ORDERS_SQL) == 20 * 3001
        assert one(cur, "SELECT count(DISTINCT c_last) FROM oe_customer WHERE c_w_id = 2 AND c_d_id = 7 AND c_id <= 1000") == 1000
        assert broken_conditions(cur) == []


def test_the_mix_new_orders_rollbacks_and_remote_warehouses_are_what_the_specification_asks(workdir):
    with connect() as db:
        cur = db.cursor()
        before = {"next": one(cur, NEW_ORDERS_SQL), "orders": one(cur, "SELECT count(*) FROM oe_orders"),
                  "history": one(cur, "SELECT count(*) FROM oe_history"), "lines": one(cur, "SELECT count(*) FROM oe_order_line")}
        # 10,000 transactions by 4 threads, each thread's choices fixed by the seed.
        report = parse_sysbench_types(sysbench(sysbench_argv("run", workdir, WAREHOUSES, 4, events=10_000, seed=48)))
        assert sum(t["transactions"] for t in report.values()) == 10_000
        for name, weight in MIX.items():
            assert abs(report[name]["share_pct"] - weight) <= 1.5, (name, report[name])
        committed = report["new_order"]["transactions"] - report["new_order"]["rolled_back"]
        added = one(cur, NEW_ORDERS_SQL) - before["next"]
        assert added == committed == one(cur, "SELECT count(*) FROM oe_orders") - before["orders"]
        assert 0.004 <= report["new_order"]["rolled_back"] / report["new_order"]["transactions"] <= 0.018, report["new_order"]
        payments = one(cur, "SELECT count(*) FROM oe_history") - before["history"]
        assert payments == report["payment"]["transactions"]
        remote = one(cur, "SELECT count(*) FROM oe_history WHERE h_data = 'payment' AND h_c_w_id <> h_w_id")
        assert 0.12 <= remote / payments <= 0.18, (remote, payments)
        new_lines = one(cur, "SELECT count(*) FROM oe_order_line") - before["lines"]
        remote_lines = one(cur, "SELECT count(*) FROM oe_order_line WHERE ol_o_id > 3000 AND ol_supply_w_id <> ol_w_id")
        assert 0.007 <= remote_lines / new_lines <= 0.013, (remote_lines, new_lines)
        assert broken_conditions(cur) == []
