"""sysbench 1.0 (oltp_read_write and friends) for MySQL/MariaDB and PostgreSQL.

The password goes into a 0600 --config-file (never argv). Interval lines and the final report are on
stdout. --forced-shutdown stops sysbench 1 s after --time even when threads stall (a sysbench 1.0 trap);
the runner keeps an outer time limit as well.
"""

import re

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from . import latency, openloop
from .base import (Connection, Step, checked_params, checked_workload, libpq_tls_env, libpq_tls_files, statements_per_transaction,
                   to_float)
from .parameters import Parameter, thread_steps

BINARY = "sysbench"
# The OLTP tests sysbench 1.0 bundles (its manual's list, /usr/share/sysbench/oltp_*.lua), given by name only.
# sysbench reads any other argument in this place as a Lua script of its own to run (a path, or a file of that
# name in its working directory): os.execute included, as the worker's user, who holds the encryption key.
WORKLOADS = ("oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select", "oltp_insert",
             "oltp_delete", "oltp_update_index", "oltp_update_non_index")
DB_DRIVER = {"mysql": "mysql", "postgresql": "pgsql"}

# What the tool is to the rest of the project (footprint, leftovers, publish, reproduce, compare, the forms and the
# models read these through runs/drivers/__init__.py, never the tool's name):
LABEL = "sysbench"
RUNNABLE = True
NOT_RUNNABLE_HERE = ""
INTERVAL_LATENCY = "p95"  # the latency each interval line prints (--percentile=95)
# Bytes a loaded row takes on the target and rows the prepare loads a second, per engine (benchmarks/load_rate.py,
# one table of 1,000,000 rows, one loading thread).
BYTES_PER_ROW = {"mysql": 248, "postgresql": 255}
LOAD_ROWS_PER_S = {"mysql": 47_800, "postgresql": 24_000}


# Its own parameters (beside the ones every tool takes: runs/drivers/parameters.py COMMON).
PARAMETERS = (
    Parameter("tables", gettext_lazy("tables"), limits=(1, 1024), form_label=gettext_lazy("tables (sysbench)"), section="data"),
    Parameter("rows_per_table", gettext_lazy("rows per table"), limits=(1, 1_000_000_000), form_label=gettext_lazy("rows per table (sysbench)"), section="data"),
)


def rule_errors(workload, params):
    """The rules between its parameters, {field: message}: the tables and their rows are required."""
    return {name: _("%(field)s is required for sysbench.") % {"field": name}
            for name in ("tables", "rows_per_table") if not params[name]}


def data_rows(params):
    """The rows the prepare step loads: tables x rows per table."""
    return int(params.get("tables") or 0) * int(params.get("rows_per_table") or 0)


def tables_created(params):
    """The tables the prepare step creates (what the cleanup step drops): sbtest1..N."""
    return [f"sbtest{i}" for i in range(1, int(params.get("tables") or 1) + 1)]


def data_setup(params, threads):
    """What sizes the data of a run, as its published set-up states it."""
    return {"tables": params.get("tables"), "rows_per_table": params.get("rows_per_table")}


def reproduction(methodology, result):
    """The parameters that load a document's data as it states it: {name: value}, and the workload to pick (None:
    the profile's)."""
    return {name: getattr(methodology, name) for name in ("tables", "rows_per_table") if getattr(methodology, name)}, None


def data_differences(methodology, result, params):
    """[(key, label, the document's, the run's)] of what sizes the data."""
    return [("tables", gettext_lazy("tables"), methodology.tables, params.get("tables")),
            ("rows_per_table", gettext_lazy("rows per table"), methodology.rows_per_table, params.get("rows_per_table"))]


INTERVAL_RE = re.compile(
    r"^\[\s*(?P<t>[\d.]+)s\s*\]\s+thds:\s*(?P<threads>\d+)\s+tps:\s*(?P<tps>[\d.]+)\s+qps:\s*(?P<qps>[\d.]+)\s+"
    r"\(r/w/o:\s*(?P<reads>[\d.]+)/(?P<writes>[\d.]+)/(?P<other>[\d.]+)\)\s+"
    r"lat\s+\(ms,(?P<pct>\d+)%\):\s*(?P<lat>[\d.]+)\s+err/s:?\s*(?P<err>[\d.]+)\s+reconn/s:?\s*(?P<reconn>[\d.]+)"
)
SUMMARY_PATTERNS = {
    "reads": r"^\s*read:\s+(\d+)",
    "writes": r"^\s*write:\s+(\d+)",
    "other": r"^\s*other:\s+(\d+)",
    "transactions": r"^\s*transactions:\s+(\d+)",
    "tps": r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec\.\)",
    "queries": r"^\s*queries:\s+(\d+)",
    "qps": r"^\s*queries:\s+\d+\s+\(([\d.]+) per sec\.\)",
    "errors": r"^\s*ignored errors:\s+(\d+)",
    "reconnects": r"^\s*reconnects:\s+(\d+)",
    "total_time_s": r"^\s*total time:\s+([\d.]+)s",
    "latency_min_ms": r"^\s*min:\s+([\d.]+)",
    "latency_avg_ms": r"^\s*avg:\s+([\d.]+)",
    "latency_max_ms": r"^\s*max:\s+([\d.]+)",
    "latency_p95_ms": r"^\s*95th percentile:\s+([\d.]+)",
}
INTEGER_FIELDS = {"reads", "writes", "other", "transactions", "queries", "errors", "reconnects"}


