"""Staff pages for targets and runs. Anonymous users are sent to the login page; logged-in users who
are neither staff nor benchmark operators get 403. Every change is a POST with CSRF."""

import hashlib
import json
from urllib.parse import urlencode

import django_filters
from django import forms
from django.contrib import messages
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadhandler import MemoryFileUploadHandler
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from config.htmx import wants_partial
from config.limits import IdChoiceField, IdField
from config.permissions import staff_required
from whitepaper.display import parameter_label

from . import actions, compare, history
from .access import ConnectionFailed, TargetAccess
from .clients import client_rows
from .drivers import RUNNABLE_TOOL_CHOICES, RUNNABLE_TOOLS
from .forms import ProfileForm, RetractForm, RunForm, ScheduleForm, TargetForm, profile_initial
from .insight import CLIENT_BOUND_CPU_PCT, OTHER_LOAD_TOLERANCE_PCT
from .leftovers import drop_leftovers
from .models import DEFAULT_INTERLEAVED_REPEATS, BenchmarkProfile, RepeatGroup, Run, RunState, Schedule, Target
from .permissions import PROFILE_IS_METHODOLOGY, check_may_change_run, may_change_run, may_edit_profile, operator_required
from .params import NAMES as PARAMETER_NAMES
from .params import PARAMETERS, client_count, thread_steps
from .publish import measurement_setup, publish_preview, publish_run, retract_run
from .record import csv_response, json_response
from .reproduce import (
    is_faithful,
    methodology_differences,
    plan_reproduction,
    reproduced_result,
)
from .schedules import delete_schedule, save_schedule
from .services import launch_interleaved, launch_run, profile_in_use


# --- targets ---------------------------------------------------------------------------------------
@operator_required
def target_list(request):
    archived = request.GET.get("archived") == "1"
    targets = Target.objects.select_related("flavor__family", "flavor__vendor").filter(archived_at__isnull=not archived)
    return render(request, "runs/target_list.html", {"targets": targets, "archived": archived})


@csrf_exempt  # checked below, once the upload handlers are set (Django reads the body for the CSRF check)
@operator_required
def target_form(request, pk=None):
    # Uploaded certificates and keys stay in memory, so a key never lands in a temporary file. (An upload bigger
    # than FILE_UPLOAD_MAX_MEMORY_SIZE is not read at all: the form says so.)
    request.upload_handlers = [MemoryFileUploadHandler(request)]
    return _target_form(request, pk)


@csrf_protect
def _target_form(request, pk):
    target = get_object_or_404(Target, pk=pk) if pk else None
    form = TargetForm(request.POST or None, request.FILES or None, instance=target)
    if request.method == "POST" and int(request.META.get("CONTENT_LENGTH") or 0) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE:
        form.add_error(None, _("The upload is larger than %(max)s bytes: a certificate or key file is a few kB.") % {
            "max": settings.FILE_UPLOAD_MAX_MEMORY_SIZE})
    if request.method == "POST" and form.is_valid():
        target = form.save(commit=False)
        if not target.pk:
            target.created_by = request.user
        target.save()
        messages.success(request, _("Target %(name)s saved.") % {"name": target.name})
        return redirect("runs:target-list")
    return render(request, "runs/target_form.html", {"form": form, "target": target})


# --- profiles ----------------------------------------------------------------------------------------
@operator_required
def profile_list(request):
    profiles = (BenchmarkProfile.objects.select_related("methodology").annotate(run_count=Count("runs", distinct=True))
                .order_by("tool", "engine", "quick", "name"))
    return render(request, "runs/profile_list.html", {"profiles": profiles})


@operator_required
def profile_form(request, pk=None):
    """Create or edit a profile (operators); one that follows a published methodology only staff change: an operator
    sees it read-only with "copy" (?copy=<id>: a new profile filled with its values)."""
    profile = get_object_or_404(BenchmarkProfile, pk=pk) if pk else None
    editable = may_edit_profile(request.user, profile)
    if request.method == "POST" and not editable:
        raise PermissionDenied(PROFILE_IS_METHODOLOGY)
    form = ProfileForm(request.POST or None, instance=profile, initial=_profile_copy(request) if profile is None else None)
    if request.method == "POST" and form.is_valid():
        profile = form.save()
        messages.success(request, _("Profile %(name)s saved.") % {"name": profile.name})
        return redirect("runs:profile-list")
    if not editable:
        for field in form.fields.values():
            field.disabled = True
    return render(request, "runs/profile_form.html", {"form": form, "profile": profile, "editable": editable,
                                                      "in_use": profile_in_use(profile) if profile else ""})


