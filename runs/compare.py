"""Comparing 2 to 6 entries, each a run or a repeat group (a series of runs of one set-up): the one definition
used by the compare page and the API. Which entries, what differs between their set-ups aspect by aspect
(parameters, tool and server versions, the server settings that differ, client, target size), each entry's
series figures (n, mean TPS, its interval over the runs, coefficient of variation) and its verdict against the
baseline (runs/stats.py: ratio of geometric means, paired on blocks when interleaved, Holm-adjusted across the
comparisons shown), per run and for sweeps per thread count, and the per-interval samples to overlay
(x = seconds since the step started)."""

from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from config.limits import is_id
from whitepaper.choices import NOT_STATED_MARK

from . import stats
from .drivers import get_driver
from .models import RepeatGroup, Run, RunState, Sample
from .params import is_capacity, thread_steps

MIN_RUNS, MAX_RUNS = 2, 6
DEPRECATED_NOISE_METHOD = "deprecated: see comparisons[].method"

# The run parameters, in the order they are shown (the same labels as the run page's table).
PARAMETERS = {
    "workload": gettext_lazy("workload"), "threads": gettext_lazy("threads / clients"),
    "thread_sweep": gettext_lazy("thread sweep"), "duration_s": gettext_lazy("duration (s)"),
    "report_interval_s": gettext_lazy("report interval (s)"), "warmup_s": gettext_lazy("warm-up (s)"),
    "tables": gettext_lazy("tables"), "rows_per_table": gettext_lazy("rows per table"), "scale": gettext_lazy("scale"),
    "range": gettext_lazy("range"), "jobs": gettext_lazy("jobs (-j)"), "prepared": gettext_lazy("prepared statements"),
    "client_hosts": gettext_lazy("client hosts"),
    # open loop and capacity search (issue 35): shown when a compared run has them (a closed-loop run: the not-stated mark)
    "rate_tps": gettext_lazy("offered rate (TPS)"), "latency_limit_ms": gettext_lazy("latency limit (ms)"),
    "capacity_bound_ms": gettext_lazy("capacity: p95 bound (ms)"),
}


@dataclass
class Entry:
    """One compared entry: a run (a series of one) or a repeat group, with its runs and the run that stands for
    its set-up on the page (a group's first succeeded run, else its first)."""
    kind: str  # "run" or "group"
    id: int
    runs: list
    launch: str = ""
    position: int | None = None  # its set-up's place in an interleaved launch (0: the baseline)
    include_disturbed: bool = False

    @property
    def counted(self):
        """The runs whose TPS counts: a run whose client host was loaded beyond its cores (Run.disturbed) only when
        asked for (issue 46.6)."""
        return [r for r in self.runs if self.include_disturbed or not r.disturbed]

    @property
    def disturbed(self):
        return [r.pk for r in self.runs if r.disturbed]

    @property
    def rep(self):
        return next((r for r in self.runs if r.state == RunState.SUCCEEDED), self.runs[0])

    @property
    def key(self):
        return f"{self.kind}:{self.id}"


@dataclass
class Selection:
    entries: list
    base_index: int
    include_disturbed: bool = False

    @property
    def runs(self):
        return [e.rep for e in self.entries]


def _ids(raw_values, name, errors):
    ids = []
    for raw in raw_values:
        if not is_id(raw):
            errors.setdefault(name, []).append(_("'%(value)s' is not a %(what)s id (a whole number).") % {
                "value": raw, "what": name})
        elif int(raw) not in ids:
            ids.append(int(raw))
    return ids


