"""pgbench (PostgreSQL 10+): the built-in TPC-B-like script or Alibaba's ro.sql / rw.sql.

The password goes in PGPASSWORD (libpq), never argv; TLS in PGSSLMODE / PGSSLROOTCERT / PGSSLCERT / PGSSLKEY. `progress:` lines are on stderr, the summary on
stdout. The formats changed across versions: 14+ adds ", N failed" to progress lines and
"number of failed transactions"; 14+ prints one "tps = N (without initial connection time)" where
older versions print "(including/excluding connections establishing)". Both are parsed.
"""

import re
import shlex
from pathlib import Path

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from . import latency, openloop
from .base import Connection, Step, checked_params, checked_workload, libpq_tls_env, libpq_tls_files, to_float
from .parameters import MIN_LATENCY_LIMIT_MS, Parameter, thread_steps

BINARY = "pgbench"
# The per-transaction log (-l) of a run step is sampled (--sampling-rate) so that it costs the run little
# whatever the server. What it costs is a share of every logged transaction, not a fixed price per second: at
# rate 1 it cost ro.sql 6.6 % of its TPS by hand (benchmarks/pgbench_log_cost.py: pgbench +0.39 us of CPU on its
# 12.25 us a transaction) and rw.sql about 2 % inside the dashboard against the TLS-only PostgreSQL of the tests
# (fsync off, 2 clients, ~6,000 TPS on 2 cores: 0.978 of the same run without the log, 95 % CI 0.959-0.997 over
# 42 rounds, benchmarks/pgbench_log_in_dashboard.py), though a line costs pgbench only ~0.6 us directly (fprintf
# and its 4 kB writes). So the rate keeps the log to at most LOG_LINES_PER_SECOND at the most TPS a client can
# reach with the script (MAX_TPS_PER_CLIENT, an upper bound: a server faster than usual, with synchronous_commit or
# fsync off, fast disks or its own cache, logs fewer lines, never more) and to LOG_BUDGET lines a step. With 2
# clients rw.sql and TPC-B log 1 transaction in 5.5 (0.18: ~0.4 % at the cost above), ro.sql 1 in 37 (0.027).
# Enough for a p99: an 8 s rw.sql step with 2 clients logs ~4,000 transactions at the local server's ~2,750 TPS
# (~17,000 at the TLS server's 11,800); the p99 of 4,000 is the 3,960th value, and the 95 % distribution-free
# interval of the true p99 is ranks 3,948-3,972 (p98.7-p99.3).
LOG_LINES_PER_SECOND = 4_000
LOG_BUDGET = 500_000
# The most TPS one pgbench client reaches with each script, an upper bound: ro.sql is one round trip (70,600 a
# client measured here: 141,289 TPS with 2 clients on loopback, TLS off); rw.sql and the built-in TPC-B-like are
# seven each (BEGIN, five statements, END), so a client cannot run them faster than a seventh of that (the
# fastest seen, 5,900 a client against the TLS-only server with fsync off, is about half).
# select-only is one round trip like ro.sql; simple-update five (BEGIN, UPDATE, SELECT, INSERT, END).
MAX_TPS_PER_CLIENT = {"ro": 75_000, "rw": 11_000, "tpcb": 11_000, "select-only": 75_000, "simple-update": 15_000}
SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"
SCRIPTS = {"ro": SCRIPTS_DIR / "ro.sql", "rw": SCRIPTS_DIR / "rw.sql"}
# pgbench's built-in scripts (pgbench -b list): tpcb is its default, tpcb-like, given without -b as before.
BUILTINS = {"tpcb": "", "select-only": "select-only", "simple-update": "simple-update"}
# The only workloads a profile may name: the project's scripts (a path is never taken from a profile) and the builtins.
WORKLOADS = (*SCRIPTS, *BUILTINS)

# What the tool is to the rest of the project (footprint, leftovers, publish, reproduce, compare, the forms and the
# models read these through runs/drivers/__init__.py, never the tool's name):
LABEL = "pgbench"
RUNNABLE = True
NOT_RUNNABLE_HERE = ""
INTERVAL_LATENCY = "avg"  # the latency each progress line prints: the interval's average
ROWS_PER_SCALE = 100_000  # pgbench -i: scale x 100,000 rows in pgbench_accounts (its manual)
# Bytes a loaded row takes and rows the prepare loads a second (benchmarks/load_rate.py: pgbench -i -s 10); the
# branches and tellers, a few hundred rows a scale, are counted in the bytes per row.
BYTES_PER_ROW = {"postgresql": 157}
LOAD_ROWS_PER_S = {"postgresql": 216_000}
TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]  # what -i -I d drops