def _profile_copy(request):
    """A new profile's values: those of ?copy=<id> (a new slug and name, no methodology), else the defaults."""
    source = request.GET.get("copy", "")
    original = BenchmarkProfile.objects.filter(pk=source).first() if source.isascii() and source.isdigit() else None
    if original is None:
        return None
    initial = forms.models.model_to_dict(original, fields=ProfileForm._meta.fields)
    initial.update(slug=f"{original.slug}-copy"[:80], name=_("%(name)s (copy)") % {"name": original.name},
                   thread_sweep=", ".join(str(v) for v in original.thread_sweep or []) if isinstance(original.thread_sweep, list) else "")
    return initial


@operator_required
@require_http_methods(["GET", "POST"])
def profile_delete(request, pk):
    """GET asks for confirmation; POST deletes a profile no run or schedule names (operators; a methodology's: staff)."""
    profile = get_object_or_404(BenchmarkProfile, pk=pk)
    if not may_edit_profile(request.user, profile):
        raise PermissionDenied(PROFILE_IS_METHODOLOGY)
    refusal = profile_in_use(profile)
    if request.method != "POST" or refusal:
        return render(request, "runs/profile_delete.html", {"profile": profile, "refusal": refusal},
                      status=409 if refusal and request.method == "POST" else 200)
    profile.delete()
    messages.success(request, _("Profile %(name)s deleted.") % {"name": profile.name})
    return redirect("runs:profile-list")


@operator_required
@require_POST
def target_test(request, pk):
    """'Test connection': read the server version with the stored password; answers the htmx partial."""
    target = get_object_or_404(Target, pk=pk)
    try:
        access = TargetAccess.of(target)
        found = access.bounded(access.check)  # a frozen server: "got no answer within 10 s", not a hung request
        target.server_version = found["version"]
        target.version_checked_at = timezone.now()
        target.save(update_fields=["server_version", "version_checked_at"])
        result = {"ok": True, "message": target.server_version, "tls": found["tls"], "verified": found["verified"]}
    except (ConnectionFailed, ValueError) as exc:  # ValueError: a secret cannot be decrypted with the current key
        result = {"ok": False, "message": str(exc)}
    return render(request, "runs/target_list.html#test-result", {"target": target, "result": result})


# --- runs --------------------------------------------------------------------------------------------
class IdChoiceFilter(django_filters.ModelChoiceFilter):
    field_class = IdChoiceField  # an id past what the database holds is a form error, not an OverflowError


class IdNumberFilter(django_filters.NumberFilter):
    field_class = IdField


class RunFilter(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=RunState.choices, label=gettext_lazy("state"), empty_label=gettext_lazy("any"))
    target = IdChoiceFilter(queryset=Target.objects.all(), label=gettext_lazy("target"))
    tool = django_filters.ChoiceFilter(field_name="profile__tool", choices=RUNNABLE_TOOL_CHOICES,
                                       label=gettext_lazy("tool"), empty_label=gettext_lazy("any"))
    # A checkbox: the default select offered "Unknown / Yes / No" and showed "Unknown" beside the label.
    mine = django_filters.BooleanFilter(method="filter_mine", label=gettext_lazy("only mine"), widget=forms.CheckboxInput)
    published_result = IdNumberFilter(field_name="published_result", label=gettext_lazy("published as result"),
                                                   widget=django_filters.widgets.forms.HiddenInput)

    class Meta:
        model = Run
        fields = ["state", "target", "tool"]

    def filter_mine(self, queryset, name, value):
        return queryset.filter(requested_by=self.request.user) if value else queryset


@operator_required
def run_list(request):
    runs = Run.objects.for_list().defer("log", "command_line", "server_settings", "insight", "client_info")
    filterset = RunFilter(request.GET, queryset=runs, request=request)
    runs = filterset.qs[:200] if filterset.is_valid() else Run.objects.none()
    template = "runs/run_list.html#run-table" if wants_partial(request) else "runs/run_list.html"
    return render(request, template, {"filter": filterset, "runs": runs})


def _htmx(request):
    """An htmx request for part of a page (a history restore gets the whole page: whitepaper.pages)."""
    return wants_partial(request)


def _trigger(request):
    return request.htmx.trigger_name if getattr(request, "htmx", None) else None


