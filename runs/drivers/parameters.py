"""A run's parameters as declared: what each is (kind, limits, labels, help), the ones every tool takes (COMMON), and the
checks the drivers make of the values their argv is built from. Each driver declares its own tool's parameters
(PARAMETERS in runs/drivers/<tool>.py); runs/drivers/__init__.py puts them together and runs/params.py validates a launch
against them. Nothing here imports the rest of runs: the drivers import it."""

import math
from dataclasses import dataclass

from django.utils.translation import gettext_lazy

# An offered rate above this is a typo, not a benchmark; a latency bound below this is below what the tools resolve
# (pgbench logs whole microseconds).
MAX_RATE_TPS = 10_000_000
MIN_LATENCY_LIMIT_MS = 0.01
MAX_SWEEP = 10
SECTIONS = ("run", "data", "client", "capacity")  # the order parameters are listed in: forms, pages, the API


@dataclass(frozen=True)
class Parameter:
    """One parameter of a run, as the profile states it and a launch may override it. The run form, the run page,
    the API's overrides object and profile, and the rules below all read this one list."""

    name: str
    label: str  # as the run page lists it
    kind: str = "int"  # "int" | "number" (a decimal, 3 places at most) | "sweep" (thread counts) | "bool"
    limits: tuple = None  # (minimum, maximum) of an int, bounded so a typo cannot start 10^6 connections
    tools: frozenset = frozenset()  # the tools that take it (set by runs/drivers/__init__.py: each driver's own, or every tool)
    section: str = "run"  # where it stands among the others (SECTIONS): the run, its data, its client, a capacity search
    form_label: str = ""  # the form's label when it says more than the page's (which tool takes it)
    help: str = ""  # the form's help
    api_help: str = ""  # the API's description of the override
    empty_means_default: bool = False  # jobs: empty is "as many as clients", not an error
    on_profile: bool = True  # a BenchmarkProfile field (client_hosts, rate_tps, latency_limit_ms: the launch's alone)
    default: object = None  # the value of a parameter that is not on the profile when the launch does not give it

    @property
    def field_label(self):
        return self.form_label or self.label


COMMON = (
    Parameter("threads", gettext_lazy("threads / clients"), limits=(1, 1024), api_help="sysbench --threads / pgbench -c."),
    Parameter("thread_sweep", gettext_lazy("thread sweep"), kind="sweep",
              help=gettext_lazy("e.g. 8, 16, 32, 64, 128: one step per thread count. Empty: one step with the threads above."),
              api_help="Thread counts, each once; one run step per count."),
    Parameter("duration_s", gettext_lazy("duration (s)"), limits=(1, 86400)),
    Parameter("report_interval_s", gettext_lazy("report interval (s)"), limits=(1, 60)),
    Parameter("warmup_s", gettext_lazy("warm-up (s)"), limits=(0, 3600)),
    Parameter("prepared", gettext_lazy("prepared statements"), kind="bool", api_help="Prepared statements.", section="client"),
    Parameter("client_hosts", gettext_lazy("client hosts"), limits=(1, 64), on_profile=False, help=gettext_lazy(
        "Benchmark workers of the target's pool driving the run together, the threads and an offered rate split between "
        "them (1: one client)."),
        api_help="Benchmark workers of the target's pool driving the run together (at most the pool's limit); the threads "
                 "and an offered rate (rate_tps) are split between them.", default=1, section="client"),
    # Open loop (docs/runs.md): the tool offers transactions on a fixed schedule instead of sending the next one when the
    # last returns, and each latency counts from the transaction's scheduled start. Empty: closed loop, as before.
    Parameter("rate_tps", gettext_lazy("offered rate (TPS)"), limits=(1, MAX_RATE_TPS), on_profile=False,
              empty_means_default=True, form_label=gettext_lazy("offered rate, TPS (open loop)"), help=gettext_lazy(
                  "Open loop: transactions a second offered on a fixed schedule (pgbench -R, sysbench --rate), each latency "
                  "measured from its scheduled start. Empty: closed loop (each thread sends its next transaction when the last returns)."),
              api_help="Open loop: transactions a second offered on a schedule (pgbench -R, sysbench --rate); latency from "
                       "each transaction's scheduled start. Null or absent: closed loop. With client_hosts N, each client "
                       "offers rate / N (the first rate mod N clients one more), at least 1: the rate at least client_hosts.", section="client"),
    # A capacity search (runs/capacity.py): steps of offered rate from rate_tps, by capacity_factor up to
    # capacity_max_tps, then narrowing; each step judged against the p95 bound and the budget.
    Parameter("capacity_bound_ms", gettext_lazy("capacity: p95 bound (ms)"), kind="number",
              limits=(MIN_LATENCY_LIMIT_MS, 3_600_000), on_profile=False, empty_means_default=True, help=gettext_lazy(
                  "A capacity search: the highest offered rate whose p95, from the scheduled start, stays at or below this "
                  "bound. Needs the offered rate (the first step), the factor and the maximum. Empty: no search."),
              api_help="A capacity search: the p95 bound in ms (with rate_tps as the first rate, capacity_factor and "
                       "capacity_max_tps). Null or absent: no search.", section="capacity"),
    Parameter("capacity_factor", gettext_lazy("capacity: rate factor"), kind="number", limits=(1.1, 100), on_profile=False,
              empty_means_default=True, help=gettext_lazy("Each next step offers the last passing rate times this."),
              api_help="Each next step offers the last passing rate times this (1.1 to 100).", section="capacity"),
    Parameter("capacity_max_tps", gettext_lazy("capacity: maximum rate (TPS)"), limits=(1, MAX_RATE_TPS), on_profile=False,
              empty_means_default=True, help=gettext_lazy("The search offers no more than this."),
              api_help="The highest rate the search offers.", section="capacity"),
    Parameter("capacity_budget_pct", gettext_lazy("capacity: late, skipped and failed budget (%)"), kind="number",
              limits=(0.001, 100), on_profile=False, empty_means_default=True,
              help=gettext_lazy("A step passes with late + skipped, and failed, transactions up to this share. Empty: 1 %."),
              api_help="A step passes with late + skipped, and failed, transactions up to this share (%). Default 1.", section="capacity"),
)


def thread_steps(params):
    """The thread counts a run measures, one step each: the sweep, or the single thread count."""
    return params.get("thread_sweep") or [params.get("threads")]


def argv_problems(params, declared):
    """The stored parameters a tool would be given that are not what a launch lets through (a row written around it):
    the names of those fields, by the declarations `declared` ({name: Parameter}: the common ones and the tool's own)."""
    bad = []
    threads = declared["threads"].limits
    for name, value in params.items():
        parameter = declared.get(name)
        if parameter is None or value is None:
            continue
        if parameter.kind == "bool":
            ok = isinstance(value, bool)
        elif parameter.kind == "number":
            lo, hi = parameter.limits
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and lo <= value <= hi
        elif parameter.kind == "sweep":
            ok = isinstance(value, list) and len(value) <= MAX_SWEEP and all(
                isinstance(v, int) and not isinstance(v, bool) and threads[0] <= v <= threads[1] for v in value)
        else:
            lo, hi = parameter.limits
            ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
        if not ok:
            bad.append(name)
    return bad
