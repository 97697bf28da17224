"""Reproducing a published row: which profile and parameters its methodology calls for, whether it can
run here at all, and what differs between a run and the published row (the one definition used by the
run form, the run page, the publish confirmation and the API).

A run is only a reproduction of a published number when what it measured was set up the same way: a
1 table x 1000 rows, 3 s run against a 64 x 10M, 3600 s row measures something else, and says so."""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import Case, When
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from whitepaper.choices import NOT_STATED_MARK
from whitepaper.models import PublishedResult

from .access import short_version
from .drivers import DRIVERS, get_driver
from .models import BenchmarkProfile
from .params import thread_steps


@dataclass
class Plan:
    """What the run form needs to reproduce a row: a profile and its parameters, or why it cannot."""

    result: object
    engine: str
    profile: BenchmarkProfile | None = None
    initial: dict | None = None
    problem: str = ""


def reproduced_result(value):
    """The published row a run reproduces, from its id as typed (URL, form, API): None when empty. Raises
    ValidationError naming `reproduces` when the value is not a whole number (ASCII digits) or names no row."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValidationError({"reproduces": [_("reproduces must be the id of a published result (a whole number), "
                                                "got %(value)s.") % {"value": str(value)[:40]}]})
    result = (PublishedResult.objects.select_related("table__methodology", "table__document", "engine_version__engine",
                                                     "flavor__family").filter(pk=int(text)).first())
    if result is None:
        raise ValidationError({"reproduces": [_("No published result has the id %(id)s.") % {"id": text}]})
    return result


def plan_reproduction(result):
    """The profile and overrides that repeat `result`'s methodology here, or the reason it cannot run."""
    methodology = result.table.methodology
    engine = result.engine_version.engine.slug
    plan = Plan(result=result, engine=engine, initial={"reproduces": result.pk})
    if not methodology.tool:
        plan.problem = _("The document does not say which benchmark tool measured this row, so it cannot be reproduced "
                         "faithfully: any tool we chose would measure something else.")
        return plan
    driver = DRIVERS.get(methodology.tool)
    if driver is None or not driver.RUNNABLE:
        plan.problem = str(driver.NOT_RUNNABLE_HERE) if driver else _(
            "These workers have no driver for %(tool)s, so this row cannot be reproduced here.") % {"tool": methodology.tool}
        return plan
    if engine not in ("mysql", "postgresql"):
        plan.problem = _("Benchmark runs here target MySQL/MariaDB and PostgreSQL; %(engine)s rows cannot be reproduced.") % {
            "engine": result.engine_version.engine.name}
        return plan
    data, workload = driver.reproduction(methodology, result)
    profiles = BenchmarkProfile.objects.filter(tool=methodology.tool, engine=engine, quick=False)
    if workload:
        profiles = profiles.filter(workload=workload)
    # The profile of this very methodology first, then one of another published methodology (seeded), then the rest:
    # operators make profiles of their own (issue 50.9), and one of theirs must not stand in for the document's set-up.
    plan.profile = profiles.order_by(
        Case(When(methodology=methodology, then=0), When(methodology__isnull=False, then=1), default=2), "pk").first()
    if plan.profile is None:
        plan.problem = _("No %(tool)s profile for %(engine)s is set up (run `manage.py seed_profiles`).") % {
            "tool": methodology.tool, "engine": engine}
        return plan
    initial = plan.initial
    initial["profile"] = plan.profile.pk
    for name in ("threads", "duration_s", "report_interval_s"):
        if getattr(methodology, name):
            initial[name] = getattr(methodology, name)
    initial.update(data)
    # The row is one thread count: the profile's sweep would measure others.
    initial["thread_sweep"] = ""
    return plan


@dataclass
class Difference:
    key: str
    aspect: str
    published: str
    run: str
    same: bool | None  # None: the document does not say, so it cannot be compared


def _fmt(value):
    if value in (None, "", []):
        return ""
    if isinstance(value, int) and value >= 10_000:
        return f"{value:,}"
    return str(value)


ENGINE_NAMES = {"mysql": "MySQL", "postgresql": "PostgreSQL"}


def published_engine(result):
    """(engine, version) of a published row: an internal MariaDB row is filed under MySQL as "MariaDB 10.11"."""
    engine, version = result.engine_version.engine.name, result.engine_version.version
    if version.startswith("MariaDB "):
        return "MariaDB", version.removeprefix("MariaDB ")
    return engine, version