@operator_required
def run_new(request):
    """The run form. Reproducing a row (?reproduce=<result id>) pre-fills its methodology and offers only
    targets of its engine; a row that cannot run here says why. Choosing a target or profile re-renders
    the profile and parameter fields (htmx) keeping what was chosen."""
    source = request.POST if request.method == "POST" else request.GET
    reproduce_id = source.get("reproduce") or source.get("reproduces") or ""
    try:
        result = reproduced_result(reproduce_id)
    except ValidationError as exc:  # a malformed id or one naming no row: said, never silently dropped
        return render(request, "runs/run_form.html", {"plan": None, "form": None, "reproduce_error": " ".join(exc.messages)},
                      status=400)
    plan = plan_reproduction(result) if result else None
    if plan and plan.problem:
        return render(request, "runs/run_form.html", {"plan": plan, "form": None})
    target_id = source.get("target") or ""
    engine = Target.objects.filter(pk=target_id).values_list("engine", flat=True).first() if target_id.isdigit() else None
    engine = engine or (plan.engine if plan else None)
    if request.method == "POST":
        form = RunForm(request.POST, engine=engine)
        if plan:
            form.restrict_targets(plan.engine)
        if form.is_valid():
            try:
                run = launch_run(target=form.cleaned_data["target"], profile=form.cleaned_data["profile"],
                                 overrides=form.cleaned_data["overrides"], user=request.user,
                                 reproduces=plan.result if plan else None, repeats=form.cleaned_data.get("repeats"),
                                 confirm=form.cleaned_data.get("confirm", False))
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                return redirect(run)
        return render(request, "runs/run_form.html", {"form": form, "plan": plan})
    form = RunForm(initial=_run_form_initial(request, plan, engine), engine=engine)
    if plan:
        form.restrict_targets(plan.engine)
    if _htmx(request):
        return render(request, "runs/run_form.html#profile-fields", {"form": form, "plan": plan})
    return render(request, "runs/run_form.html", {"form": form, "plan": plan})


def _run_form_initial(request, plan, engine):
    """What the form shows: the reproduction's methodology, else the chosen profile's values; on an htmx
    re-render after a target change, what the user had typed."""
    initial = {k: v for k, v in request.GET.items() if k in ("target", "profile", "repeats", *PARAMETER_NAMES)}
    profile = None
    if str(initial.get("profile", "")).isdigit():
        profile = BenchmarkProfile.objects.filter(pk=initial["profile"], tool__in=RUNNABLE_TOOLS).first()
    if plan and (profile is None or profile.pk == plan.profile.pk) and _trigger(request) != "profile":
        profile = plan.profile
    if profile is not None and engine and profile.engine != engine:
        profile = None  # a target of another engine: choose again
    initial["profile"] = profile.pk if profile else ""
    if profile is None:
        return {k: v for k, v in initial.items() if k not in PARAMETER_NAMES}
    kept = _htmx(request) and _trigger(request) == "target"
    if not kept:  # a new profile (or a first visit): its own values, then the reproduction's
        initial.update(profile_initial(profile))
        if plan and profile.pk == plan.profile.pk:
            initial.update(plan.initial)
    return initial


def _run_context(run):
    """Everything the run page shows: its status, its set-up, its results and the log's tail."""
    log_tail, log_after = run.log_tail()
    return {**_status_context(run), **_setup_context(run), **_results_context(run), "log_tail": log_tail,
            "log_after": log_after}


def _status_context(run):
    """The status part: phase, headline, progress, what the run waits for, its repeats and warnings."""
    percent, eta = run.progress()
    measured = run.summary or {}
    return {"run": run, "percent": percent, "eta": eta, "best_step": _best_step(run), "client_bound_pct": f"{CLIENT_BOUND_CPU_PCT:g}",
            "waiting_for": run.waiting_for if run.state == RunState.QUEUED else None,
            "summary_threads": measured.get("threads") or (run.params or {}).get("threads"),
            "other_load": run.other_load, "other_load_tolerance": f"{OTHER_LOAD_TOLERANCE_PCT:g}",
            "repeat": _repeat_context(run)}


def _setup_context(run):
    """The set-up part: parameters, where it ran, the server's settings (set once, at the start)."""
    steps = thread_steps(run.params or {})
    return {"run": run, "parameters": run_parameters(run), "server_settings": sorted((run.server_settings or {}).items()),
            "client_heavy": bool(run.client_cores) and max(s or 0 for s in steps) > 4 * run.client_cores}