# Its own parameters (beside the ones every tool takes: runs/drivers/parameters.py COMMON).
PARAMETERS = (
    Parameter("scale", gettext_lazy("scale"), limits=(1, 100_000), form_label=gettext_lazy("scale (pgbench)"), section="data"),
    Parameter("range", gettext_lazy("range"), limits=(1, 10_000_000_000), form_label=gettext_lazy("range (pgbench)"), section="data"),
    Parameter("jobs", gettext_lazy("jobs (-j)"), limits=(1, 1024), form_label=gettext_lazy("jobs -j (pgbench)"), help=gettext_lazy("Empty: as many as clients."),
              api_help="pgbench -j (at most the clients).", empty_means_default=True, section="data"),
    Parameter("latency_limit_ms", gettext_lazy("latency limit (ms)"), kind="number", limits=(MIN_LATENCY_LIMIT_MS, 3_600_000),
              on_profile=False, empty_means_default=True,
              form_label=gettext_lazy("latency limit, ms (pgbench, open loop)"), help=gettext_lazy(
                  "pgbench -L with the offered rate: transactions slower than this are counted late, those already this "
                  "late when they could start are skipped. Empty: none."),
              api_help="pgbench -L (ms, with rate_tps): transactions above it are counted late, those already that late "
                       "at their start skipped. Null or absent: no limit.", section="client"),
)


def rule_errors(workload, params):
    """The rules between its parameters, {field: message}: the scale (required), the range (within the scale's rows;
    required by the ro and rw scripts) and the jobs (at most the clients of any step)."""
    errors = {}
    if not params["scale"]:
        errors["scale"] = _("scale is required for pgbench.")
    elif params["range"] and params["range"] > params["scale"] * ROWS_PER_SCALE:
        errors["range"] = _("range (%(r)s) must not exceed the rows of the scale (%(n)s = scale x 100000).") % {
            "r": params["range"], "n": params["scale"] * ROWS_PER_SCALE}
    if params["jobs"] and params["jobs"] > min([params["threads"], *params["thread_sweep"]]):
        errors["jobs"] = _("jobs (-j) must not exceed the number of clients (-c).")
    if workload in SCRIPTS and not params["range"]:
        errors["range"] = _("range is required for the %(w)s script.") % {"w": workload}
    return errors


def data_rows(params):
    """The rows the prepare step loads: scale x 100,000 accounts."""
    return int(params.get("scale") or 0) * ROWS_PER_SCALE


def tables_created(params):
    return list(TABLES)


def data_setup(params, threads):
    """What sizes the data of a run (and its -j), as its published set-up states it."""
    return {"scale": params.get("scale"), "range": params.get("range"), "jobs": params.get("jobs") or threads}


def reproduction(methodology, result):
    """The parameters that load a document's data as its row states it (scale from its test data, range from its hot
    rows), and the script: rw.sql for a row that prints read-write QPS only, else ro.sql."""
    initial = {}
    if result.data_rows:
        initial["scale"] = int(result.data_rows) // ROWS_PER_SCALE
    if result.hot_rows:
        initial["range"] = int(result.hot_rows)
    return initial, "rw" if result.rw_qps is not None and result.ro_qps is None else "ro"


def data_differences(methodology, result, params):
    """[(key, label, the document's, the run's)] of what sizes the data."""
    published_scale = int(result.data_rows) // ROWS_PER_SCALE if result.data_rows else None
    return [("scale", gettext_lazy("scale (x 100,000 rows)"), published_scale, params.get("scale")),
            ("range", gettext_lazy("range (hot rows)"), int(result.hot_rows) if result.hot_rows else None,
             params.get("range"))]


def sql_commands(script_text):
    """The SQL commands of a pgbench script, one a line in ours; meta-commands (\\set) and comments are not SQL."""
    lines = (line.strip() for line in script_text.splitlines())
    return [line for line in lines if line and not line.startswith(("\\", "--"))]


# QPS = TPS x the SQL commands of a transaction (BEGIN and END count, as sysbench counts them).
STATEMENTS_PER_TRANSACTION = {path.name: len(sql_commands(path.read_text())) for path in SCRIPTS.values()}

