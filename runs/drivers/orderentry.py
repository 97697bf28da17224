"""An order-entry workload derived from TPC-C (issue 48 part 2), on PostgreSQL through pgbench: its schema, its loader,
its five transactions, the consistency conditions checked on the database, and what its figures are read from. Not
TPC-C: derived from it and not audited, so not comparable with audited TPC-C results (DERIVED_NOTICE, wherever its
figures appear).

This module holds the workload's facts and pure argv builders and parsers; it is not a driver of the run engine yet
(runs/drivers/__init__.py DRIVERS): tests/test_orderentry_pgbench.py runs it by hand with pgbench on the machine's
PostgreSQL. The scripts (runs/drivers/scripts/orderentry/pg_*.sql) are written here, for pgbench 15:

- the schema, every table prefixed oe_ (cleaning up never touches a table of the target's own), scaled by
  warehouses: 100,000 items; per warehouse 10 districts, 30,000 customers and as many history rows and orders (order
  lines 5-15 each; the last 900 orders of each district not delivered), 100,000 stock rows. Loaded by one pgbench
  client per warehouse (-c W -t 1), in parallel, each warehouse in one transaction;
- the five transactions with the specification's minimum mix as pgbench weights (-f script@weight: 45 new-order,
  43 payment, 4 order-status, 4 delivery, 4 stock-level; not HammerDB's 10/10/1/1/1 of 23), each one transaction:
  1 % of new-orders roll back (an item that does not exist), 1 % of order lines and 15 % of payments go to another
  warehouse when there is one, customers by last name 60 % of the time; no keying or thinking time;
- READ COMMITTED (PostgreSQL's default: REPEATABLE READ fails thousands of these transactions with serialization
  errors); a deadlock or serialization failure is retried by pgbench (--max-tries) and counted by kind.

NOPM is read from the server: the change in sum(d_next_o_id) over the measured window (a rolled-back new-order does
not move it); TPM from the tool's own transactions (commits and rollbacks), never the server's counters."""

import re
from pathlib import Path

from .latency import PERCENTILES, rank

BINARY = "pgbench"
SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts" / "orderentry"
DERIVED_NOTICE = "derived from TPC-C, not comparable with audited TPC-C results"