def _results_context(run):
    """The results part: the tool's final report, the clients, latency and evidence per step, published against
    measured (each step's part appears as the step ends, the summary when the run does)."""
    measured = run.summary or {}
    comparison = differences = None
    if run.reproduces_id and measured.get("tps") is not None:
        published = run.reproduces
        comparison = [
            {"metric": name.upper(), "published": published.display(name), "measured": measured.get(name),
             "ratio": (float(measured[name]) / float(getattr(published, name))) if measured.get(name) and getattr(published, name) else None}
            for name in ("tps", "qps") if getattr(published, name) is not None
        ]
    if run.reproduces_id:
        differences = methodology_differences(run)
    insight_steps = (run.insight or {}).get("steps") or []
    # The tools' own transaction counts; a run recorded before they were kept shows the logged count when
    # every transaction was logged, else none (a sample's count is not the run's).
    counts = [s.get("transactions") if s.get("transactions") is not None else
              ((s.get("latency") or {}).get("count") if (s.get("latency") or {}).get("sampling_rate", 1) == 1 else None)
              for s in insight_steps]
    all_steps_transactions = sum(counts) if counts and None not in counts else None
    insight_steps = [{**s, "shown_transactions": c} for s, c in zip(insight_steps, counts)]
    histogram = ((run.insight or {}).get("latency") or {}).get("histogram") or []
    return {"run": run, "best_step": _best_step(run), "comparison": comparison, "insight_steps": insight_steps,
            "all_steps_transactions": all_steps_transactions, "histogram_json": json.dumps(histogram),
            "differences": differences, "faithful": is_faithful(differences) if differences else None,
            "client_rows": client_rows(run)}


def _best_step(run):
    """A sweep's step with the highest TPS (its report is the summary); None for a single step, and for a capacity
    search (its result is the rate it sustains, runs/capacity.py)."""
    steps = (run.summary or {}).get("steps") or []
    return max(steps, key=lambda s: s.get("tps") or 0) if len(steps) > 1 and run.loop == "closed" else None


def _setup_key(run):
    """What the set-up part shows that changes while a run is live (it is re-sent only when this changes)."""
    return _key(run.worker, run.client_host, run.client_cores, run.tool_version, run.server_version, run.tls,
                run.round_trip, bool(run.client_info), run.server_settings_hash)


def _results_key(run):
    """What the results part shows that changes while a run is live: a step ending, the run ending, its clients."""
    clients = list(run.clients.values_list("index", "state", "host")) if client_count(run.params or {}) > 1 else []
    return _key(run.state, run.step, len((run.insight or {}).get("steps") or []), bool(run.summary),
                run.published_result_id, run.retracted_at, clients)


def _key(*values):
    return hashlib.sha256(repr(values).encode()).hexdigest()[:12]


def _live_context(run, request):
    """The run page's one update stream: every report interval, one request that brings the status, the new
    samples of both charts, the log's new lines, and the set-up or results part only when they changed."""
    cursors = {name: int(request.GET.get(name, "")) if request.GET.get(name, "").isdigit() else 0
               for name in ("after", "server_after", "log_after")}
    samples = list(run.samples.filter(id__gt=cursors["after"]).values(*LIVE_SAMPLE_FIELDS))
    server_samples = list(run.server_samples.filter(id__gt=cursors["server_after"]).values(*LIVE_SERVER_SAMPLE_FIELDS))
    if run.is_final:  # the whole tail once (the live rows became Run.log when it ended)
        log_append, log_after = None, 0
    else:
        log_append, log_after = run.log_after(cursors["log_after"])
    context = {**_status_context(run), "live": {"samples": samples, "server_samples": server_samples}, "oob": True,
               "log_append": log_append, "setup_key": _setup_key(run), "results_key": _results_key(run)}
    if run.is_final:
        context["log_tail"] = run.log_tail()[0]
    if context["setup_key"] != request.GET.get("setup"):
        context.update(_setup_context(run), setup_changed=True)
    if context["results_key"] != request.GET.get("results"):
        context.update(_results_context(run), results_changed=True)
    context["live_query"] = _live_query(run, samples, server_samples, log_after, context, cursors)
    return context


def _live_query(run, samples, server_samples, log_after, keys, cursors):
    return urlencode({"part": "live", "after": samples[-1]["id"] if samples else cursors["after"],
                      "server_after": server_samples[-1]["id"] if server_samples else cursors["server_after"],
                      "log_after": log_after, "setup": keys["setup_key"], "results": keys["results_key"]})


