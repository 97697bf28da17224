"""Comparing 2 to 6 runs (the one definition used by the compare page and the API): which runs, what
differs between them aspect by aspect (parameters, tool and server versions, the server settings that
differ, client, target size), their results against a baseline run (per run, and for sweeps per thread
count), and the per-interval samples to overlay (x = seconds since the step started)."""

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from config.limits import is_id

from . import stats
from .models import Run, RunState, Sample
from .params import is_capacity, thread_steps

MIN_RUNS, MAX_RUNS = 2, 6

# The run parameters, in the order they are shown (the same labels as the run page's table).
PARAMETERS = {
    "workload": gettext_lazy("workload"), "threads": gettext_lazy("threads / clients"),
    "thread_sweep": gettext_lazy("thread sweep"), "duration_s": gettext_lazy("duration (s)"),
    "report_interval_s": gettext_lazy("report interval (s)"), "warmup_s": gettext_lazy("warm-up (s)"),
    "tables": gettext_lazy("tables"), "rows_per_table": gettext_lazy("rows per table"), "scale": gettext_lazy("scale"),
    "range": gettext_lazy("range"), "jobs": gettext_lazy("jobs (-j)"), "prepared": gettext_lazy("prepared statements"),
    "client_hosts": gettext_lazy("client hosts"),
    # open loop and capacity search (issue 35): shown when a compared run has them (a closed-loop run: "—")
    "rate_tps": gettext_lazy("offered rate (TPS)"), "latency_limit_ms": gettext_lazy("latency limit (ms)"),
    "capacity_bound_ms": gettext_lazy("capacity: p95 bound (ms)"),
}


def parse_selection(run_ids, base=None):
    """The runs named by `run` (ids, 2 to 6, in the order given) and the index of the baseline among
    them (`base`, a run id; default the earliest run). Raises ValidationError naming the parameter."""
    errors = {}
    ids = []
    for raw in run_ids:
        if not is_id(raw):
            errors.setdefault("run", []).append(_("'%(value)s' is not a run id (a whole number).") % {"value": raw})
        elif int(raw) not in ids:
            ids.append(int(raw))
    if not errors and not MIN_RUNS <= len(ids) <= MAX_RUNS:
        errors["run"] = [_("Choose between %(min)d and %(max)d different runs (got %(n)d).") % {
            "min": MIN_RUNS, "max": MAX_RUNS, "n": len(ids)}]
    if errors:
        raise ValidationError(errors)
    runs = {r.pk: r for r in Run.objects.select_related("target__flavor", "profile").filter(pk__in=ids)}
    missing = [i for i in ids if i not in runs]
    if missing:
        raise ValidationError({"run": [_("No run %(id)s.") % {"id": i} for i in missing]})
    runs = [runs[i] for i in ids]
    # Default baseline: the earliest run (what the others changed from).
    base_index = min(range(len(runs)), key=lambda i: (runs[i].created_at, runs[i].pk))
    if base not in (None, ""):
        if not str(base).isdigit() or int(base) not in ids:
            raise ValidationError({"base": [_("The baseline must be one of the compared runs (%(ids)s).") % {
                "ids": ", ".join(str(i) for i in ids)}]})
        base_index = ids.index(int(base))
    return runs, base_index


def _show(value):
    if value in (None, "", []):
        return "—"
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, int) and value >= 10_000:
        return f"{value:,}"
    return str(value)


@dataclass
class Aspect:
    key: str
    group: str  # parameter, run, server_setting, client, target
    label: str
    values: list = field(default_factory=list)
    folded: bool = False  # a server setting only some of the servers have (another engine or version): folded on the page

    @property
    def differs(self):
        return len(set(self.values)) > 1