def version_argv():
    return [BINARY, "--version"]


def parse_version(text):
    match = re.search(r"sysbench\s+([\d.]+)", text)
    return match.group(1) if match else ""


def _quote(value):
    # sysbench's config-file parser splits on ',' and stops at '#' unless the value is double-quoted.
    return f'"{value}"'


def tool_host(conn):
    """libmariadb reads the host name `localhost` as "the Unix socket" and ignores the port (it would reach
    whichever server owns /run/mysqld/mysqld.sock): over TCP, as every other client of the target does. The
    host name is never checked by this build's TLS (tls_refusal), so nothing is lost."""
    return "127.0.0.1" if conn.engine == "mysql" and conn.host.lower() == "localhost" else conn.host


def secret_files(conn: Connection, password: str):
    prefix = DB_DRIVER[conn.engine]
    lines = [
        f"{prefix}-host={_quote(tool_host(conn))}",
        f"{prefix}-port={conn.port}",
        f"{prefix}-user={_quote(conn.user)}",
        f"{prefix}-db={_quote(conn.database)}",
    ]
    if password:
        lines.append(f"{prefix}-password={_quote(password)}")
    return {"sysbench.cfg": "\n".join(lines) + "\n"}


def secret_env(conn, password):
    return {}


def tls_refusal(conn, tls):
    """sysbench 1.0.20's MySQL driver (libmariadb) has one switch, --mysql-ssl=on, which loads cacert.pem,
    client-cert.pem and client-key.pem from the working directory (missing or empty: error 2026) and checks
    the server's chain against cacert.pem, never its host name. So: verify-ca at most, with all three files."""
    if conn.engine != "mysql" or not tls.on:
        return ""
    if tls.mode == "verify-full":
        return ("TLS mode verify-full cannot be honoured by sysbench 1.0.20 against MySQL/MariaDB: its --mysql-ssl=on checks "
                "the server's certificate chain against the CA but never the host name. Use verify-ca (or pgbench/PostgreSQL).")
    if not (tls.ca_pem and tls.cert_pem and tls.key_pem):
        return ("sysbench 1.0.20 against MySQL/MariaDB with TLS needs the target's CA certificate and a client certificate and "
                "key (its --mysql-ssl=on loads all three and checks the server's chain against the CA): add them to the target.")
    return ""


def tls_env(conn, tls, workdir):
    return libpq_tls_env(tls, workdir) if conn.engine == "postgresql" else {}


def tls_files(conn, tls):
    return libpq_tls_files(tls)


def _base(conn, params, workdir, threads):
    argv = [
        BINARY,
        f"--config-file={workdir}/sysbench.cfg",
        f"--db-driver={DB_DRIVER[conn.engine]}",
        f"--tables={int(params['tables'])}",
        f"--table-size={int(params['rows_per_table'])}",
        f"--threads={int(threads)}",
    ]
    argv.append(f"--db-ps-mode={'auto' if params.get('prepared', True) else 'disable'}")
    if conn.engine == "mysql" and conn.tls_mode != "disable":
        argv.append("--mysql-ssl=on")  # the files are in the working directory (tls_files)
    return argv


def build_argv(phase, conn, params, workdir, threads=None, duration_s=None):
    workload = checked_workload(WORKLOADS, params.get("workload") or "oltp_read_write")
    if phase == "prepare":
        # Loading with several threads, one table each at most, as the whitepapers' prepare step does.
        return _base(conn, params, workdir, min(int(params["tables"]), 8)) + [workload, "prepare"]
    if phase == "cleanup":
        return _base(conn, params, workdir, 1) + [workload, "cleanup"]
    return _base(conn, params, workdir, threads) + [
        f"--time={int(duration_s)}",
        f"--report-interval={int(params['report_interval_s'])}",
        "--forced-shutdown=1",
        *([f"--rate={int(params['rate_tps'])}"] if params.get("rate_tps") else []),  # open loop: events a second
        "--percentile=95",
        "--histogram=on",  # the latency histogram in the final report: p50/p99 beside the report's p95
        workload,
        "run",
    ]