LIVE_SAMPLE_FIELDS = ("id", "step", "warmup", "t", "threads", "tps", "qps", "latency_p95_ms", "latency_avg_ms")
LIVE_SERVER_SAMPLE_FIELDS = ("id", "step", "warmup", "t", "server_tps", "running", "buffer_hit_pct", "client_cpu_pct")


def _repeat_context(run):
    """A run launched with repeats: its group's runs (state, TPS) and their n, mean and standard deviation."""
    if not run.repeat_group_id:
        return None
    members = list(run.repeat_group.runs.only("id", "state", "summary", "repeat_index").order_by("repeat_index", "id"))
    succeeded = [m for m in members if m.state == RunState.SUCCEEDED]
    return {"group": run.repeat_group, "runs": members, "complete": all(m.is_final for m in members),
            **history.stats([(m.summary or {}).get("tps") for m in succeeded]),
            "compare_ids": [m.pk for m in succeeded] if 2 <= len(succeeded) <= compare.MAX_RUNS else None,
            # An interleaved launch: its set-ups' groups, compared as series (paired on their blocks).
            "interleaved": list(RepeatGroup.objects.filter(launch=run.repeat_group.launch).order_by("position", "pk")
                                .values_list("pk", flat=True)) if run.repeat_group.launch else None}


def run_parameters(run):
    """The run's parameters as label/value rows, overrides marked."""
    params = run.params or {}
    rows = []
    labels = [(p.name, p.label) for p in PARAMETERS] + [("workload", gettext_lazy("workload"))]
    for name, label in labels:
        if name not in params or params[name] in (None, "", []):
            continue
        if name == "threads" and params.get("thread_sweep"):
            continue  # a sweep runs its own thread counts: the profile's single count is not run
        value = params[name]
        if isinstance(value, bool):
            value = _("on") if value else _("off")
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, int) and value >= 10_000:
            value = f"{value:,}"
        rows.append({"name": name, "label": label, "value": value, "overridden": name in (run.overrides or {})})
    return rows


def _get_run(pk):
    return get_object_or_404(
        Run.objects.select_related("target__flavor", "profile", "requested_by", "schedule", "repeat_group",
                                   "reproduces__table__document",
                                   "reproduces__table__methodology", "reproduces__flavor__family",
                                   "published_result__table__document", "retracted_by", "other_load_acknowledged_by"), pk=pk)


def _get_live_run(pk):
    """The run as a live poll reads it: the row without its ended log and settings (read only when the part that
    shows them is sent) and without its relations, which only some states show (a twelve-table join cost each poll
    about 50 ms of the database's time; joining the target and profile cost each poll 2 ms of CPU on 2026-11-26).
    The command line stays: the status part's latency caveat reads it on every poll (deferred, a query each)."""
    return get_object_or_404(Run.objects.defer("log", "server_settings"), pk=pk)


@operator_required
def run_detail(request, pk):
    """The run page; its htmx parts: `live` (the page's one update stream, _live_context) and `status`."""
    part = request.GET.get("part") if _htmx(request) else None
    run = _get_live_run(pk) if part == "live" else _get_run(pk)
    if part == "live":
        context = _live_context(run, request)
        template = "runs/run_detail.html#live"
    else:
        context = _run_context(run)
        context.update(setup_key=_setup_key(run), results_key=_results_key(run))
        context["live_query"] = urlencode({"part": "live", "setup": context["setup_key"],
                                           "results": context["results_key"], "log_after": context["log_after"]})
        template = "runs/run_detail.html#status" if part == "status" else "runs/run_detail.html"
    context["may_change"] = may_change_run(request.user, run)
    return render(request, template, context)


def run_record(request, pk):
    """The public record of a published run (anyone may read it, as the catalogue row it backs): its set-up, flags,
    TPS with its interval, the server-side evidence and its samples; never the target's name, host, user or
    credentials. A run that is not (or no longer) published is a 404."""
    run = get_object_or_404(Run.objects.select_related("profile", "target", "published_result__table__document"), pk=pk)
    result = run.published_result
    if result is None and run.repeat_group_id:  # one of the runs of a series published as one row: public with it
        published = (Run.objects.filter(repeat_group_id=run.repeat_group_id, published_result__isnull=False)
                     .select_related("published_result__table__document").first())
        result = published.published_result if published else None
    if result is None:
        raise Http404(_("No published run %(id)s.") % {"id": pk})
    return render(request, "runs/run_record.html", record_context(run, result))


