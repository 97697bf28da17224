"""Publishing a succeeded run: a row of the "Internal measurements" document, with provenance back
to the run (Run.published_result, a one-to-one). It then appears in the pages and API like any row."""

import hashlib
import json
from decimal import ROUND_HALF_UP, Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from whitepaper import webhooks
from whitepaper.export import RESULTS_PATH
from whitepaper.internal import (DeclaredSize, InternalMethodology, InternalResult, publish_internal_result,
                                 retract_internal_result)
from whitepaper.measurement import Measurement

from . import actions, history
from .access import short_version
from .drivers import get_driver
from .drivers.base import statements_per_transaction
from .models import Run
from .params import is_capacity, thread_steps


def _two(value):
    return None if value is None else Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def publish_preview(run):
    """What publishing would add, without writing: the flavour it is published under and why."""
    target = run.target
    # A client-bound run stays flagged once published: the row links to the run (Run.published_result),
    # which carries client_bound into the API and the run page.
    flag = {"client_bound": run.client_bound, "other_load": run.other_load, "disturbed": disturbed_runs(run)}
    if target.flavor_id:
        return {**flag, "flavor": target.flavor, "under": _("the target's catalogue flavour")}
    if target.vcpus and target.memory_gb:
        return {**flag, "flavor": None, "under": _("an internal flavour of %(v)s vCPU / %(m)s GB (the target's declared size)") % {
            "v": target.vcpus, "m": target.memory_gb}}
    return {**flag, "flavor": None, "under": "", "problem": _("Set the target's vCPUs and memory (or its catalogue flavour) before publishing.")}


@transaction.atomic
def publish_run(run_id, *, user=None, acknowledge_other_load=False):
    """Publish the run. A run whose server saw other load (Run.other_load) needs acknowledge_other_load=True;
    who acknowledged it and when are kept on the run."""
    run = Run.objects.select_for_update(of=("self",)).select_related("target", "profile", "target__flavor").get(pk=run_id)
    if run.publish_refusal:
        raise ValidationError(_("Run %(id)s cannot be published: %(why)s") % {"id": run.pk, "why": run.publish_refusal})
    if run.other_load and not acknowledge_other_load:
        raise ValidationError({"acknowledge_other_load": [
            _("The server saw other load during this run: acknowledge it to publish the run anyway.")]})
    busy = disturbed_runs(run)
    if busy and not acknowledge_other_load:
        raise ValidationError({"acknowledge_other_load": [
            _("The client host was loaded beyond its cores as run %(ids)s started: acknowledge it to publish anyway.") % {
                "ids": ", ".join(map(str, busy))}]})
    target, summary = run.target, run.summary
    if not (target.vcpus and target.memory_gb) and not target.flavor_id:
        raise ValidationError(_("Set the target's vCPUs and memory (or its catalogue flavour) before publishing."))
    methodology = methodology_for(run)
    figures = published_figures(run)
    # Under the target's catalogue flavour when it names one; else an internal flavour of its declared size.
    # Never a vendor family matched by name: the target's free-text family is not the vendor's.
    result = publish_internal_result(InternalResult(
        methodology=methodology, table_label=_table_label(run, methodology),
        engine=target.engine, version=short_version(target.engine, run.server_version), figures=figures,
        flavor_id=target.flavor_id, size=None if target.flavor_id else DeclaredSize(target.vcpus, target.memory_gb),
        latency_bound_ms=_two((summary.get("capacity") or {}).get("bound_ms")) if is_capacity(run.params) else None,
        measurement=measurement_of(run, acknowledged_by=user),
    ))
    run.published_result = result
    fields = ["published_result"]
    if run.other_load or busy:
        run.other_load_acknowledged_at, run.other_load_acknowledged_by = timezone.now(), user
        fields += ["other_load_acknowledged_at", "other_load_acknowledged_by"]
    run.save(update_fields=fields)
    webhooks.emit("run.published", lambda: {**actions.event_data(run), "result": result.pk,
                                            "result_url": webhooks.absolute(f"{RESULTS_PATH}{result.pk}/"),
                                            "record_url": webhooks.absolute(result.run_record_url)})
    return result


def disturbed_runs(run):
    """The runs of what publishing this run would publish (its series) whose client host was loaded beyond its
    cores as they started (Run.disturbed): published only with an acknowledgement, like other load."""
    return [m.pk for m in series_members(run) if m.disturbed]