# The transaction types, in the order pgbench numbers its scripts, with their weights: TPC-C's minimum mix in %.
MIX = {"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}
TABLES = ["oe_order_line", "oe_new_order", "oe_orders", "oe_history", "oe_customer", "oe_district", "oe_stock", "oe_item",
          "oe_warehouse"]
MAX_TRIES = 10  # a transaction failing on a deadlock or a serialization error is run again up to this many times
MAX_WAREHOUSES = 1000  # one loading client each (pgbench -c); about 90 MB of data a warehouse


def script(name):
    return SCRIPTS_DIR / f"pg_{name}.sql"


LUA = SCRIPTS_DIR / "mysql_orderentry.lua"  # MySQL and MariaDB: the same schema and transactions for sysbench 1.0


def sysbench_argv(command, workdir, warehouses, threads, *, duration_s=None, events=None, home=False, seed=None):
    """sysbench with the project's Lua script, MySQL or MariaDB: `prepare` (a thread a warehouse, at most `threads`),
    `run` (`duration_s` seconds, or `events` transactions in all) or `cleanup`. Where it connects, the password
    included, is in the run's 0600 sysbench.cfg in `workdir` (runs/drivers/sysbench.py secret_files), never argv."""
    if command not in ("prepare", "run", "cleanup"):
        raise ValueError(f"command {command!r}")
    warehouses, threads = _warehouses(warehouses), int(threads)
    argv = ["sysbench", str(LUA), f"--config-file={workdir}/sysbench.cfg", "--db-driver=mysql",
            f"--warehouses={warehouses}", f"--home={int(bool(home))}", f"--threads={threads}"]
    if command == "run":
        if (duration_s is None) == (events is None):
            raise ValueError("one of duration_s and events")
        argv += [f"--time={int(duration_s)}", "--forced-shutdown=1"] if duration_s is not None else [
            f"--events={int(events)}", "--time=0"]
        if seed is not None:
            argv.append(f"--rand-seed={int(seed)}")
    return argv + [command]


# A thread's counts, "<type>=<transactions>/<rolled back>/<retried>": found anywhere in the output (threads ending
# together may write their lines into one another's).
_COUNTS_RE = re.compile(r"(?P<name>" + "|".join(MIX) + r")=(?P<done>\d+)/(?P<rolled_back>\d+)/(?P<retried>\d+)")


def parse_sysbench_types(stdout):
    """Per transaction type, summed over the threads' "orderentry thread" lines (runs/drivers/scripts/orderentry/
    mysql_orderentry.lua): transactions (commits and rollbacks), rolled_back (new-orders' 1 %), retried (deadlocks and
    lock wait timeouts run again), and each type's share of the total (%). {} when no thread reported."""
    if "orderentry thread" not in (stdout or ""):
        return {}
    found = {name: {"transactions": 0, "rolled_back": 0, "retried": 0} for name in MIX}
    for match in _COUNTS_RE.finditer(stdout):
        t = found[match["name"]]
        t["transactions"] += int(match["done"])
        t["rolled_back"] += int(match["rolled_back"])
        t["retried"] += int(match["retried"])
    total = sum(t["transactions"] for t in found.values())
    for t in found.values():
        t["share_pct"] = round(100 * t["transactions"] / total, 1) if total else None
    return found


def _conn_args(conn):
    # The database is pgbench's positional argument, last (-d is --debug): runs/drivers/pgbench.py.
    return ["-h", conn.host, "-p", str(int(conn.port)), "-U", conn.user, conn.database]


def _warehouses(value):
    warehouses = int(value)
    if not 1 <= warehouses <= MAX_WAREHOUSES:
        raise ValueError(f"warehouses must be 1-{MAX_WAREHOUSES}, not {warehouses}")
    return warehouses


def prepare_argvs(conn, warehouses):
    """The load, in three pgbench invocations: the schema and items (one client), the warehouses (a client each,
    in parallel), the secondary indexes and the planner's statistics."""
    warehouses = _warehouses(warehouses)
    once = [BINARY, "-n", "-c", "1", "-t", "1"]
    return [[*once, "-f", str(script("schema")), *_conn_args(conn)],
            [BINARY, "-n", "-c", str(warehouses), "-j", str(warehouses), "-t", "1", "-f", str(script("load")),
             *_conn_args(conn)],
            [*once, "-f", str(script("index")), *_conn_args(conn)]]


def cleanup_argv(conn):
    return [BINARY, "-n", "-c", "1", "-t", "1", "-f", str(script("drop")), *_conn_args(conn)]


def run_argv(conn, warehouses, clients, *, duration_s=None, transactions=None, jobs=None, report_interval_s=1,
             home=False, seed=None, log_prefix=""):
    """The measured run: the five scripts at their weights, `clients` clients for `duration_s` seconds (or
    `transactions` each), every client on a random warehouse (home: each keeps client_id mod W + 1); with
    `log_prefix`, pgbench's per-transaction log (-l) in the working directory, for each type's percentiles."""
    warehouses, clients = _warehouses(warehouses), int(clients)
    if clients < 1 or (duration_s is None) == (transactions is None):
        raise ValueError("one of duration_s and transactions, and at least one client")
    argv = [BINARY, "-n", "-c", str(clients), "-j", str(min(int(jobs or clients), clients)),
            "-P", str(int(report_interval_s)), "--max-tries", str(MAX_TRIES), "--failures-detailed",
            "-D", f"warehouses={warehouses}", "-D", f"home={int(bool(home))}"]
    argv += ["-T", str(int(duration_s))] if duration_s is not None else ["-t", str(int(transactions))]
    if seed is not None:
        argv.append(f"--random-seed={int(seed)}")
    if log_prefix:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,30}", log_prefix):  # a name in the working directory, never a path
            raise ValueError(f"log_prefix {log_prefix!r}")
        argv += ["-l", f"--log-prefix={log_prefix}"]
    for name, weight in MIX.items():
        argv += ["-f", f"{script(name)}@{weight}"]
    return argv + _conn_args(conn)


_SCRIPT_RE = re.compile(r"^SQL script (?P<n>\d+): (?P<path>\S+)$")
_COUNT_RE = re.compile(r"^ - (?P<count>\d+) transactions \((?P<pct>[\d.]+)% of total, tps = (?P<tps>[\d.]+)\)")
_FAILURES_RE = re.compile(r"^ - number of (?P<kind>failed transactions|serialization failures|deadlock failures|"
                          r"transactions retried): (?P<count>\d+)")
_LATENCY_RE = re.compile(r"^ - latency average = (?P<ms>[\d.]+) ms")


