"""A run's parameters: the profile's values with the user's overrides, validated within limits.

Every bad value is reported under its own field name; unknown fields are refused.
"""

import math
import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from .drivers import PARAMETERS, RUNNABLE_TOOLS
from .drivers import rule_errors as tool_rule_errors
from .drivers.parameters import MAX_RATE_TPS, MAX_SWEEP, MIN_LATENCY_LIMIT_MS, Parameter, thread_steps  # noqa: F401

# Every parameter, declared where it belongs (runs/drivers/parameters.py COMMON, each driver's PARAMETERS) and put
# together by runs/drivers/__init__.py: the run form, the run page, the API's overrides object and profile and the
# rules below all read this one list.
EVERY_TOOL = frozenset(RUNNABLE_TOOLS)  # what a common parameter's `tools` holds
CAPACITY_FIELDS = ("capacity_bound_ms", "capacity_factor", "capacity_max_tps", "capacity_budget_pct")
MAX_CAPACITY_STEPS = 8  # a search measures at most this many steps (runs/capacity.py)
BY_NAME = {p.name: p for p in PARAMETERS}
NAMES = [p.name for p in PARAMETERS]
PROFILE_FIELDS = [p.name for p in PARAMETERS if p.on_profile]
LIMITS = {p.name: p.limits for p in PARAMETERS if p.limits}


def allowed_for(tool):
    """The parameters a profile of this tool takes."""
    return {p.name for p in PARAMETERS if tool in p.tools}


_ASCII_WHOLE_NUMBER = re.compile(r"-?[0-9]+")
_ASCII_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def ascii_int(value):
    """A whole number written with ASCII digits (an int, or text such as "8"), else ValueError. Python's int()
    also reads "２", "١" and "𝟐" as 2: such a value would pass validation and be stored as typed."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _ASCII_WHOLE_NUMBER.fullmatch(value.strip()):
        return int(value.strip())
    raise ValueError(value)


def non_ascii_digits(text):
    """The digits of `text` other than ASCII 0-9 ("٣", "２", "𝟐"): the one rule for digits is that only ASCII ones
    count (ascii_int refuses the rest), wherever a number is typed, a cron's too."""
    return [c for c in str(text) if not c.isascii() and (c.isdigit() or c.isnumeric())]


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


def _number(name, value, errors):
    """A decimal (ASCII digits, a point; 3 places kept: the tools count microseconds) within the parameter's limits."""
    lo, hi = LIMITS[name]
    if isinstance(value, bool) or value is None or value == "":
        errors[name] = _("%(field)s must be a number.") % {"field": name}
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and _ASCII_DECIMAL.fullmatch(value.strip()):
        number = float(value.strip())
    else:
        errors[name] = _("%(field)s must be a number, got %(value)r.") % {"field": name, "value": str(value)[:40]}
        return None
    if not math.isfinite(number) or not lo <= number <= hi:
        errors[name] = _("%(field)s must be between %(lo)s and %(hi)s, got %(value)s.") % {
            "field": name, "lo": lo, "hi": hi, "value": number}
        return None
    return round(number, 3)


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
    """The profile's value of every parameter (the launch's own: their defaults, client_hosts 1, closed loop)."""
    values = {p.name: getattr(profile, p.name) if p.on_profile else p.default for p in PARAMETERS}
    values["thread_sweep"] = list(values["thread_sweep"]) if isinstance(values["thread_sweep"], list) else []
    return values


def parse_value(parameter, value, errors):
    """One override's value, typed (int, list of ints, bool, or None where empty means the default), whatever
    sent it: the form's text ("4", "2, 4, 8", "on") or the API's JSON (4, [2, 4, 8], true). A bad value adds
    its message to `errors` under the parameter's name and gives None."""
    if parameter.kind == "sweep":
        return _sweep(value, errors)
    if parameter.kind == "bool":
        return _bool(parameter.name, value, errors)
    if value in (None, "") and parameter.empty_means_default:
        return None
    if parameter.kind == "number":
        return _number(parameter.name, value, errors)
    return _int(parameter.name, value, errors)


def parse_overrides(tool, overrides):
    """The one parser of a run's settings (form, API, schedules, stored rows): (the overrides a profile of this
    tool takes, each typed by parse_value; {field: message} for unknown fields and bad values)."""
    allowed = allowed_for(tool)
    errors = {}
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        errors["overrides"] = _("Unknown field(s) for a %(tool)s profile: %(fields)s. Allowed: %(allowed)s.") % {
            "tool": tool, "fields": ", ".join(str(u)[:40] for u in unknown), "allowed": ", ".join(sorted(allowed))}
    typed = {name: parse_value(BY_NAME[name], value, errors) for name, value in overrides.items() if name in allowed}
    return typed, errors