def aspects(runs):
    """Every aspect of the set-up, one value per run (as shown). Server settings: only those that differ
    (hundreds are the same), with the settings hash as one aspect."""
    rows = []

    def add(key, group, label, getter):
        rows.append(Aspect(key, group, str(label), [_show(getter(r)) for r in runs]))

    add("target", "target", gettext_lazy("target"), lambda r: r.target.name)
    add("profile", "run", gettext_lazy("profile"), lambda r: r.profile.slug)
    add("tool", "run", gettext_lazy("tool"), lambda r: r.profile.tool)
    for name, label in PARAMETERS.items():
        if any(name in (r.params or {}) for r in runs):
            add(name, "parameter", label, lambda r, n=name: (r.params or {}).get(n, 1 if n == "client_hosts" else None))
    add("tool_version", "run", gettext_lazy("tool version"), lambda r: r.tool_version)
    add("server_version", "run", gettext_lazy("server version"), lambda r: r.server_version)
    add("server_settings_hash", "run", gettext_lazy("server settings (sha256)"), lambda r: r.server_settings_hash[:12])
    names = sorted(set().union(*[(r.server_settings or {}).keys() for r in runs]))
    settings_rows = []
    for name in names:
        values = [(r.server_settings or {}).get(name) for r in runs]
        if len({str(v) for v in values}) > 1:
            on_every_server = all(name in (r.server_settings or {}) for r in runs if r.server_settings)
            settings_rows.append(Aspect(f"setting:{name}", "server_setting", name, [_show(v) for v in values],
                                        folded=not on_every_server))
    # Settings every server has, with different values, first; those only some servers have (hundreds when the
    # engines differ) after them, folded.
    rows.extend(sorted(settings_rows, key=lambda a: a.folded))
    add("client_host", "client", gettext_lazy("client host"), lambda r: r.client_host)
    add("client_cores", "client", gettext_lazy("client cores"), lambda r: r.client_cores)
    add("client_cpu", "client", gettext_lazy("client CPU"), lambda r: (r.client_info or {}).get("cpu_model"))
    add("vcpus", "target", gettext_lazy("vCPUs (declared)"), lambda r: r.target.declared_vcpus)
    add("memory_gb", "target", gettext_lazy("memory GB (declared)"), lambda r: r.target.declared_memory_gb)
    return rows


def pct(value, base):
    """Percent difference of value against base (None when either is missing or base is 0)."""
    if value is None or not base:
        return None
    return round(100.0 * (float(value) - float(base)) / float(base), 1)


def _steps(run):
    """{threads: the step's summary} as the tool reported each step (with its interval, runs/actions.py)."""
    steps = (run.summary or {}).get("steps") or ([run.summary] if (run.summary or {}).get("tps") is not None else [])
    return {s.get("threads") or (run.params or {}).get("threads"): s for s in steps}


def noise_verdict(base_ci, other_ci, value, base_value):
    """The % of `value` against `base_value` and whether it is beyond noise (runs/stats.py difference: the 95 %
    interval of the difference, Welch's t on the two runs' batch means, excludes 0). `verdict`: "beyond_noise",
    "within_noise" or "unknown" (a run with too few samples for an interval)."""
    diff = stats.difference(stats.Interval.from_dict(base_ci), stats.Interval.from_dict(other_ci))
    out = {"pct": pct(value, base_value), "difference": diff.as_dict() if diff else None}
    out["verdict"] = "unknown" if diff is None else "beyond_noise" if diff.beyond_noise else "within_noise"
    return out


def _trusted_latency(run):
    """The run's latency, unless Run.latency_caveat says it was measured wrong (then nothing to compare)."""
    return {} if run.latency_caveat else (run.insight or {}).get("latency") or {}


def results(runs, base_index):
    """Per run: TPS, QPS, p95 (ms) as measured and in % against the baseline; per thread count (sweeps
    matched by thread count): TPS and % against the baseline's TPS at the same count."""
    base = runs[base_index]
    base_summary, base_latency = base.summary or {}, _trusted_latency(base)
    if is_capacity(base.params):  # a capacity search's TPS and latency are its last step's: compared in capacities()
        base_summary, base_latency = {}, {}
    per_run = []
    for run in runs:
        summary, lat = run.summary or {}, _trusted_latency(run)
        if is_capacity(run.params):
            summary, lat = {}, {}
        noise = noise_verdict(base_summary.get("tps_ci"), summary.get("tps_ci"), summary.get("tps"), base_summary.get("tps"))
        per_run.append({
            "run": run.pk, "state": run.state, "is_base": run is base, "tps": summary.get("tps"), "qps": summary.get("qps"),
            "tps_ci": summary.get("tps_ci"), "tps_noise": None if run is base else noise,
            "p95_ms": lat.get("p95_ms"), "tps_pct": pct(summary.get("tps"), base_summary.get("tps")),
            "qps_pct": pct(summary.get("qps"), base_summary.get("qps")), "p95_pct": pct(lat.get("p95_ms"), base_latency.get("p95_ms")),
            "client_bound": run.client_bound, "latency_caveat": run.latency_caveat,
        })
    steps = [_steps(r) for r in runs]
    counts = sorted({t for s in steps for t in s if t is not None})
    by_threads = []
    for t in counts:
        base_step = steps[base_index].get(t) or {}
        cells = []
        for r, s in zip(runs, steps):
            step = s.get(t) or {}
            noise = noise_verdict(base_step.get("tps_ci"), step.get("tps_ci"), step.get("tps"), base_step.get("tps"))
            cells.append({"run": r.pk, "tps": step.get("tps"), "tps_pct": noise["pct"], "tps_ci": step.get("tps_ci"),
                          "tps_noise": None if r is runs[base_index] or not step else noise})
        by_threads.append({"threads": t, "runs": cells})
    return per_run, by_threads


