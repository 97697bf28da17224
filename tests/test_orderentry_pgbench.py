"""The order-entry workload derived from TPC-C (issue 48 part 2, runs/drivers/orderentry.py) run by hand with pgbench on
the machine's PostgreSQL, as the benchmark user: 2 warehouses loaded in parallel, then the five transactions at their
weights. What is checked comes from the database itself (its rows, read before and after) and from the specification's
numbers, never from the workload's own report: the cardinalities of the load, TPC-C's consistency conditions 1-4 after
the load and after the run (and a condition broken by hand is named), new orders as the change in sum(d_next_o_id)
against the orders the database holds, the mix per type, the 1 % of new-orders rolled back, the remote warehouses' rates.
Not yet a driver of the run engine: that is the rest of issue 48."""

import os
import subprocess

import psycopg
import pytest

from runs.drivers.base import Connection
from runs.drivers.orderentry import (
    MIX, NEW_ORDERS_SQL, TABLES, broken_conditions, cleanup_argv, latency_by_type, parse_transaction_types, prepare_argvs,
    run_argv,
)
from testbed.runs_support import DB_USER, PASSWORD, PG_DB

from .tiers import tier

WAREHOUSES = 2


def pgbench(argv, cwd=None):
    done = subprocess.run(argv, env={**os.environ, "PGPASSWORD": PASSWORD}, capture_output=True, text=True, timeout=600,
                          cwd=cwd)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def connect():
    return psycopg.connect(host="127.0.0.1", port=5432, user=DB_USER, password=PASSWORD, dbname=PG_DB, autocommit=True)


def one(cursor, sql):
    cursor.execute(sql)
    return cursor.fetchone()[0]


@pytest.fixture(scope="module")
@tier("tool")  # real pgbench runs
def loaded(bench_users):
    conn = Connection("postgresql", "127.0.0.1", 5432, PG_DB, DB_USER)
    for argv in prepare_argvs(conn, WAREHOUSES):
        assert "number of transactions actually processed" in pgbench(argv)
    yield conn
    pgbench(cleanup_argv(conn))
    with connect() as db:
        assert one(db.cursor(), f"SELECT count(*) FROM pg_tables WHERE tablename IN ({', '.join(repr(t) for t in TABLES)})") == 0


def test_the_load_has_the_specifications_rows_and_holds_the_consistency_conditions(loaded):
    with connect() as db:
        cur = db.cursor()
        # TPC-C clause 4.3.3.1, per warehouse: 10 districts, 30,000 customers, history rows and orders, 9,000 new
        # orders (2,101-3,000 of each district), 100,000 stock rows; 100,000 items in all.
        counts = {t: one(cur, f"SELECT count(*) FROM {t}") for t in ("oe_item", "oe_warehouse", "oe_district", "oe_customer",
                                                                    "oe_history", "oe_orders", "oe_new_order", "oe_stock")}
        assert counts == {"oe_item": 100_000, "oe_warehouse": 2, "oe_district": 20, "oe_customer": 60_000,
                          "oe_history": 60_000, "oe_orders": 60_000, "oe_new_order": 18_000, "oe_stock": 200_000}
        lines = one(cur, "SELECT count(*) FROM oe_order_line")
        assert 5 * 60_000 < lines < 15 * 60_000 and lines == one(cur, "SELECT sum(o_ol_cnt) FROM oe_orders")
        assert one(cur, NEW_ORDERS_SQL) == 20 * 3001
        # Each name of the 1,000 the syllables make is a last name in every district (customers 1-1,000).
        assert one(cur, "SELECT count(DISTINCT c_last) FROM oe_customer WHERE c_w_id = 2 AND c_d_id = 7 AND c_id <= 1000") == 1000
        assert broken_conditions(cur) == []