def record_context(run, result):
    summary = run.summary or {}
    steps = summary.get("steps") or [summary]
    evidence = {s.get("step"): s for s in (run.insight or {}).get("steps") or []}
    points = {}
    for step, threads, t, tps in run.samples.filter(warmup=False).order_by("step", "t", "id").values_list("step", "threads", "t", "tps"):
        points.setdefault((step, threads), []).append({"x": t, "tps": tps})
    chart = {"id": "record-samples", "data_id": "record-samples-data", "title": _("TPS per report interval"),
             "x_label": _("seconds"), "metrics": [{"name": "tps", "label": "TPS"}], "initial_metric": "tps",
             "series": [{"label": _("step %(step)s · %(threads)s threads") % {"step": step, "threads": threads}, "points": pts}
                        for (step, threads), pts in points.items()],
             "summary": _("%(n)d interval samples of the tool, per step.") % {"n": sum(len(p) for p in points.values())}}
    cv = ((result.measurement or {}).get("repeats") or {}).get("cv")
    return {"run": run, "result": result, "measurement": result.measurement or {},
            "series_cv_pct": None if cv is None else round(100 * cv, 1),
            "setup": [(parameter_label(k), (_("on") if v else _("off")) if isinstance(v, bool) else v)
                      for k, v in measurement_setup(run).items()],
            "steps": [{**s, "evidence": evidence.get(s.get("step"), {})} for s in steps], "summary": summary,
            "chart": chart, "chart_rows": [{"series": s["label"], "x": p["x"], "memory_gb": "", "values": [p["tps"]]}
                                           for s in chart["series"] for p in s["points"]]}


@operator_required
def run_export(request, pk):
    """The whole run as one self-describing JSON file (runs/record.py), as the API's /runs/{id}/export/."""
    return json_response(_get_run(pk))


@operator_required
def run_samples_csv(request, pk):
    return csv_response(_get_run(pk))


@operator_required
@require_http_methods(["GET", "POST"])
def run_cancel(request, pk):
    """GET asks for confirmation; POST cancels."""
    run = _get_run(pk)
    check_may_change_run(request.user, run, _("You can only cancel your own runs."))
    if request.method != "POST":
        return render(request, "runs/run_confirm.html", {"run": run, "action": "cancel"})
    if actions.cancel(run, request.user):
        messages.info(request, _("Cancel requested: the tool is stopped and its tables dropped."))
    else:
        messages.warning(request, _("Run %(id)s has already finished (%(state)s).") % {"id": run.pk, "state": run.get_state_display()})
    return redirect(run)


@operator_required
@require_http_methods(["GET", "POST"])
def run_publish(request, pk):
    """GET shows what will be published and how the run's set-up differs from the row it reproduces;
    POST (the confirmation) publishes."""
    run = _get_run(pk)
    check_may_change_run(request.user, run, _("You can only publish your own runs."))
    if run.publish_refusal:  # a failed, cancelled, unfinished, open-loop or already published run has nothing to confirm
        messages.error(request, _("Run %(id)s cannot be published: %(why)s") % {"id": run.pk, "why": run.publish_refusal})
        return redirect(run)
    if request.method != "POST":
        context = _run_context(run)
        context.update(action="publish", preview=publish_preview(run))
        return render(request, "runs/run_confirm.html", context)
    try:
        result = publish_run(run.pk, user=request.user, acknowledge_other_load=request.POST.get("acknowledge_other_load") == "on")
    except ValidationError as exc:
        if "acknowledge_other_load" in getattr(exc, "error_dict", {}):
            context = _run_context(run)
            context.update(action="publish", preview=publish_preview(run), acknowledge_error=" ".join(exc.messages))
            return render(request, "runs/run_confirm.html", context, status=400)
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Published as an internal measurement: row %(pos)s of “%(table)s”.") % {
            "pos": result.position, "table": result.table.label})
    return redirect(run)


@staff_required(gettext_lazy("Only staff can retract a published run."))
@require_http_methods(["GET", "POST"])
def run_retract(request, pk):
    """Staff take a published run back out of the catalogue, with a reason kept on the run."""
    run = _get_run(pk)
    form = RetractForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            retract_run(run.pk, user=request.user, reason=form.cleaned_data["reason"])
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, _("Run %(id)s was retracted: its row is gone from the catalogue.") % {"id": run.pk})
        return redirect(run)
    return render(request, "runs/run_confirm.html", {"run": run, "action": "retract", "form": form})