def _capacity(run):
    return (run.summary or {}).get("capacity") if is_capacity(run.params) else None


def capacities(runs, base_index):
    """Capacity searches side by side (issue 35): per run its p95 bound, the highest rate it sustained (with % against
    the baseline's only when both searched under the same bound), the first failing rate and why; `capacity` false
    for a run that is not a search. [] when none of the runs is one."""
    if not any(_capacity(r) for r in runs):
        return []
    base = _capacity(runs[base_index])
    out = []
    for i, run in enumerate(runs):
        cap = _capacity(run)
        if not cap:
            out.append({"run": run.pk, "capacity": False})
            continue
        same_bound = base is not None and i != base_index and base.get("bound_ms") == cap.get("bound_ms")
        out.append({"run": run.pk, "capacity": True, "is_base": i == base_index, "bound_ms": cap.get("bound_ms"),
                    "sustained_tps": cap.get("sustained_tps"), "sustained_p95_ms": cap.get("sustained_p95_ms"),
                    "sustained_pct": pct(cap.get("sustained_tps"), base.get("sustained_tps")) if same_bound else None,
                    "failed_tps": cap.get("failed_tps"), "failed_reason": cap.get("failed_reason") or "",
                    "steps": len(cap.get("steps") or [])})
    return out


def warnings(runs):
    """What makes a % between these runs something other than a change of one set-up: other engines, other tools."""
    found = []
    engines = {r.target.get_engine_display() for r in runs}
    if len(engines) > 1:
        found.append({"key": "engines", "message": _(
            "These runs measured different engines (%(engines)s): their numbers are not one set-up's change, and the "
            "server settings are another engine's.") % {"engines": ", ".join(sorted(map(str, engines)))}})
    tools = {r.profile.tool for r in runs}
    if len(tools) > 1:
        found.append({"key": "tools", "message": _(
            "These runs used different tools (%(tools)s), whose transactions are different work: TPS is not "
            "comparable between them.") % {"tools": ", ".join(sorted(tools))}})
    searches = [_capacity(r) for r in runs]
    bounds = sorted({c.get("bound_ms") for c in searches if c})
    if len(bounds) > 1:
        found.append({"key": "bounds", "message": _(
            "These capacity searches used different p95 bounds (%(bounds)s ms): a rate sustained under a looser bound "
            "is not a faster server, so no %% is given between them.") % {"bounds": ", ".join(map(str, bounds))}})
    if any(searches) and not all(searches):
        found.append({"key": "loops", "message": _(
            "Only some of these runs are capacity searches (open-loop, the rate sustained under a p95 bound); the "
            "others' TPS is another measure, so their results are not set against the searches'.")})
    return found


def samples(runs):
    """The tool's interval samples of every run (warm-up left out), grouped by run and step, in one query."""
    out = {r.pk: {} for r in runs}
    untrusted = {r.pk for r in runs if r.latency_caveat}  # their latency measured wrong: drawn as gaps
    rows = (Sample.objects.filter(run__in=[r.pk for r in runs], warmup=False).order_by("run_id", "step", "id")
            .values_list("run_id", "step", "threads", "t", "tps", "latency_p95_ms", "latency_avg_ms"))
    for run_id, step, threads, t, tps, p95, avg in rows:
        series = out[run_id].setdefault(step, {"step": step, "threads": threads, "points": []})
        series["points"].append([t, tps, None if run_id in untrusted else p95 if p95 is not None else avg])
    # sysbench prints each interval's p95, pgbench its average latency.
    return [{"run": r.pk, "latency": "p95" if r.profile.tool == "sysbench" else "avg", "steps": list(out[r.pk].values())}
            for r in runs]


def compare(runs, base_index):
    """Everything the page and the API show, as plain data."""
    rows = aspects(runs)
    per_run, by_threads = results(runs, base_index)
    return {
        "runs": [{"id": r.pk, "target": r.target.name, "profile": r.profile.slug, "state": r.state,
                  "finished_at": r.finished_at, "threads": thread_steps(r.params or {})} for r in runs],
        "base": runs[base_index].pk,
        "warnings": warnings(runs), "noise_method": stats.WELCH_BATCH_MEANS,
        "differences": [{"key": a.key, "group": a.group, "label": a.label, "values": a.values, "folded": a.folded}
                        for a in rows if a.differs],
        "same": [{"key": a.key, "group": a.group, "label": a.label, "value": a.values[0]} for a in rows if not a.differs],
        "results": per_run, "by_threads": by_threads, "capacity": capacities(runs, base_index),
        "unfinished": [r.pk for r in runs if r.state != RunState.SUCCEEDED],
    }
