"""Tool drivers: pure functions that build argument vectors (never a shell string) and parse the
tools' output. Nothing here starts a process or touches the database; runs/runner.py does.

A driver module provides:
  WORKLOADS                                          the workload names a profile may give (nothing else reaches argv)
  plan(conn, params, workdir) -> list[Step]          the commands of a run, in order
  secret_files(conn, password) -> {name: content}    written 0600 into the run's private workdir
  secret_env(conn, password) -> {name: value}        added to the tool's environment only
  tls_refusal(conn, tls) -> str                      why the tool cannot honour the TLS mode ("" if it can)
  tls_env(conn, tls, workdir) / tls_files(conn, tls) the TLS settings as environment and work-directory files
  parse_interval(line, stream) -> dict | None        one progress line -> one sample
  parse_summary(stdout, stderr) -> dict              the tool's final report
  parse_latency(stdout, stderr, log_lines, argv) -> dict  p50/p95/p99/max and histogram of a run step (latency.py)
  failure_reason(stdout, stderr) -> str              the tool's own words for why it failed
  version_argv() / parse_version(text)
and what the tool is to the rest of the project (so that nothing outside runs/drivers/ names a tool):
  LABEL, RUNNABLE, NOT_RUNNABLE_HERE, INTERVAL_LATENCY ("p95" | "avg")   its name as shown, whether it runs here
                                                     (and why not), the latency of its interval lines
  BYTES_PER_ROW / LOAD_ROWS_PER_S {engine: n}, data_rows(params)   the footprint's estimate (runs/footprint.py)
  tables_created(params)                             what its cleanup drops (runs/leftovers.py)
  data_setup(params, threads)                        what sizes its data, in a published set-up (runs/publish.py)
  reproduction(methodology, result), data_differences(methodology, result, params)   runs/reproduce.py
  PARAMETERS, rule_errors(workload, params)          its own parameters (runs/drivers/parameters.py) and their rules
"""

from dataclasses import replace

from . import hammerdb, openloop, pgbench, sysbench  # noqa: F401 - openloop: the engine's too
from .base import (  # noqa: F401 - the drivers' shared parts, imported from the package by the engine
    CA_FILE,
    CERT_FILE,
    KEY_FILE,
    MASK,
    BadArgument,
    Connection,
    NotRunnable,
    checked_workload,
    Step,
    judge_step,
    libpq_tls_env,
    libpq_tls_files,
    redact,
    to_float,
)
from .parameters import COMMON, SECTIONS

DRIVERS = {"sysbench": sysbench, "pgbench": pgbench, "hammerdb": hammerdb}  # the one list of tools
RUNNABLE_TOOLS = [name for name, driver in DRIVERS.items() if driver.RUNNABLE]  # forms, views, profiles' querysets
TOOL_CHOICES = [(name, driver.LABEL) for name, driver in DRIVERS.items()]  # runs.models.Tool
RUNNABLE_TOOL_CHOICES = [(name, label) for name, label in TOOL_CHOICES if name in RUNNABLE_TOOLS]

# Every parameter of a run, in SECTIONS order: the common ones (every runnable tool takes them) and each driver's own.
PARAMETERS = tuple(sorted(
    [replace(p, tools=frozenset(RUNNABLE_TOOLS)) for p in COMMON]
    + [replace(p, tools=frozenset({name})) for name, driver in DRIVERS.items() for p in driver.PARAMETERS],
    key=lambda p: SECTIONS.index(p.section)))  # sorted() is stable: the declarations' order within a section


def rule_errors(tool, workload, params):
    """The rules between the parameters of `tool`'s own, {field: message} (its driver's rule_errors)."""
    return DRIVERS[tool].rule_errors(workload, params)


def get_driver(tool):
    return DRIVERS[tool]


def workloads(tool):
    """The workloads a profile of `tool` may name (each driver's WORKLOADS: what the tool bundles or the project
    ships), () for an unknown tool."""
    driver = DRIVERS.get(tool)
    return tuple(driver.WORKLOADS) if driver else ()