def parse_selection(run_ids, base=None, group_ids=(), include_disturbed=None):
    """The entries named by `run` and `group` (ids, 2 to 6 entries in all, runs first, each in the order given) and
    the index of the baseline among them (`base`: an entry's id, written `run:<id>` or `group:<id>` when both
    kinds are compared; default the earliest entry); `include_disturbed` "true" counts the runs whose client host
    was loaded beyond its cores (default "false"). Raises ValidationError naming the parameter."""
    errors = {}
    if include_disturbed not in (None, "", "true", "false"):
        errors["include_disturbed"] = [_("include_disturbed must be true or false.")]
    include = include_disturbed == "true"
    run_ids, group_ids = _ids(run_ids, "run", errors), _ids(group_ids, "group", errors)
    count = len(run_ids) + len(group_ids)
    if not errors and not MIN_RUNS <= count <= MAX_RUNS:
        errors["run" if not group_ids else "group"] = [_("Choose between %(min)d and %(max)d different runs or repeat groups "
                                                         "(got %(n)d).") % {"min": MIN_RUNS, "max": MAX_RUNS, "n": count}]
    if errors:
        raise ValidationError(errors)
    related = ("target__flavor", "profile")
    runs = {r.pk: r for r in Run.objects.select_related(*related).filter(pk__in=run_ids)}
    groups = {g.pk: g for g in RepeatGroup.objects.filter(pk__in=group_ids)}
    members = {}
    for r in Run.objects.select_related(*related).filter(repeat_group_id__in=group_ids).order_by("repeat_index", "pk"):
        members.setdefault(r.repeat_group_id, []).append(r)
    missing = {"run": [_("No run %(id)s.") % {"id": i} for i in run_ids if i not in runs],
               "group": [_("No repeat group %(id)s.") % {"id": i} for i in group_ids if i not in groups or i not in members]}
    if any(missing.values()):
        raise ValidationError({k: v for k, v in missing.items() if v})
    entries = ([Entry("run", i, [runs[i]], include_disturbed=include) for i in run_ids]
               + [Entry("group", i, members[i], groups[i].launch, groups[i].position, include) for i in group_ids])
    # Default baseline: the earliest entry (what the others changed from); in an interleaved launch its first set-up
    # (its blocks shuffle which set-up's run was created first).
    if _paired(entries):
        base_index = min(range(len(entries)), key=lambda i: (entries[i].position is None, entries[i].position, entries[i].id))
    else:
        base_index = min(range(len(entries)), key=lambda i: (entries[i].runs[0].created_at, entries[i].runs[0].pk))
    if base not in (None, ""):
        kind, _sep, number = str(base).rpartition(":")
        kinds = {e.kind for e in entries}
        matches = [i for i, e in enumerate(entries)
                   if number.isdigit() and e.id == int(number) and (e.kind == kind or (not kind and len(kinds) == 1))]
        if len(matches) != 1:
            raise ValidationError({"base": [_("The baseline must be one of the compared entries (%(ids)s).") % {
                "ids": ", ".join(e.key if len(kinds) > 1 else str(e.id) for e in entries)}]})
        base_index = matches[0]
    return Selection(entries, base_index, include)


def _show(value):
    if value in (None, "", []):
        return NOT_STATED_MARK
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


def _trusted_latency(run):
    """The run's latency, unless Run.latency_caveat says it was measured wrong (then nothing to compare)."""
    return {} if run.latency_caveat else (run.insight or {}).get("latency") or {}


def _measured(run):
    """A run whose TPS counts in a series: succeeded, not a capacity search (its TPS is its last step's)."""
    return run.state == RunState.SUCCEEDED and not is_capacity(run.params)


def _tps(run, threads=None):
    """A counted run's TPS, or its step's at `threads` (a sweep); None otherwise."""
    if not _measured(run):
        return None
    if threads is None:
        return (run.summary or {}).get("tps")
    return (_steps(run).get(threads) or {}).get("tps")


def _paired(entries):
    """The analysis pairs runs block by block when every entry is a group of one interleaved launch."""
    launches = {e.launch for e in entries}
    return all(e.kind == "group" for e in entries) and len(launches) == 1 and "" not in launches


