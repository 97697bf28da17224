"""pgbench (PostgreSQL 10+): the built-in TPC-B-like script or Alibaba's ro.sql / rw.sql.

The password goes in PGPASSWORD (libpq), never argv; TLS in PGSSLMODE / PGSSLROOTCERT / PGSSLCERT / PGSSLKEY. `progress:` lines are on stderr, the summary on
stdout. The formats changed across versions: 14+ adds ", N failed" to progress lines and
"number of failed transactions"; 14+ prints one "tps = N (without initial connection time)" where
older versions print "(including/excluding connections establishing)". Both are parsed.
"""

import re
from pathlib import Path

from ..params import thread_steps
from . import latency
from .base import Connection, Step, libpq_tls_env, libpq_tls_files, to_float

BINARY = "pgbench"
# The per-transaction log (-l) of a run step is sampled (--sampling-rate) so that it never slows the
# run measurably: a logged line costs pgbench CPU (benchmarks/pgbench_log_cost.py, with -P 1 as every run
# has: 12.25 us per ro.sql transaction without the log, 12.63 us logging every one, no measurable cost at
# rate 0.067), a few percent of a select-only transaction but nothing beside a commit. So the rate keeps the log to about
# LOG_LINES_PER_SECOND at the TPS a client is expected to reach with the workload, and to LOG_BUDGET
# lines a step. Commit-bound scripts (rw.sql, TPC-B) with a few clients log every transaction; ro.sql
# with 2 clients logs about 1 in 15 (~4,000 lines a second, ~32,000 in 8 s: plenty for a p99).
LOG_LINES_PER_SECOND = 4_000
LOG_BUDGET = 500_000
# One pgbench client on loopback, measured on this 2-core machine: ro.sql ~30,000 TPS; rw.sql and the
# built-in TPC-B ~1,000 (they wait for their commit).
ASSUMED_TPS_PER_CLIENT = {"ro": 30_000, "rw": 1_000, "tpcb": 1_000}
SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"
SCRIPTS = {"ro": SCRIPTS_DIR / "ro.sql", "rw": SCRIPTS_DIR / "rw.sql"}

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


def sampling_rate(duration_s, clients, workload="tpcb"):
    """The fraction of transactions pgbench logs: 1 where the log costs nothing measurable, less for fast
    (select-only) or wide or long steps."""
    expected_tps = max(1, int(clients) * ASSUMED_TPS_PER_CLIENT.get(workload, ASSUMED_TPS_PER_CLIENT["ro"]))
    rate = min(1.0, LOG_LINES_PER_SECOND / expected_tps, LOG_BUDGET / (max(1, int(duration_s)) * expected_tps))
    return 1.0 if rate >= 1 else float(f"{rate:.2g}")


def log_prefix(index):
    return f"latency-step{int(index)}"


def build_argv(phase, conn, params, workdir=None, threads=None, duration_s=None, log_prefix=""):
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
    ]
    workload = params.get("workload", "tpcb")
    if workload in SCRIPTS:
        # Alibaba's command line: pgbench -M prepared -v -r -P 1 -f ./ro.sql -c N -j N -T 120 -D scale= -D range=
        # (-v vacuums all four tables first, -r reports per-statement latencies).
        argv += ["-v", "-r", "-f", str(SCRIPTS[workload]), "-D", f"scale={int(params['scale'])}", "-D", f"range={int(params['range'])}"]
    if log_prefix:  # the per-transaction latency log, written into the working directory (the run's workdir)
        argv += ["-l", f"--log-prefix={log_prefix}", f"--sampling-rate={sampling_rate(duration_s, threads, workload):g}"]
    return argv + _conn_args(conn)


def plan(conn, params, workdir):
    steps = [Step("prepare", build_argv("prepare", conn, params))]
    for index, threads in enumerate(thread_steps(params), start=1):
        if params.get("warmup_s"):
            steps.append(Step("warmup", build_argv("run", conn, params, workdir, threads, params["warmup_s"]),
                              threads, params["warmup_s"], index))
        prefix = log_prefix(index)
        steps.append(Step("run", build_argv("run", conn, params, workdir, threads, params["duration_s"], prefix),
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
        "qps": None,  # pgbench reports transactions only; per-statement counts are in the summary (-r)
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
TPS_NEW_RE = re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.MULTILINE)
TPS_OLD_RE = re.compile(r"^tps = ([\d.]+) \(excluding connections establishing\)", re.MULTILINE)
STATEMENT_RE = re.compile(r"^\s+([\d.]+)\s+(?:\d+\s+)?(?!\\)(\S.*)$")


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
    # With -r, pgbench lists the statements of the script: QPS = TPS x SQL statements per transaction.
    if "statement latencies" in stdout and "tps" in summary:
        block = stdout.split("statement latencies", 1)[1].splitlines()[1:]
        statements = [ln for ln in block if ln.strip() and not ln.strip().split(None, 2)[-1].startswith("\\")]
        sql = [ln for ln in statements if re.match(r"^\s+[\d.]+\s+(\d+\s+)?[A-Za-z]", ln)]
        if sql:
            summary["statements_per_transaction"] = len(sql)
            summary["qps"] = round(summary["tps"] * len(sql), 6)
    return summary


SAMPLING_RE = re.compile(r"--sampling-rate=([\d.e-]+)")


def parse_latency(stdout, stderr="", log_lines=(), argv=()):
    """p50/p95/p99/max/mean of the transactions pgbench logged (-l) in a run step (argv: its sampling rate)."""
    rate = next((float(m.group(1)) for a in argv if (m := SAMPLING_RE.fullmatch(a))), 1.0)
    method = "pgbench -l" if rate == 1 else f"pgbench -l --sampling-rate={rate:g}"
    return latency.from_values(latency.parse_pgbench_log(log_lines), method=method, sampling_rate=rate)


ERROR_LINE_RE = re.compile(r"^pgbench: (error|fatal):|\baborted\b|^(FATAL|ERROR):")


def is_error_line(line, stream="stderr"):
    """pgbench's own error lines (a lost server: 'pgbench: error: client 0 script 0 aborted in command ...')."""
    return stream == "stderr" and bool(ERROR_LINE_RE.search(line.strip()))


def failure_reason(stdout, stderr=""):
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines()
             if re.search(r"(error|fatal|could not|failed|aborted)", ln, re.IGNORECASE)
             and not PROGRESS_RE.match(ln.strip()) and "number of failed transactions" not in ln]
    return "; ".join(list(dict.fromkeys(lines))[:3])