def typed_overrides(profile, overrides):
    """The overrides as stored: each value typed (`{"threads": 4, "thread_sweep": [2, 4, 8]}`, never the text a
    form sent). Call it on overrides resolve_params accepted."""
    return parse_overrides(profile.tool, overrides or {})[0]


def rule_errors(tool, workload, params):
    """The rules between a run's parameters, {field: message}: report_interval_s <= duration_s; the tool's own (its
    driver's rule_errors: pgbench's scale, range and jobs, sysbench's tables and rows_per_table); the open-loop rules;
    client_hosts at most the threads of any step. A launch's
    parameters (resolve_params) and a profile's own (profile_errors) are held to these same rules."""
    errors = {}
    if params["report_interval_s"] > params["duration_s"]:
        errors["report_interval_s"] = _("report_interval_s (%(r)s) must not exceed duration_s (%(d)s).") % {
            "r": params["report_interval_s"], "d": params["duration_s"]}
    errors.update(tool_rule_errors(tool, workload, params))
    errors.update(open_loop_errors(params))
    fewest = min([params["threads"], *params["thread_sweep"]])
    if params["client_hosts"] > fewest:
        errors["client_hosts"] = _("client_hosts (%(c)s) must not exceed the threads of any step (%(t)s): each client host runs at "
                                  "least one thread.") % {"c": params["client_hosts"], "t": fewest}
    return errors


def profile_values(profile):
    """(every parameter's value, typed, the profile's own where it has one and the launch's default where not;
    {field: message} for each of the profile's values a launch would refuse as an override): the fields the
    profile's tool takes (a reference-only tool's: those every tool takes), each read by parse_value within its
    LIMITS. thread_sweep must be a list (text such as "8,16" is the form's to parse, not a stored value); an
    empty optional field (tables, scale, jobs...) is left to the rules (rule_errors says which are required)."""
    values, errors = profile_defaults(profile), {}
    takes = allowed_for(profile.tool) if profile.runnable else {p.name for p in PARAMETERS if p.tools == EVERY_TOOL}
    for parameter in PARAMETERS:
        if parameter.on_profile and parameter.name in takes:
            values[parameter.name] = parse_profile_value(parameter, getattr(profile, parameter.name), errors,
                                                         optional=profile._meta.get_field(parameter.name).null)
    return values, errors


def parse_profile_value(parameter, value, errors, optional, sweep_text=False):
    """One of a profile's values as stored or sent, typed by parse_value (a bad one adds its message to `errors`
    and gives None). An optional field (the model's nullable ones: tables, scale, jobs...) may be empty: None; the
    rules (rule_errors) say which a tool requires. The thread sweep is a list; text ("8, 16") only where a form's
    field is text (sweep_text)."""
    if parameter.kind == "sweep" and not sweep_text and value is not None and not isinstance(value, list):
        errors[parameter.name] = _("thread_sweep must be a list of thread counts, e.g. [8, 16, 32].")
        return None
    if value in (None, "") and parameter.kind != "sweep" and optional:
        return None
    return parse_value(parameter, value, errors)


def profile_errors(profile):
    """{field: message} for what a launch of the profile as it stands would refuse: each value (profile_values),
    then the rules between them (rule_errors). BenchmarkProfile.clean asks, so the admin, the API and the page
    refuse a profile no launch could run, naming the field."""
    values, errors = profile_values(profile)
    if not errors and profile.runnable:
        errors = rule_errors(profile.tool, profile.workload, values)
    return errors


def resolve_params(profile, overrides):
    if not profile.runnable:
        raise ValidationError({"profile": _("%(tool)s cannot run on these workers; the profile is for reference only.")
                               % {"tool": profile.get_tool_display()}})
    refusal = profile.workload_refusal()
    if refusal:  # stored around the profile's validation (the admin refuses it): never given to the tool
        raise ValidationError({"profile": _("Profile %(slug)s cannot run: its workload %(why)s") % {
            "slug": profile.slug, "why": refusal}})
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, dict):
        raise ValidationError({"overrides": _("overrides must be an object of field: value.")})
    stored, stored_errors = profile_values(profile)
    if stored_errors:  # stored around BenchmarkProfile.clean (a migration, raw SQL): never given to the rules or the tool
        raise ValidationError({"profile": [_("Profile %(slug)s cannot run: its %(field)s is refused: %(why)s Correct the "
                                             "profile first.") % {"slug": profile.slug, "field": name, "why": why}
                                           for name, why in stored_errors.items()]})
    allowed = allowed_for(profile.tool)
    typed, errors = parse_overrides(profile.tool, overrides)
    params = {**stored, **typed}
    if not errors:
        errors.update(rule_errors(profile.tool, profile.workload, params))
    if errors:
        raise ValidationError(errors)
    for name in set(NAMES) - allowed:
        params.pop(name, None)
    if is_capacity(params) and "latency_limit_ms" in allowed and params.get("latency_limit_ms") is None:
        params["latency_limit_ms"] = params["capacity_bound_ms"]  # pgbench -L: late and skipped against the bound
    for name in ("rate_tps", "latency_limit_ms", *CAPACITY_FIELDS):
        if params.get(name) is None:
            params.pop(name, None)  # closed loop: the parameters of a run as before open-loop runs existed
    if params["client_hosts"] == 1:
        params.pop("client_hosts")  # one client: the parameters of a run as before multi-client runs existed
    params.update(tool=profile.tool, workload=profile.workload, engine=profile.engine)
    return params