def plan(conn, params, workdir):
    checked_params(params, PARAMETERS)
    # "reset" drops tables a previous run left behind (a killed worker never reached its cleanup);
    # sysbench's cleanup is a no-op when there are none. (pgbench -i drops old tables itself.)
    steps = [Step("reset", build_argv("cleanup", conn, params, workdir)), Step("prepare", build_argv("prepare", conn, params, workdir))]
    for index, threads in enumerate(thread_steps(params), start=1):
        if params.get("warmup_s"):
            steps.append(Step("warmup", build_argv("run", conn, params, workdir, threads, params["warmup_s"]),
                              threads, params["warmup_s"], index))
        steps.append(Step("run", build_argv("run", conn, params, workdir, threads, params["duration_s"]),
                          threads, params["duration_s"], index))
    steps.append(Step("cleanup", build_argv("cleanup", conn, params, workdir)))
    return steps


def parse_interval(line, stream="stdout", threads=None, interval_s=1):
    if stream != "stdout":
        return None
    match = INTERVAL_RE.match(line.strip())
    if not match:
        return None
    g = match.groupdict()
    return {
        "t": float(g["t"]),
        "threads": int(g["threads"]),
        "tps": float(g["tps"]),
        "qps": float(g["qps"]),
        "reads": float(g["reads"]),
        "writes": float(g["writes"]),
        "other": float(g["other"]),
        "latency_p95_ms": float(g["lat"]) if g["pct"] == "95" else None,
        "errors_per_s": float(g["err"]),
        "reconnects_per_s": float(g["reconn"]),
    }


def parse_summary(stdout, stderr=""):
    """The final report ('SQL statistics', 'Latency (ms)'); {} if sysbench printed none."""
    if "SQL statistics:" not in stdout:
        return {}
    text = stdout[stdout.index("SQL statistics:"):]
    summary = {}
    for name, pattern in SUMMARY_PATTERNS.items():
        match = re.search(pattern, text, re.MULTILINE)
        if match:
            summary[name] = int(match.group(1)) if name in INTEGER_FIELDS else to_float(match.group(1))
    if (statements := statements_per_transaction(summary)) is not None:
        summary["statements_per_transaction"] = statements
    summary.update(parse_open_loop(stdout))
    return summary


# Open loop (--rate), sysbench 1.0.20: "Target transaction rate: 500/sec" before the run, and after each interval
# line "[ 1s ] queue length: 0, concurrency: 0": the events generated and not yet taken by a thread. It stops
# with "FATAL: The event queue is full. ..." when the threads cannot keep up (the run fails with those words).
RATE_RE = re.compile(r"^Target transaction rate: (\d+)/sec", re.MULTILINE)
QUEUE_RE = re.compile(r"^\[\s*[\d.]+s\s*\]\s+queue length:\s*(\d+),\s*concurrency:\s*(\d+)", re.MULTILINE)


def parse_open_loop(stdout):
    """The queue of an open-loop run as a schedule lag: an event waits behind the queue, so by Little's law its
    wait is the queue length / the rate (ms). sysbench prints no lag, late or skipped count of its own. {} for a
    closed-loop run."""
    rate = RATE_RE.search(stdout)
    if not rate:
        return {}
    one_event_ms = 1000 / int(rate.group(1))
    lags = [round(int(q) * one_event_ms, 3) for q, _c in QUEUE_RE.findall(stdout)]
    return {"lag_per_interval_ms": lags, "lag_grows": openloop.lag_grows(lags, resolution_ms=one_event_ms),
            "lag_from": "queue length / rate"}


def parse_latency(stdout, stderr="", log_lines=(), argv=()):
    """p50/p95/p99 from the report's histogram (as sysbench computes its percentile), max from its report."""
    summary = parse_summary(stdout, stderr)
    return latency.from_histogram(latency.parse_sysbench_histogram(stdout), max_ms=summary.get("latency_max_ms"),
                                  method="sysbench --histogram")


def is_error_line(line, stream="stdout"):
    """sysbench's own error lines (a lost server: FATAL: mysql_drv_query() returned error 2013 ...)."""
    return line.lstrip().startswith("FATAL:")


def failure_reason(stdout, stderr=""):
    lines = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines() if ln.strip().startswith("FATAL:")]
    if not lines:
        return ""
    # Keep the distinct messages in order (a 300-thread failure repeats the same three lines per thread).
    distinct = list(dict.fromkeys(lines))
    if "FATAL: Thread initialization failed!" in distinct:
        causes = [ln for ln in distinct if "error" in ln and ln != "FATAL: Thread initialization failed!"]
        return "Worker threads failed to initialize: " + ("; ".join(causes[:2]) or distinct[0])
    return "; ".join(distinct[:3])


def latency_mismeasured_jobs(command_line):
    """Its latency figures stand as the tool printed them (pgbench's driver has the one known exception)."""
    return None
