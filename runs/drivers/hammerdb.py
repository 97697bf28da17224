"""HammerDB TPC-C (the SQL Server methodology): NOT RUNNABLE on these workers.

HammerDB and SQL Server are not installed here; the profile exists so the methodology is listed,
and this stub refuses to plan a run with a clear reason instead of pretending.
"""

from django.utils.translation import gettext_lazy

from .base import NotRunnable

BINARY = "hammerdbcli"
WORKLOADS = ("tpcc",)
REASON = "HammerDB TPC-C cannot run on these workers (HammerDB and SQL Server are not installed)."
LABEL = gettext_lazy("HammerDB (not runnable here)")
RUNNABLE = False
# Why a published row it measured cannot be reproduced here (runs/reproduce.py).
NOT_RUNNABLE_HERE = gettext_lazy("This row was measured with HammerDB against SQL Server; these workers have neither, "
                                 "so it cannot be reproduced here.")
INTERVAL_LATENCY = None
BYTES_PER_ROW = LOAD_ROWS_PER_S = {}


PARAMETERS = ()


def rule_errors(workload, params):
    return {}


def data_rows(params):
    return 0


def tables_created(params):
    return []


def data_setup(params, threads):
    return {}


def reproduction(methodology, result):
    return {}, None


def data_differences(methodology, result, params):
    return []


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
