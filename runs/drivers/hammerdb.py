"""HammerDB TPC-C (the SQL Server methodology): NOT RUNNABLE on these workers.

HammerDB and SQL Server are not installed here; the profile exists so the methodology is listed,
and this stub refuses to plan a run with a clear reason instead of pretending.
"""

from .base import NotRunnable

BINARY = "hammerdbcli"
WORKLOADS = ("tpcc",)
REASON = "HammerDB TPC-C cannot run on these workers (HammerDB and SQL Server are not installed)."


def version_argv():
    raise NotRunnable(REASON)


def parse_version(text):
    return ""


def secret_files(conn, password):
    return {}


def secret_env(conn, password):
    return {}


def is_error_line(line, stream="stdout"):
    return False


def tls_refusal(conn, tls):
    return ""


def tls_env(conn, tls, workdir):
    return {}


def tls_files(conn, tls):
    return {}


def plan(conn, params, workdir):
    raise NotRunnable(REASON)


def parse_interval(line, stream="stdout", threads=None, interval_s=1):
    return None


def parse_summary(stdout, stderr=""):
    return {}


def failure_reason(stdout, stderr=""):
    return REASON


def latency_mismeasured_jobs(command_line):
    """Its latency figures stand as the tool printed them (pgbench's driver has the one known exception)."""
    return None