PROGRESS_RE = re.compile(
    r"^progress:\s*(?P<t>[\d.]+)\s*s,\s*(?P<tps>[\d.]+)\s*tps,\s*lat\s+(?P<lat>[\d.]+)\s*ms\s+stddev\s+(?P<stddev>[\d.]+|NaN)"
    r"(?:,\s*(?P<failed>\d+)\s+failed)?(?:,\s*(?P<retried>\d+)\s+retried)?"
)


def version_argv():
    return [BINARY, "--version"]


def parse_version(text):
    match = re.search(r"pgbench \(PostgreSQL\)\s+(\d+(?:\.\d+)?)", text)
    return match.group(1) if match else ""


def major(version):
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return 0


def secret_files(conn, password):
    return {}


def secret_env(conn: Connection, password: str):
    return {"PGPASSWORD": password} if password else {}


def tls_refusal(conn, tls):
    return ""  # libpq does every mode


def tls_env(conn, tls, workdir):
    return libpq_tls_env(tls, workdir)


def tls_files(conn, tls):
    return libpq_tls_files(tls)


def _conn_args(conn):
    # pgbench [OPTION]... [DBNAME]: the database is the positional argument, last. (-d is --debug,
    # which prints a line per statement and slows the run to a third.) Target.database is validated as
    # an identifier starting with a letter or _, so it can never be read as an option.
    return ["-h", conn.host, "-p", str(int(conn.port)), "-U", conn.user, conn.database]


def sampling_rate(duration_s, clients, workload="tpcb", rate_tps=None):
    """The fraction of transactions pgbench logs: LOG_LINES_PER_SECOND (and LOG_BUDGET a step) at the most TPS
    the clients can reach with the script, so a fast server can never make the log cost more. Open loop, the most
    is the offered rate (pgbench never runs ahead of its schedule)."""
    most_tps = max(1, int(clients) * MAX_TPS_PER_CLIENT.get(workload, MAX_TPS_PER_CLIENT["ro"]))
    if rate_tps:
        most_tps = min(most_tps, max(1, int(rate_tps)))
    rate = min(1.0, LOG_LINES_PER_SECOND / most_tps, LOG_BUDGET / (max(1, int(duration_s)) * most_tps))
    return 1.0 if rate >= 1 else float(f"{rate:.2g}")


def log_prefix(index):
    return f"latency-step{int(index)}"


def decimal_arg(value):
    """A decimal as pgbench reads it (atof), never in exponent form: 3600000, 0.05."""
    return f"{float(value):.3f}".rstrip("0").rstrip(".")


def open_loop_args(params):
    """-R (the offered rate, transactions a second, all clients together) and -L (the latency limit in ms: later
    transactions are counted late; with -R, those already that late when they could start are skipped)."""
    argv = []
    if params.get("rate_tps"):
        argv += ["-R", str(int(params["rate_tps"]))]
        if params.get("latency_limit_ms"):
            argv += ["-L", decimal_arg(params["latency_limit_ms"])]
    return argv


def build_argv(phase, conn, params, workdir=None, threads=None, duration_s=None, log_prefix="", log_threads=None):
    if phase == "prepare":
        return [BINARY, "-i", "-q", "-s", str(int(params["scale"])), *_conn_args(conn)]
    if phase == "cleanup":
        return [BINARY, "-i", "-I", "d", *_conn_args(conn)]  # init step 'd': drop the pgbench tables
    jobs = min(int(params.get("jobs") or threads), int(threads))
    argv = [
        BINARY,
        "-M", "prepared" if params.get("prepared", True) else "simple",
        "-P", str(int(params["report_interval_s"])),
        "-c", str(int(threads)),
        "-j", str(jobs),
        "-T", str(int(duration_s)),
        *open_loop_args(params),
    ]
    workload = checked_workload(WORKLOADS, params.get("workload", "tpcb"))
    if BUILTINS.get(workload):
        argv += ["-b", BUILTINS[workload]]
    if workload in SCRIPTS:
        # Alibaba's command line: pgbench -M prepared -v -r -P 1 -f ./ro.sql -c N -j N -T 120 -D scale= -D range=
        # (-v vacuums all four tables first), without -r, which only adds per-statement latencies to the report:
        # pgbench 15 given -r and -P with more than one thread (-j) measures every transaction's latency wrong,
        # its average, its -P lines and its -l log alike (by hand, ro.sql, 2 clients, -j 2, TLS: "latency average
        # = 0.001 ms" at 81,600 TPS, where 2 clients / TPS is 0.0245 ms and the same run without -r prints
        # 0.025 ms; rw.sql 0.073 against 0.185). Its TPS is the same either way.
        argv += ["-v", "-f", str(SCRIPTS[workload]), "-D", f"scale={int(params['scale'])}", "-D", f"range={int(params['range'])}"]
    if log_prefix:  # the per-transaction latency log, written into the working directory (the run's workdir)
        # Several clients: each logs the share sized on client 1's threads and rate (runs/params.py client_params),
        # the same for all, so their logs merged are one sample of the run's transactions.
        basis = params.get("log_basis") or {}
        rate = basis.get("rate_tps") or params.get("rate_tps")
        argv += ["-l", f"--log-prefix={log_prefix}",
                 f"--sampling-rate={sampling_rate(duration_s, log_threads or threads, workload, rate):g}"]
    return argv + _conn_args(conn)