@operator_required
@require_POST
def run_drop_leftovers(request, pk):
    """Drop the benchmark tables a run's dead worker left on the target (the reconciler could not reach it)."""
    run = _get_run(pk)
    check_may_change_run(request.user, run, _("You can only change your own runs."))
    try:
        dropped = drop_leftovers(run)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Dropped from the target: %(tables)s.") % {"tables": ", ".join(dropped) or _("nothing was left")})
    return redirect(run)


@operator_required
@require_POST
def target_archive(request, pk):
    """Archive (or restore) a target: archived targets take no new runs; their runs stay."""
    target = get_object_or_404(Target, pk=pk)
    target.archived_at = None if target.archived_at else timezone.now()
    target.save(update_fields=["archived_at"])
    if target.archived_at:
        messages.info(request, _("Target %(name)s archived: it takes no new runs; its runs stay.") % {"name": target.name})
    else:
        messages.info(request, _("Target %(name)s restored.") % {"name": target.name})
    return redirect("runs:target-list")


# --- comparing runs ---------------------------------------------------------------------------------
@operator_required
def run_compare(request):
    """2 to 6 runs side by side (?run=1&run=2[&base=1]): overlaid samples, TPS against threads, what
    differs, % against the baseline (runs/compare.py). Bad ids answer 400 naming the parameter."""
    return _compare_page(request, request.GET)


def _compare_page(request, query, launch_errors=None, status=200):
    try:
        selection = compare.parse_selection(query.getlist("run"), query.get("base"), query.getlist("group"),
                                            query.get("include_disturbed"))
    except ValidationError as exc:
        return render(request, "runs/run_compare.html", {"errors": exc.message_dict, "selected": query.getlist("run")},
                      status=400)
    data = compare.compare(selection)
    runs = selection.runs
    return render(request, "runs/run_compare.html", {
        "runs": runs, "data": data, "base": runs[selection.base_index], "rows": list(zip(runs, data["results"])),
        "selection_query": "&".join(f"{e.kind}={e.id}" for e in selection.entries),
        "interleave_entries": [selection.entries[selection.base_index].key]
                              + [e.key for i, e in enumerate(selection.entries) if i != selection.base_index],
        "interleave_repeats": query.get("repeats") or DEFAULT_INTERLEAVED_REPEATS, "launch_errors": launch_errors,
        "disturbed": sorted(pk for e in selection.entries for pk in e.disturbed),
        "folded_count": sum(d["folded"] for d in data["differences"]),
        "chart": {"samples": compare.samples(runs), "by_threads": data["by_threads"], "base": runs[selection.base_index].pk},
    }, status=status)


@operator_required
@require_POST
def run_compare_interleave(request):
    """The compared set-ups measured again as an interleaved comparison (issue 46.2): each entry's target, profile
    and overrides, the baseline first, `repeats` runs each in randomized blocks (runs/services.py). Then the
    compare page of the new repeat groups; a refused launch shows the compare page again with the errors, each
    naming its field as the API does (the baseline's by name, a further set-up's as interleave.<i>.<field>)."""
    query = request.POST.copy()
    query.setlist("run", [key.partition(":")[2] for key in request.POST.getlist("entry") if key.startswith("run:")])
    query.setlist("group", [key.partition(":")[2] for key in request.POST.getlist("entry") if key.startswith("group:")])
    try:
        selection = compare.parse_selection(query.getlist("run"), None, query.getlist("group"))
    except ValidationError as exc:
        return render(request, "runs/run_compare.html", {"errors": exc.message_dict}, status=400)
    by_key = {e.key: e for e in selection.entries}
    setups = [{"target": by_key[key].rep.target, "profile": by_key[key].rep.profile, "overrides": by_key[key].rep.overrides}
              for key in request.POST.getlist("entry") if key in by_key]
    try:
        groups = launch_interleaved(setups, user=request.user, repeats=request.POST.get("repeats") or DEFAULT_INTERLEAVED_REPEATS,
                                    confirm=request.POST.get("confirm") == "on")
    except ValidationError as exc:
        query["base"] = request.POST.getlist("entry")[0]
        return _compare_page(request, query, launch_errors=exc.message_dict, status=400)
    messages.info(request, _("%(n)d set-ups launched interleaved, %(repeats)d runs each: this page fills in as they finish.")
                  % {"n": len(groups), "repeats": groups[0].count})
    return redirect(reverse("runs:run-compare") + "?" + urlencode([("group", g.pk) for g in groups]))