def parse_transaction_types(stdout):
    """Per transaction type, from pgbench's final report (its "SQL script N" sections, in -f order): transactions,
    share of the total (%), TPS, failed transactions, serialization and deadlock failures, retried transactions and
    average latency (ms). {} when the report has no such section."""
    names = list(MIX)
    found, current = {}, None
    for line in (stdout or "").splitlines():
        if match := _SCRIPT_RE.match(line.strip()):
            index = int(match["n"]) - 1
            current = found.setdefault(names[index] if index < len(names) else match["path"], {})
        elif current is not None and (match := _COUNT_RE.match(line)):
            current.update(transactions=int(match["count"]), share_pct=float(match["pct"]), tps=float(match["tps"]))
        elif current is not None and (match := _FAILURES_RE.match(line)):
            key = {"failed transactions": "failed", "serialization failures": "serialization_failures",
                   "deadlock failures": "deadlock_failures", "transactions retried": "retried"}[match["kind"]]
            current[key] = int(match["count"])
        elif current is not None and (match := _LATENCY_RE.match(line)):
            current["latency_avg_ms"] = float(match["ms"])
    return found


def latency_by_type(lines):
    """Per transaction type, from pgbench's per-transaction log (-l: `client_id transaction_no time script_no
    time_epoch time_us [retries]`, `time` the latency in microseconds, or the failure's kind, "serialization",
    "deadlock" or "failed", instead of a number): the completed transactions' count, p50/p95/p99 and max (ms, the rank
    rule of runs/drivers/latency.py), and the failures by kind."""
    names = list(MIX)
    values, failures = {}, {}
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or not parts[3].isdigit() or int(parts[3]) >= len(names):
            continue
        name = names[int(parts[3])]
        if parts[2].isdigit():
            values.setdefault(name, []).append(int(parts[2]) / 1000.0)
        else:
            failures.setdefault(name, {}).setdefault(parts[2], 0)
            failures[name][parts[2]] += 1
    found = {}
    for name in names:
        ordered = sorted(values.get(name, []))
        stats = {"count": len(ordered), "failures": failures.get(name, {})}
        if ordered:
            stats.update({f"p{pct}_ms": round(ordered[rank(len(ordered), pct) - 1], 3) for pct in PERCENTILES},
                         max_ms=round(ordered[-1], 3))
        found[name] = stats
    return found


# TPC-C's consistency conditions 1-4 (clause 3.3.2), each a query counting what breaks it (0: it holds). Plain SQL
# that PostgreSQL, MySQL and MariaDB all read (no FULL JOIN, no IS DISTINCT FROM).
CONSISTENCY = {
    1: ("each warehouse's w_ytd is the sum of its districts' d_ytd",
        "SELECT count(*) FROM oe_warehouse w WHERE w_ytd <> (SELECT coalesce(sum(d_ytd), 0) FROM oe_district "
        "WHERE d_w_id = w.w_id)"),
    2: ("each district's d_next_o_id - 1 is the largest order number and the largest new-order number",
        "SELECT count(*) FROM oe_district d WHERE d_next_o_id - 1 <> coalesce((SELECT max(o_id) FROM oe_orders "
        "WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id), -1) OR d_next_o_id - 1 <> coalesce((SELECT max(no_o_id) "
        "FROM oe_new_order WHERE no_w_id = d.d_w_id AND no_d_id = d.d_id), -1)"),
    3: ("each district's new orders are numbered without a gap",
        "SELECT count(*) FROM (SELECT 1 AS gap FROM oe_new_order GROUP BY no_w_id, no_d_id "
        "HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) gaps"),
    4: ("each district's orders count as many order lines as its order_line table holds",
        "SELECT count(*) FROM oe_district d WHERE (SELECT coalesce(sum(o_ol_cnt), 0) FROM oe_orders "
        "WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id) <> (SELECT count(*) FROM oe_order_line "
        "WHERE ol_w_id = d.d_w_id AND ol_d_id = d.d_id)"),
}


def broken_conditions(cursor):
    """[(number, what it says, how many warehouses/districts break it)] of the conditions that do not hold."""
    broken = []
    for number, (said, sql) in CONSISTENCY.items():
        cursor.execute(sql)
        count = cursor.fetchone()[0]
        if count:
            broken.append((number, said, count))
    return broken


NEW_ORDERS_SQL = "SELECT sum(d_next_o_id) FROM oe_district"  # grows by one with each committed new-order


def nopm(before, after, seconds):
    """New orders a minute over a window: the change in sum(d_next_o_id), read from the server at its edges."""
    return (int(after) - int(before)) * 60 / seconds