def plan(conn, params, workdir):
    checked_params(params, PARAMETERS)
    checked_workload(WORKLOADS, params.get("workload", "tpcb"))
    steps = [Step("prepare", build_argv("prepare", conn, params))]
    for index, threads in enumerate(thread_steps(params), start=1):
        if params.get("warmup_s"):
            steps.append(Step("warmup", build_argv("run", conn, params, workdir, threads, params["warmup_s"]),
                              threads, params["warmup_s"], index))
        prefix = log_prefix(index)
        basis = (params.get("log_basis") or {}).get("threads")
        steps.append(Step("run", build_argv("run", conn, params, workdir, threads, params["duration_s"], prefix,
                                            basis[index - 1] if basis else None),
                          threads, params["duration_s"], index, prefix))
    steps.append(Step("cleanup", build_argv("cleanup", conn, params)))
    return steps


def parse_interval(line, stream="stderr", threads=None, interval_s=1):
    if stream != "stderr":
        return None
    match = PROGRESS_RE.match(line.strip())
    if not match:
        return None
    g = match.groupdict()
    tps = float(g["tps"])
    return {
        "t": float(g["t"]),
        "threads": threads or 0,
        "tps": tps,
        "qps": None,  # pgbench reports transactions only; the summary has QPS from the script's statements
        "latency_avg_ms": to_float(g["lat"]),
        "latency_p95_ms": None,
        "errors_per_s": None if g["failed"] is None else round(float(g["failed"]) / max(1, interval_s), 3),
        "reconnects_per_s": None,
    }


SUMMARY_PATTERNS = {
    "transactions": r"^number of transactions actually processed:\s*(\d+)",
    "errors": r"^number of failed transactions:\s*(\d+)",
    "latency_avg_ms": r"^latency average\s*=\s*([\d.]+)\s*ms",
    "latency_stddev_ms": r"^latency stddev\s*=\s*([\d.]+)\s*ms",
    "clients": r"^number of clients:\s*(\d+)",
    "jobs": r"^number of threads:\s*(\d+)",
    "duration_s": r"^duration:\s*(\d+)\s*s",
    "scale": r"^scaling factor:\s*(\d+)",
    "query_mode": r"^query mode:\s*(\S+)",
    "transaction_type": r"^transaction type:\s*(.+)$",
}
INTEGER_FIELDS = {"transactions", "errors", "clients", "jobs", "duration_s", "scale"}
# Open loop (-R, -L), pgbench 15: "number of transactions skipped: 201 (1.676%)" (of the scheduled ones),
# "number of transactions above the 5.0 ms latency limit: 129/11792 (1.094%)" (of the processed ones),
# "rate limit schedule lag: avg 0.483 (max 14.990) ms", and ", lag 0.588 ms" on each progress line.
SKIPPED_RE = re.compile(r"^number of transactions skipped:\s*(\d+)\s*\(([\d.]+)%\)", re.MULTILINE)
LATE_RE = re.compile(r"^number of transactions above the ([\d.]+) ms latency limit:\s*(\d+)/\d+\s*\(([\d.]+)%\)", re.MULTILINE)
LAG_RE = re.compile(r"^rate limit schedule lag: avg ([\d.]+) \(max ([\d.]+)\) ms", re.MULTILINE)
PROGRESS_LAG_RE = re.compile(r",\s*lag\s+([\d.]+)\s*ms")
TPS_NEW_RE = re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.MULTILINE)
TPS_OLD_RE = re.compile(r"^tps = ([\d.]+) \(excluding connections establishing\)", re.MULTILINE)