# --- history and regressions ------------------------------------------------------------------------
@operator_required
def run_series(request):
    """The succeeded runs of one target and profile over time (?target=<id>&profile=<id>): trend chart,
    repeats of one set-up (n, mean, standard deviation), each run's judgement (runs/history.py)."""
    target_id, profile_id = request.GET.get("target", ""), request.GET.get("profile", "")
    target = Target.objects.filter(pk=target_id).first() if target_id.isdigit() else None
    profile = BenchmarkProfile.objects.filter(pk=profile_id).first() if profile_id.isdigit() else None
    if target is None or profile is None:
        errors = {name: [_("Choose an existing %(name)s (its id).") % {"name": name}]
                  for name, obj in (("target", target), ("profile", profile)) if obj is None}
        return render(request, "runs/run_series.html", {"errors": errors}, status=400)
    runs, groups, repeats = history.series(target, profile)
    group_of = {r.pk: g["index"] for g in groups for r in g["runs"]}
    chart = {"labels": [f"#{r.pk} {r.finished_at:%Y-%m-%d %H:%M}" if r.finished_at else f"#{r.pk}" for r in runs],
             "groups": [{"label": g["label"], "points": [(r.summary or {}).get("tps") if group_of[r.pk] == g["index"] else None for r in runs]}
                        for g in groups],
             "regressions": [i for i, r in enumerate(runs) if r.regression],
             "bands": [(r.trend or {}).get("interval") for r in runs]}
    return render(request, "runs/run_series.html", {"target": target, "profile": profile, "runs": list(reversed(runs)),
                                                    "groups": groups, "repeats": repeats, "chart": chart,
                                                    "settings": history.rule()})


@operator_required
def run_regressions(request):
    """Every run judged a regression, newest first, with its series and the earlier run to compare."""
    runs = (Run.objects.for_list().regression_results()
            .defer("log", "command_line", "server_settings", "insight", "client_info").order_by("-finished_at", "-id")[:200])
    return render(request, "runs/run_regressions.html", {"runs": runs, "settings": history.rule()})


# --- schedules --------------------------------------------------------------------------------------
@operator_required
def schedule_list(request):
    """Schedules with their next state: enabled, last runs, and whether they keep failing."""
    schedules = list(Schedule.objects.select_related("target", "profile", "periodic_task", "created_by"))
    recent = {}
    for run in (Run.objects.filter(schedule__in=schedules).only("id", "state", "schedule_id", "created_at")
                .order_by("schedule_id", "-created_at", "-id")):
        recent.setdefault(run.schedule_id, []).append(run)
    rows = [{"schedule": s, "runs": recent.get(s.pk, [])[:5], "failing": s.keeps_failing(recent.get(s.pk, []))} for s in schedules]
    return render(request, "runs/schedule_list.html", {"rows": rows})


@staff_required(gettext_lazy("Only staff can schedule runs."))
@require_http_methods(["GET", "POST"])
def schedule_form(request, pk=None):
    schedule = get_object_or_404(Schedule, pk=pk) if pk else None
    form = ScheduleForm(request.POST or None, instance=schedule)
    if request.method == "POST" and form.is_valid():
        schedule = form.save(commit=False)
        if not schedule.pk:
            schedule.created_by = request.user
        save_schedule(schedule)
        messages.success(request, _("Schedule %(name)s saved.") % {"name": schedule.name})
        return redirect("runs:schedule-list")
    return render(request, "runs/schedule_form.html", {"form": form, "schedule": schedule})


@staff_required(gettext_lazy("Only staff can delete schedules."))
@require_http_methods(["GET", "POST"])
def schedule_delete(request, pk):
    """GET asks for confirmation; POST deletes the schedule and its beat entry (its runs stay)."""
    schedule = get_object_or_404(Schedule.objects.select_related("target", "profile"), pk=pk)
    if request.method != "POST":
        return render(request, "runs/schedule_delete.html", {"schedule": schedule, "run_count": schedule.runs.count()})
    delete_schedule(schedule)
    messages.success(request, _("Schedule %(name)s deleted; its runs stay.") % {"name": schedule.name})
    return redirect("runs:schedule-list")