def _values(entry, paired, threads=None):
    if paired:
        return {r.block: v for r in entry.counted if r.block is not None and (v := _tps(r, threads)) is not None}
    return [v for r in entry.counted if (v := _tps(r, threads)) is not None]


SERIES_FIELDS = ("n", "mean_tps", "ci_low_tps", "ci_high_tps", "cv", "cv_pct", "mean_qps", "counted_runs")


def series_figures(entry, threads=None):
    """An entry's series: n (counted runs), mean TPS with its 95 % interval over the runs (none with n = 1) and the
    coefficient of variation, and the runs counted."""
    counted = [r for r in entry.counted if _tps(r, threads) is not None]
    found = stats.series([_tps(r, threads) for r in counted])
    qps = [q for r in counted if (q := (r.summary or {}).get("qps")) is not None] if threads is None else []
    return {"n": len(counted), "mean_tps": round(found.mean, 6) if found else None,  # a single run: exactly its TPS
            "ci_low_tps": round(found.low, 2) if found and found.low is not None else None,
            "ci_high_tps": round(found.high, 2) if found and found.high is not None else None,
            "cv": round(found.cv, 4) if found and found.cv is not None else None,
            "cv_pct": round(100 * found.cv, 1) if found and found.cv is not None else None,
            "mean_qps": round(sum(qps) / len(qps), 2) if qps else None, "counted_runs": [r.pk for r in counted]}


def deprecated_noise(value, base_value):
    """`tps_noise` as API 2.x answered it, deprecated (sunset 2027-03-01): its verdict came from the noise inside one
    run, which most of a benchmark's variation is not, so it now always says "unknown"; `comparison` is the verdict."""
    return {"pct": pct(value, base_value), "difference": None, "verdict": "unknown"}


def verdicts(entries, base_index):
    """Each entry's comparison against the baseline (None for the baseline), Holm-adjusted across them."""
    paired = _paired(entries)
    base = _values(entries[base_index], paired)
    others = [i for i in range(len(entries)) if i != base_index]
    found = stats.compare(base, [_values(entries[i], paired) for i in others],
                          threshold_pct=settings.RUNS_PRACTICAL_THRESHOLD_PCT, blocks=paired)
    out = [None] * len(entries)
    for i, c in zip(others, found):
        out[i] = c.as_dict()
    return out