def series_members(run):
    """The runs a published row of this run stands for: its repeat group's succeeded runs (a series, one row), else
    the run alone (n = 1)."""
    if not run.repeat_group_id:
        return [run]
    return list(Run.objects.filter(repeat_group_id=run.repeat_group_id, state="succeeded").order_by("repeat_index", "pk"))


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def published_figures(run, members=None):
    """The metrics a published row of this run carries, the mean over its series' runs (runs/stats.py: the run is
    the unit of evidence): a capacity search's sustained rate as its own metric (sustained_tps, its bound beside it),
    never as TPS; any other run's TPS and QPS, and the highest p95 latency of its runs."""
    members = members or series_members(run)
    if is_capacity(run.params):
        return {"sustained_tps": _two(_mean([((m.summary or {}).get("capacity") or {}).get("sustained_tps") for m in members]))}
    return {"tps": _two(_mean([(m.summary or {}).get("tps") for m in members])),
            "qps": _two(_mean([(m.summary or {}).get("qps") for m in members])),
            "latency_p95_ms": _two(highest_p95(members))}


def highest_p95(members):
    """The highest of the runs' p95 latency (ms): every run of the series had its p95 at or below it (a p95 of p95s
    would be no run's). None when a run has none, or its latency was measured wrong (Run.latency_caveat)."""
    values = [m.summary_latency()["p95"] for m in members]
    if not values or any(v is None for v in values) or any(m.latency_caveat for m in members):
        return None
    return max(values)


@transaction.atomic
def retract_run(run_id, *, user, reason):
    """Take a published run's row out of the catalogue; the run keeps who, when and why."""
    run = Run.objects.select_for_update(of=("self",)).get(pk=run_id)
    if run.published_result_id is None:
        raise ValidationError(_("Run %(id)s is not published.") % {"id": run.pk})
    if not (reason or "").strip():
        raise ValidationError(_("Give a reason for the retraction."))
    result_id = run.published_result_id
    run.published_result = None
    run.retracted_at = timezone.now()
    run.retracted_by = user
    run.retraction_reason = reason.strip()
    run.save(update_fields=["published_result", "retracted_at", "retracted_by", "retraction_reason"])
    retract_internal_result(result_id)  # its last row gone, the table and its set-up's methodology go too
    return run


def measurement_setup(run):
    """The set-up of what a published row of this run reports, as {key: value shown}: the tool and its version,
    the workload, the threads of the step it publishes (a sweep's best step, saying so), duration, data size,
    server version, TLS and client hosts. The one definition used by the row's methodology (its content is the
    methodology's key), the public record page and the API."""
    params, summary, profile = run.params or {}, run.summary or {}, run.profile
    steps = thread_steps(params)
    setup = {"tool": f"{profile.tool} {run.tool_version}".strip(), "workload": profile.workload,
             "threads": summary.get("threads") or params.get("threads")}
    if is_capacity(params):  # the search's rules are part of what its figure means
        setup["loop"] = "open-loop capacity search"  # not translated: the set-up key must not depend on the language
        setup.update({k: params.get(k) for k in ("capacity_bound_ms", "capacity_budget_pct", "rate_tps", "capacity_factor",
                                                  "capacity_max_tps")})
    elif len(steps) > 1:
        setup["thread_sweep"] = _("best step of a sweep over %(steps)s threads") % {"steps": ", ".join(map(str, steps))}
    setup["duration_s"] = params.get("duration_s")
    for key in ("warmup_s", "report_interval_s"):
        if params.get(key):
            setup[key] = params[key]
    setup.update(get_driver(profile.tool).data_setup(params, setup.get("threads")))
    setup["prepared"] = bool(params.get("prepared", True))
    setup["server_version"] = run.server_version
    tls_mode = (run.tls or {}).get("mode") or run.target.tls_mode
    seen = ((run.tls or {}).get("tool") or {}).get("version") or ""
    setup["tls"] = f"{tls_mode} {seen}".strip()
    setup["client_hosts"] = params.get("client_hosts") or 1
    setup["client_cores"] = run.client_cores
    # Only what the operator chose makes the set-up (its key): a measured quantity such as the round trip or the
    # hosts' load differs from run to run of one set-up, and stays in the run's record.
    return {k: v for k, v in setup.items() if v not in (None, "")}