def test_a_condition_broken_by_hand_is_named(loaded):
    with psycopg.connect(host="127.0.0.1", port=5432, user=DB_USER, password=PASSWORD, dbname=PG_DB) as db:
        cur = db.cursor()
        cur.execute("UPDATE oe_warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
        cur.execute("DELETE FROM oe_order_line WHERE (ol_w_id, ol_d_id, ol_o_id, ol_number) = (2, 3, 17, 1)")
        assert [(n, count) for n, _said, count in broken_conditions(cur)] == [(1, 1), (4, 1)]
        assert "w_ytd" in broken_conditions(cur)[0][1]
        db.rollback()  # the rows as they were
    with connect() as db:
        assert broken_conditions(db.cursor()) == []


def test_the_mix_new_orders_rollbacks_and_remote_warehouses_are_what_the_specification_asks(loaded):
    with connect() as db:
        cur = db.cursor()
        before = {"next": one(cur, NEW_ORDERS_SQL), "orders": one(cur, "SELECT count(*) FROM oe_orders"),
                  "history": one(cur, "SELECT count(*) FROM oe_history"),
                  "lines": one(cur, "SELECT count(*) FROM oe_order_line")}
        # 4 clients x 2,500 transactions: 10,000, each client's choices fixed by the seed.
        report = parse_transaction_types(pgbench(run_argv(loaded, WAREHOUSES, 4, transactions=2500, jobs=2, seed=48)))
        assert list(report) == list(MIX) and sum(t["transactions"] for t in report.values()) == 10_000
        # The mix: each type within 1.5 percentage points of its weight (45/43/4/4/4 %).
        for name, weight in MIX.items():
            assert abs(report[name]["transactions"] / 100 - weight) <= 1.5, (name, report[name])
        assert all(t["failed"] == 0 for t in report.values()), report
        # New orders from the server: sum(d_next_o_id) moved by the orders the database gained, each with its lines.
        added = one(cur, NEW_ORDERS_SQL) - before["next"]
        assert added == one(cur, "SELECT count(*) FROM oe_orders") - before["orders"] > 0
        new_lines = one(cur, "SELECT count(*) FROM oe_order_line") - before["lines"]
        assert new_lines == one(cur, "SELECT sum(o_ol_cnt) FROM oe_orders WHERE o_id > 3000")
        # 1 % of new-orders roll back: about 45 of ~4,500 (binomial sd 6.7); 0.4-1.8 % is four sd either side.
        rolled_back = report["new_order"]["transactions"] - added
        assert 0.004 <= rolled_back / report["new_order"]["transactions"] <= 0.018, (rolled_back, report["new_order"])
        # Remote warehouses: 15 % of payments (sd about 0.5 points at ~4,300) and 1 % of order lines (sd 0.05).
        payments = one(cur, "SELECT count(*) FROM oe_history") - before["history"]
        assert payments == report["payment"]["transactions"]
        remote_payments = one(cur, "SELECT count(*) FROM oe_history WHERE h_data = 'payment' AND h_c_w_id <> h_w_id")
        assert 0.12 <= remote_payments / payments <= 0.18, (remote_payments, payments)
        remote_lines = one(cur, "SELECT count(*) FROM oe_order_line WHERE ol_o_id > 3000 AND ol_supply_w_id <> ol_w_id")
        assert 0.007 <= remote_lines / new_lines <= 0.013, (remote_lines, new_lines)
        assert broken_conditions(cur) == []


def test_each_types_latency_comes_from_its_own_transactions_in_the_log(loaded, tmp_path):
    """pgbench's per-transaction log names each transaction's script: each type's percentiles are read from its own
    transactions (checked here against the log's lines read by hand, and its counts against the final report)."""
    stdout = pgbench(run_argv(loaded, WAREHOUSES, 2, transactions=300, seed=7, log_prefix="oe"), cwd=tmp_path)
    report = parse_transaction_types(stdout)
    lines = [line for path in sorted(tmp_path.glob("oe.*")) for line in path.read_text().splitlines()]
    assert len(lines) == 600
    by_type = latency_by_type(lines)
    assert {name: by_type[name]["count"] for name in MIX} == {name: report[name]["transactions"] for name in MIX}
    # By hand: the stock-level transactions' latencies (script 4, microseconds), their 95th by the rank rule.
    stock = sorted(int(line.split()[2]) / 1000 for line in lines if line.split()[3] == "4")
    assert by_type["stock_level"]["p95_ms"] == round(stock[max(1, int(len(stock) * 0.95 + 0.5)) - 1], 3)
    assert all(by_type[n]["p50_ms"] <= by_type[n]["p95_ms"] <= by_type[n]["p99_ms"] <= by_type[n]["max_ms"] for n in MIX)


def test_a_client_keeps_its_home_warehouse_when_asked(loaded):
    with connect() as db:
        cur = db.cursor()
        per_warehouse = "SELECT sum(d_next_o_id) FROM oe_district WHERE d_w_id = {}"
        before = [one(cur, per_warehouse.format(w)) for w in (1, 2)]
        # One client (client_id 0): home warehouse 1; its new orders all there.
        report = parse_transaction_types(pgbench(run_argv(loaded, WAREHOUSES, 1, transactions=200, home=True, seed=1)))
        after = [one(cur, per_warehouse.format(w)) for w in (1, 2)]
        assert after[1] == before[1] and 0 < after[0] - before[0] <= report["new_order"]["transactions"]
        assert broken_conditions(cur) == []