def results(selection):
    """Per entry: its series figures, QPS and p95 (ms) with % against the baseline's, and its verdict against the
    baseline; per thread count (sweeps matched by thread count): each entry's TPS there and its verdict against the
    baseline's at the same count, Holm-adjusted across the table's cells."""
    entries, base_index = selection.entries, selection.base_index
    base = entries[base_index]
    comparisons = verdicts(entries, base_index)
    base_lat = _trusted_latency(base.rep) if _measured(base.rep) else {}
    base_figures = series_figures(base)
    per_entry = []
    for entry, comparison in zip(entries, comparisons):
        run, figures = entry.rep, series_figures(entry)
        lat = _trusted_latency(run) if _measured(run) else {}
        per_entry.append({
            "entry": entry.key, "kind": entry.kind, "id": entry.id, "run": run.pk, "runs": [r.pk for r in entry.runs],
            "state": run.state, "is_base": entry is base, **figures,
            # A single run's TPS interval is its stability check (did its TPS hold steady?), not a result's uncertainty.
            "stability": (stability := (run.summary or {}).get("tps_ci") if entry.kind == "run" and _measured(run) else None),
            "tps_ci": stability,  # its old name (API 2.x)
            "comparison": comparison, "tps": figures["mean_tps"], "tps_pct": pct(figures["mean_tps"], base_figures["mean_tps"]),
            "tps_noise": None if entry is base else deprecated_noise(figures["mean_tps"], base_figures["mean_tps"]),
            "qps": figures["mean_qps"], "qps_pct": pct(figures["mean_qps"], base_figures["mean_qps"]),
            "p95_ms": lat.get("p95_ms") if entry.kind == "run" else None,
            "p95_pct": pct(lat.get("p95_ms"), base_lat.get("p95_ms")) if entry.kind == "run" else None,
            "client_bound": any(r.client_bound for r in entry.runs), "latency_caveat": str(run.latency_caveat or ""),
            "disturbed": entry.disturbed, "disturbed_counted": entry.include_disturbed and bool(entry.disturbed),
        })
    paired = _paired(entries)
    counts = sorted({t for e in entries for r in e.counted if _measured(r) for t in _steps(r) if t is not None})
    cells = [(t, i) for t in counts for i in range(len(entries)) if i != base_index]
    found = iter(stats.compare_pairs(
        [(_values(base, paired, t), _values(entries[i], paired, t)) for t, i in cells],
        threshold_pct=settings.RUNS_PRACTICAL_THRESHOLD_PCT, blocks=paired))
    verdict_of = {cell: next(found).as_dict() for cell in cells}
    by_threads = []
    for t in counts:
        figures = [series_figures(e, t) for e in entries]
        base_tps = figures[base_index]["mean_tps"]
        by_threads.append({"threads": t, "runs": [
            {"entry": e.key, "run": e.rep.pk, **{k: v for k, v in f.items() if k != "counted_runs"}, "tps": f["mean_tps"],
             "tps_pct": pct(f["mean_tps"], base_tps), "comparison": verdict_of.get((t, i)),
             "tps_noise": None if i == base_index or f["mean_tps"] is None else deprecated_noise(f["mean_tps"], base_tps)}
            for i, (e, f) in enumerate(zip(entries, figures))]})
    return per_entry, by_threads


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
    # Each tool's interval latency (sysbench prints the interval's p95, pgbench its average).
    return [{"run": r.pk, "latency": get_driver(r.profile.tool).INTERVAL_LATENCY, "steps": list(out[r.pk].values())}
            for r in runs]


def compare(selection):
    """Everything the page and the API show, as plain data."""
    runs, base_index = selection.runs, selection.base_index
    rows = aspects(runs)
    per_entry, by_threads = results(selection)
    return {
        "entries": [{"entry": e.key, "kind": e.kind, "id": e.id, "runs": [r.pk for r in e.runs], "target": e.rep.target.name,
                     "profile": e.rep.profile.slug, "state": e.rep.state, "finished_at": e.rep.finished_at,
                     "threads": thread_steps(e.rep.params or {}), "interleaved": bool(e.launch), "disturbed": e.disturbed,
                     **{k: row[k] for k in SERIES_FIELDS}} for e, row in zip(selection.entries, per_entry)],
        "base": selection.entries[base_index].id, "base_entry": selection.entries[base_index].key,
        "include_disturbed": selection.include_disturbed,
        "paired": _paired(selection.entries),
        "comparisons": [{"entry": row["entry"], "base": selection.entries[base_index].key, **row["comparison"]}
                        for row in per_entry if row["comparison"]],
        "rule": rule(),
        "noise_method": DEPRECATED_NOISE_METHOD,
        "warnings": warnings(runs),
        "differences": [{"key": a.key, "group": a.group, "label": a.label, "values": a.values, "folded": a.folded}
                        for a in rows if a.differs],
        "same": [{"key": a.key, "group": a.group, "label": a.label, "value": a.values[0]} for a in rows if not a.differs],
        "results": per_entry, "by_threads": by_threads, "capacity": capacities(runs, base_index),
        "unfinished": sorted({r.pk for e in selection.entries for r in e.runs if r.state != RunState.SUCCEEDED}),
    }


def rule():
    """The verdict rule as the page and the API state it."""
    return {"threshold_pct": settings.RUNS_PRACTICAL_THRESHOLD_PCT, "alpha": stats.ALPHA, "verdicts": list(stats.VERDICTS),
            "methods": [stats.PAIRED_LOG, stats.WELCH_LOG], "adjustment": "Holm"}
