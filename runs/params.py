"""A run's parameters: the profile's values with the user's overrides, validated within limits.

Every bad value is reported under its own field name; unknown fields are refused.
"""

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

# name -> (minimum, maximum); 'threads' etc. are bounded so a typo cannot start 10^6 connections.
LIMITS = {
    "threads": (1, 1024),
    "jobs": (1, 1024),
    "duration_s": (1, 86400),
    "report_interval_s": (1, 60),
    "warmup_s": (0, 3600),
    "tables": (1, 1024),
    "rows_per_table": (1, 1_000_000_000),
    "scale": (1, 100_000),
    "range": (1, 10_000_000_000),
    "client_hosts": (1, 64),
}
SYSBENCH_FIELDS = {"threads", "thread_sweep", "duration_s", "report_interval_s", "warmup_s", "tables", "rows_per_table", "prepared",
                   "client_hosts"}
PGBENCH_FIELDS = {"threads", "jobs", "thread_sweep", "duration_s", "report_interval_s", "warmup_s", "scale", "range", "prepared",
                  "client_hosts"}
MAX_SWEEP = 10


_ASCII_WHOLE_NUMBER = re.compile(r"-?[0-9]+")


def ascii_int(value):
    """A whole number written with ASCII digits (an int, or text such as "8"), else ValueError. Python's int()
    also reads "２", "١" and "𝟐" as 2: such a value would pass validation and be stored as typed."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _ASCII_WHOLE_NUMBER.fullmatch(value.strip()):
        return int(value.strip())
    raise ValueError(value)


def _int(name, value, errors):
    lo, hi = LIMITS[name]
    if isinstance(value, bool) or value is None or value == "":
        errors[name] = _("%(field)s must be a whole number.") % {"field": name}
        return None
    try:
        number = ascii_int(value)
    except (TypeError, ValueError):
        errors[name] = _("%(field)s must be a whole number, got %(value)r.") % {"field": name, "value": str(value)[:40]}
        return None
    if not lo <= number <= hi:
        errors[name] = _("%(field)s must be between %(lo)s and %(hi)s, got %(value)s.") % {
            "field": name, "lo": lo, "hi": hi, "value": number}
        return None
    return number


def _bool(name, value, errors):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "on", "1", "yes", "false", "off", "0", "no"):
        return value.lower() in ("true", "on", "1", "yes")
    errors[name] = _("%(field)s must be true or false.") % {"field": name}
    return None


def _sweep(value, errors):
    if value in (None, "", []):
        return []
    if isinstance(value, str):
        value = [v for v in value.replace(" ", ",").split(",") if v]
    if not isinstance(value, (list, tuple)):
        errors["thread_sweep"] = _("thread_sweep must be a list of thread counts, e.g. 8, 16, 32.")
        return None
    if len(value) > MAX_SWEEP:
        errors["thread_sweep"] = _("thread_sweep may have at most %(n)s steps.") % {"n": MAX_SWEEP}
        return None
    counts = []
    for item in value:
        sub = {}
        number = _int("threads", item, sub)
        if number is None:
            errors["thread_sweep"] = _("thread_sweep: %(msg)s") % {"msg": sub["threads"]}
            return None
        counts.append(number)
    if len(set(counts)) != len(counts):
        errors["thread_sweep"] = _("thread_sweep lists a thread count twice.")
        return None
    return counts


def profile_defaults(profile):
    return {
        "threads": profile.threads,
        "jobs": profile.jobs,
        "thread_sweep": list(profile.thread_sweep or []),
        "duration_s": profile.duration_s,
        "report_interval_s": profile.report_interval_s,
        "warmup_s": profile.warmup_s,
        "tables": profile.tables,
        "rows_per_table": profile.rows_per_table,
        "scale": profile.scale,
        "range": profile.range,
        "prepared": profile.prepared,
        "client_hosts": 1,
    }


def resolve_params(profile, overrides):
    if not profile.runnable:
        raise ValidationError({"profile": _("%(tool)s cannot run on these workers; the profile is for reference only.")
                               % {"tool": profile.get_tool_display()}})
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, dict):
        raise ValidationError({"overrides": _("overrides must be an object of field: value.")})
    allowed = SYSBENCH_FIELDS if profile.tool == "sysbench" else PGBENCH_FIELDS
    errors = {}
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        errors["overrides"] = _("Unknown field(s) for a %(tool)s profile: %(fields)s. Allowed: %(allowed)s.") % {
            "tool": profile.tool, "fields": ", ".join(str(u)[:40] for u in unknown), "allowed": ", ".join(sorted(allowed))}
    params = profile_defaults(profile)
    for name, value in overrides.items():
        if name not in allowed:
            continue
        if name == "thread_sweep":
            params[name] = _sweep(value, errors)
        elif name == "prepared":
            params[name] = _bool(name, value, errors)
        elif value in (None, "") and name in ("jobs",):
            params[name] = None
        else:
            params[name] = _int(name, value, errors)
    if not errors:
        if params["report_interval_s"] > params["duration_s"]:
            errors["report_interval_s"] = _("report_interval_s (%(r)s) must not exceed duration_s (%(d)s).") % {
                "r": params["report_interval_s"], "d": params["duration_s"]}
        if profile.tool == "pgbench":
            if not params["scale"]:
                errors["scale"] = _("scale is required for pgbench.")
            elif params["range"] and params["range"] > params["scale"] * 100_000:
                errors["range"] = _("range (%(r)s) must not exceed the rows of the scale (%(n)s = scale x 100000).") % {
                    "r": params["range"], "n": params["scale"] * 100_000}
            if params["jobs"] and params["jobs"] > min([params["threads"], *params["thread_sweep"]]):
                errors["jobs"] = _("jobs (-j) must not exceed the number of clients (-c).")
            if profile.workload in ("ro", "rw") and not params["range"]:
                errors["range"] = _("range is required for the %(w)s script.") % {"w": profile.workload}
        else:
            for name in ("tables", "rows_per_table"):
                if not params[name]:
                    errors[name] = _("%(field)s is required for sysbench.") % {"field": name}
        fewest = min([params["threads"], *params["thread_sweep"]])
        if params["client_hosts"] > fewest:
            errors["client_hosts"] = _("client_hosts (%(c)s) must not exceed the threads of any step (%(t)s): each client host runs at "
                                  "least one thread.") % {"c": params["client_hosts"], "t": fewest}
    if errors:
        raise ValidationError(errors)
    if profile.tool == "sysbench":
        for name in ("jobs", "scale", "range"):
            params.pop(name, None)
    else:
        for name in ("tables", "rows_per_table"):
            params.pop(name, None)
    if params["client_hosts"] == 1:
        params.pop("client_hosts")  # one client: the parameters of a run as before multi-client runs existed
    params.update(tool=profile.tool, workload=profile.workload, engine=profile.engine)
    return params


def thread_steps(params):
    """The thread counts a run measures, one step each: the sweep, or the single thread count."""
    return params.get("thread_sweep") or [params.get("threads")]


def expected_seconds(params):
    """How long a run of these parameters measures: each step's warm-up and duration (set-up not counted)."""
    p = params or {}
    return len(thread_steps(p)) * (p.get("duration_s", 0) + p.get("warmup_s", 0)) if p else 0


def client_count(params):
    """How many client hosts drive the run (1 unless the run asked for more)."""
    return int((params or {}).get("client_hosts") or 1)


def share(total, clients, index):
    """Client `index`'s (1-based) part of `total` threads: as equal as can be, the first ones one more."""
    base, extra = divmod(int(total), clients)
    return base + (1 if index <= extra else 0)


def client_params(params, index):
    """The parameters client `index` of a multi-client run runs with: its share of the threads of each step
    (and of pgbench's jobs, never more than its threads)."""
    n = client_count(params)
    mine = dict(params)
    mine["threads"] = share(params["threads"], n, index)
    mine["thread_sweep"] = [share(t, n, index) for t in params.get("thread_sweep") or []]
    if params.get("jobs"):
        mine["jobs"] = max(1, min(share(params["jobs"], n, index), min([mine["threads"], *mine["thread_sweep"]])))
    return mine