def setup_key(setup):
    return hashlib.sha256(json.dumps(setup, sort_keys=True, default=str).encode()).hexdigest()[:12]


def methodology_for(run):
    """The methodology of this run's set-up: shared with earlier rows of exactly the same set-up, never another's."""
    setup, profile = measurement_setup(run), run.profile
    key = setup_key(setup)
    shown = {k: v for k, v in setup.items()
             if k not in ("tool", "workload", "threads", "duration_s", "report_interval_s", "tables", "rows_per_table")}
    clients = setup["client_hosts"]
    what = (f"capacity at p95 <= {setup['capacity_bound_ms']} ms, {setup.get('threads')} threads, {setup.get('duration_s')} s a step"
            if is_capacity(run.params) else f"{setup.get('threads')} threads, {setup.get('duration_s')} s")
    return InternalMethodology(
        slug=f"internal-{profile.slug[:70]}-{key}", name=f"{profile.name}: {what} ({key[:6]})",
        tool=profile.tool, tool_version=run.tool_version, workload=profile.workload,
        tables=setup.get("tables"), rows_per_table=setup.get("rows_per_table"), threads=setup.get("threads"),
        duration_s=setup.get("duration_s"), report_interval_s=setup.get("report_interval_s"),
        client=f"{clients} client host{'s' if clients > 1 else ''}" + (f", {run.client_cores} cores" if run.client_cores else ""),
        statements_per_transaction=statements_per_transaction(run.summary or {}),
        parameters={k: _shown(v) for k, v in shown.items()}, description=profile.description)


def _shown(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    return value


def _table_label(run, methodology):
    setup_id = methodology.slug.rsplit("-", 1)[-1][:6]
    if is_capacity(run.params):
        return (f"{run.profile.name} · {run.target.get_engine_display()} · capacity at p95 ≤ {run.params['capacity_bound_ms']} ms "
                f"(open-loop) · {methodology.threads} threads · {methodology.duration_s} s a step · set-up {setup_id}")
    return (f"{run.profile.name} · {run.target.get_engine_display()} · {methodology.threads} threads · "
            f"{methodology.duration_s} s · set-up {setup_id}")


def measurement_of(run, acknowledged_by=None):
    """What a published row carries about its run (whitepaper.measurement.Measurement): the run behind it, its flags
    (client-bound, other load and who acknowledged it, the latency caveat), its TPS interval and, for a run of a
    repeat group, the group's spread."""
    summary = run.summary or {}
    other, busy = run.other_load, disturbed_runs(run)
    who = acknowledged_by.get_username() if acknowledged_by else ""
    capacity = tps_ci = repeats = None
    n = 1
    found = summary.get("capacity") if is_capacity(run.params) else None
    if found:  # what the search found beside its sustained rate (the row's sustained_tps and latency_bound_ms)
        capacity = {k: found.get(k) for k in ("bound_ms", "budget_pct", "sustained_achieved_tps", "sustained_p95_ms",
                                              "failed_tps", "failed_p95_ms", "failed_reason")}
        capacity["steps"] = len(found.get("steps") or [])
    if run.repeat_group_id:
        members = series_members(run)
        key = "sustained_tps" if is_capacity(run.params) else "tps"
        values = [((m.summary or {}).get("capacity") or {}).get(key) if key == "sustained_tps" else (m.summary or {}).get("tps")
                  for m in members]
        repeats = history.group_spread(values, [m.pk for m in members])
        n = repeats["n"]
        if repeats["ci_low"] is not None and key == "tps":
            tps_ci = {"low": repeats["ci_low"], "high": repeats["ci_high"], "n": repeats["n"], "cv": repeats["cv"],
                      "method": repeats["method"]}
    return Measurement(
        run=run.pk, client_bound=run.client_bound, client_bound_cause=run.client_bound_cause,
        other_load={"steps": other, "acknowledged": True, "acknowledged_by": who} if other else None,
        latency_caveat=str(run.latency_caveat or ""),
        # The interval of a published figure is over runs (a series); one run's own samples only tell whether its
        # TPS held steady (`stability`), never how far the set-up's TPS may lie from it.
        n=n, tps_ci=tps_ci, repeats=repeats,
        stability=None if is_capacity(run.params) else summary.get("tps_ci"),
        disturbed={"runs": busy, "acknowledged": True, "acknowledged_by": who} if busy else None,
        capacity=capacity,
    )