def parse_summary(stdout, stderr=""):
    if "number of transactions actually processed" not in stdout:
        return {}
    summary = {}
    for name, pattern in SUMMARY_PATTERNS.items():
        match = re.search(pattern, stdout, re.MULTILINE)
        if match:
            value = match.group(1).strip()
            summary[name] = int(value) if name in INTEGER_FIELDS else (to_float(value) if name.endswith("_ms") else value)
    match = TPS_NEW_RE.search(stdout) or TPS_OLD_RE.search(stdout)
    if match:
        summary["tps"] = float(match.group(1))
    # QPS = TPS x the SQL commands of a transaction, as our script has them (transaction type: its path on the worker).
    statements = STATEMENTS_PER_TRANSACTION.get(Path(summary.get("transaction_type", "")).name)
    if statements and "tps" in summary:
        summary["statements_per_transaction"] = statements
        summary["qps"] = round(summary["tps"] * statements, 6)
    summary.update(parse_open_loop(stdout, stderr))
    return summary


def parse_open_loop(stdout, stderr=""):
    """The open-loop lines of pgbench's report (-R, -L) and its progress lines' lag ({} for a closed-loop run)."""
    found = {}
    if match := LAG_RE.search(stdout):
        found["lag_avg_ms"], found["lag_max_ms"] = float(match.group(1)), float(match.group(2))
        lags = [float(m.group(1)) for line in stderr.splitlines()
                if PROGRESS_RE.match(line.strip()) and (m := PROGRESS_LAG_RE.search(line))]
        found["lag_per_interval_ms"] = lags
        found["lag_grows"] = openloop.lag_grows(lags)
        found["skipped"], found["skipped_pct"] = 0, 0.0  # printed only with -L: without it pgbench skips none
    if match := SKIPPED_RE.search(stdout):
        found["skipped"], found["skipped_pct"] = int(match.group(1)), float(match.group(2))
    if match := LATE_RE.search(stdout):
        found["latency_limit_ms"] = float(match.group(1))
        found["late"], found["late_pct"] = int(match.group(2)), float(match.group(3))
    return found


SAMPLING_RE = re.compile(r"--sampling-rate=([\d.e-]+)")


def parse_latency(stdout, stderr="", log_lines=(), argv=()):
    """p50/p95/p99/max/mean of the transactions pgbench logged (-l) in a run step (argv: its sampling rate)."""
    rate = next((float(m.group(1)) for a in argv if (m := SAMPLING_RE.fullmatch(a))), 1.0)
    method = "pgbench -l" if rate == 1 else f"pgbench -l --sampling-rate={rate:g}"
    values = latency.parse_pgbench_log(log_lines)
    stats = latency.from_values(values, method=method, sampling_rate=rate)
    if stats:  # the records themselves, for a multi-client run's merge (runs/clients.py); not kept on the run
        stats["exact_us"] = latency.exact_counts(values)
    return stats


ERROR_LINE_RE = re.compile(r"^pgbench: (error|fatal):|\baborted\b|^(FATAL|ERROR):")


def is_error_line(line, stream="stderr"):
    """pgbench's own error lines (a lost server: 'pgbench: error: client 0 script 0 aborted in command ...')."""
    return stream == "stderr" and bool(ERROR_LINE_RE.search(line.strip()))


def failure_reason(stdout, stderr=""):
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines()
             if re.search(r"(error|fatal|could not|failed|aborted)", ln, re.IGNORECASE)
             and not PROGRESS_RE.match(ln.strip()) and "number of failed transactions" not in ln]
    return "; ".join(list(dict.fromkeys(lines))[:3])


def latency_mismeasured_jobs(command_line):
    """pgbench 15 measures every transaction's latency wrong, far below clients / TPS, when given -r and -P with
    more than one thread (-j). The driver no longer passes -r; runs made before may have: the -j of such a line of
    the run's command line, or None when its latency figures stand."""
    for line in (command_line or "").splitlines():
        try:
            argv = shlex.split(line)
        except ValueError:
            continue
        if not argv or argv[0] != "pgbench" or "-r" not in argv or "-P" not in argv or "-j" not in argv[:-1]:
            continue
        jobs = argv[argv.index("-j") + 1]
        if jobs.isdigit() and int(jobs) > 1:
            return int(jobs)
    return None