def open_loop_errors(params):
    """The rules of an open-loop run's parameters, {field: message}: a latency limit needs a rate; an open-loop
    run offers one rate (a sweep of threads at one rate is not what it measures); with several client hosts each
    offers its share of the rate (client_params), so the rate must give every client at least one transaction a
    second (sysbench reads --rate=0 as no rate at all: a closed loop)."""
    errors = {}
    rate = params.get("rate_tps")
    if params.get("latency_limit_ms") is not None and rate is None:
        errors["latency_limit_ms"] = _("latency_limit_ms needs rate_tps: the limit applies to an open-loop run.")
    if rate is not None and params.get("thread_sweep"):
        errors["rate_tps"] = _("rate_tps cannot be combined with thread_sweep: an open-loop run offers one rate with "
                               "the threads above.")
    elif rate is not None and rate < (params.get("client_hosts") or 1):
        errors["rate_tps"] = _("rate_tps (%(r)s) must be at least client_hosts (%(c)s): each client host offers its share "
                               "of the rate, at least one transaction a second.") % {"r": rate, "c": params["client_hosts"]}
    if params.get("capacity_bound_ms") is not None:
        if rate is None:
            errors["rate_tps"] = _("A capacity search needs rate_tps, the rate of its first step.")
        for name in ("capacity_factor", "capacity_max_tps"):
            if params.get(name) is None:
                errors[name] = _("%(field)s is required for a capacity search (capacity_bound_ms).") % {"field": name}
        if rate is not None and params.get("capacity_max_tps") is not None and params["capacity_max_tps"] < rate:
            errors["capacity_max_tps"] = _("capacity_max_tps (%(m)s) must be at least rate_tps (%(r)s).") % {
                "m": params["capacity_max_tps"], "r": rate}
    else:
        for name in CAPACITY_FIELDS[1:]:
            if params.get(name) is not None:
                errors[name] = _("%(field)s needs capacity_bound_ms: it applies to a capacity search.") % {"field": name}
    return errors


def is_capacity(params):
    """The run searches for the highest rate sustained under a p95 bound (runs/capacity.py)."""
    return (params or {}).get("capacity_bound_ms") is not None


def step_count(params):
    """How many run steps a run measures at most: a capacity search's limit, else one per thread count."""
    return MAX_CAPACITY_STEPS if is_capacity(params) else len(thread_steps(params or {}))


def is_open_loop(params):
    """The run offered a fixed rate (rate_tps) rather than a closed loop of threads."""
    return bool((params or {}).get("rate_tps"))


def expected_seconds(params):
    """How long a run of these parameters measures: each step's warm-up and duration (set-up not counted)."""
    p = params or {}
    return step_count(p) * (p.get("duration_s", 0) + p.get("warmup_s", 0)) if p else 0


def client_count(params):
    """How many client hosts drive the run (1 unless the run asked for more)."""
    return int((params or {}).get("client_hosts") or 1)


def share(total, clients, index):
    """Client `index`'s (1-based) part of `total` threads: as equal as can be, the first ones one more."""
    base, extra = divmod(int(total), clients)
    return base + (1 if index <= extra else 0)


def client_params(params, index):
    """The parameters client `index` of a multi-client run runs with: its share of the threads of each step
    (and of pgbench's jobs, never more than its threads) and, open loop, its share of the offered rate (the
    rate / N whole transactions a second, the first rate mod N clients one more: 1001 TPS by two clients is 501
    + 500). `log_basis`: client 1's (the largest) threads of each step and rate, which every client's tool sizes
    its transaction-log sampling on (pgbench --sampling-rate), so all clients log the same share of their
    transactions and their logs together are one sample of the run's."""
    n = client_count(params)
    mine = dict(params)
    mine["threads"] = share(params["threads"], n, index)
    mine["thread_sweep"] = [share(t, n, index) for t in params.get("thread_sweep") or []]
    if params.get("jobs"):
        mine["jobs"] = max(1, min(share(params["jobs"], n, index), min([mine["threads"], *mine["thread_sweep"]])))
    if params.get("rate_tps"):
        mine["rate_tps"] = share(params["rate_tps"], n, index)
    if n > 1:
        mine["log_basis"] = {"threads": [share(t, n, 1) for t in thread_steps(params)],
                             "rate_tps": share(params["rate_tps"], n, 1) if params.get("rate_tps") else None}
    return mine