def run_engine(run):
    """(engine, version) the run's server reported ('', '' before it was read): MariaDB is not MySQL."""
    if not run.server_version:
        return "", ""
    engine = "MariaDB" if "mariadb" in run.server_version.lower() else ENGINE_NAMES.get(run.target.engine, run.target.engine)
    return engine, short_version(run.target.engine, run.server_version).removeprefix("MariaDB ")


def major_version(version, like):
    """`version` cut to as many parts as the document's `like` names: 8.0.36 like 8.0 -> 8.0; 15.4 like 12 -> 15."""
    parts = version.split(".")
    return ".".join(parts[:len(like.split("."))]) if version and like else version


def methodology_differences(run, result=None):
    """Aspect by aspect, the published row's set-up against the run's: engine and major version, the server settings
    the document states, tool and version, data size, duration, threads, client, target size. `same` is False where
    they differ."""
    result = result or run.reproduces
    if result is None:
        return []
    methodology = result.table.methodology
    params = run.params or {}
    rows = []

    def add(key, aspect, published, measured, unknown_until_run=False):
        published, measured = _fmt(published), _fmt(measured)
        same = None if not published or (unknown_until_run and not measured) else published == measured
        rows.append(Difference(key, str(aspect), published or _("not stated"), measured or NOT_STATED_MARK, same))

    # Engine and major version: a MySQL 8.0 row is not reproduced on MariaDB 10.11 (nor on MySQL 5.7).
    engine, version = published_engine(result)
    measured_engine, measured_version = run_engine(run)
    add("engine", gettext_lazy("engine"), engine, measured_engine, unknown_until_run=True)
    add("major_version", gettext_lazy("major version"), version, major_version(measured_version, version), unknown_until_run=True)
    # The server settings the document states (a methodology's parameters["server_settings"]), each against the
    # server's own, as read at the run's start.
    stated = (methodology.parameters or {}).get("server_settings") or {}
    for name, value in sorted(stated.items()):
        add(f"setting:{name}", gettext_lazy("server setting %(name)s") % {"name": name}, value,
            (run.server_settings or {}).get(name), unknown_until_run=True)

    add("tool", gettext_lazy("tool"), methodology.tool, run.profile.tool)
    add("tool_version", gettext_lazy("tool version"), methodology.tool_version, run.tool_version)
    for key, label, published, measured in get_driver(run.profile.tool).data_differences(methodology, result, params):
        add(key, label, published, measured)
    add("duration_s", gettext_lazy("duration (s)"), methodology.duration_s, params.get("duration_s"))
    add("threads", gettext_lazy("threads"), methodology.threads, ", ".join(str(t) for t in thread_steps(params)) if params else "")
    client_text, _in_chinese = methodology.text("client")  # the page's language
    add("client", gettext_lazy("client"), client_text,
        _("%(host)s (%(n)s cores)") % {"host": run.client_host, "n": run.client_cores} if run.client_host else "")
    # The documents put the client in the target's zone and print no round trip: shown, never decisive.
    round_trip = (run.round_trip or {}).get("median_ms")
    if round_trip is not None:  # runs before issue 22 measured none
        add("round_trip", gettext_lazy("client-to-target round trip"), None, _("%(ms)s ms (median)") % {"ms": round_trip})
    target = run.target
    add("vcpus", gettext_lazy("vCPUs"), result.flavor.vcpus, target.declared_vcpus)
    add("memory_gb", gettext_lazy("memory (GB)"), result.flavor.memory_gb, target.declared_memory_gb)
    return rows


# What must match for a run to count as a reproduction of the row (client and tool version may differ,
# and are shown; the engine and its major version, the server settings the document states, data size, duration,
# threads and the instance size change the number itself).
DECISIVE = {"engine", "major_version", "tool", "tables", "rows_per_table", "scale", "range", "duration_s", "threads",
            "vcpus", "memory_gb"}


def is_decisive(key):
    return key in DECISIVE or key.startswith("setting:")


def is_faithful(differences):
    """True when every decisive aspect the document states is the same in the run."""
    return all(d.same is not False for d in differences if is_decisive(d.key))
