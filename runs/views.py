"""Staff pages for targets and runs. Anonymous users are sent to the login page; logged-in users who
are neither staff nor benchmark operators get 403. Every change is a POST with CSRF."""

from functools import wraps

import django_filters
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from whitepaper.models import PublishedResult

from .connections import ConnectionFailed, server_version
from .forms import RunForm, TargetForm
from .models import BenchmarkProfile, Run, RunState, Target, is_operator
from .publish import publish_run
from .services import launch_run


def operator_required(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_operator(request.user):
            raise PermissionDenied(_("Targets and runs are for staff and benchmark operators."))
        return view(request, *args, **kwargs)

    return wrapped


def may_change(user, run):
    """Staff may cancel or publish any run; an operator only the runs they asked for."""
    return user.is_staff or run.requested_by_id == user.pk


# --- targets ---------------------------------------------------------------------------------------
@operator_required
def target_list(request):
    targets = Target.objects.select_related("flavor")
    return render(request, "runs/target_list.html", {"targets": targets})


@operator_required
def target_form(request, pk=None):
    target = get_object_or_404(Target, pk=pk) if pk else None
    form = TargetForm(request.POST or None, instance=target)
    if request.method == "POST" and form.is_valid():
        target = form.save(commit=False)
        if not target.pk:
            target.created_by = request.user
        target.save()
        messages.success(request, _("Target %(name)s saved.") % {"name": target.name})
        return redirect("runs:target-list")
    return render(request, "runs/target_form.html", {"form": form, "target": target})


@operator_required
@require_POST
def target_test(request, pk):
    """'Test connection': read the server version with the stored password; answers the htmx partial."""
    target = get_object_or_404(Target, pk=pk)
    try:
        target.server_version = server_version(target)
        target.version_checked_at = timezone.now()
        target.save(update_fields=["server_version", "version_checked_at"])
        result = {"ok": True, "message": target.server_version}
    except ConnectionFailed as exc:
        result = {"ok": False, "message": str(exc)}
    except ValueError as exc:  # the password cannot be decrypted with the current key
        result = {"ok": False, "message": str(exc)}
    return render(request, "runs/target_list.html#test-result", {"target": target, "result": result})


# --- runs --------------------------------------------------------------------------------------------
class RunFilter(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=RunState.choices, label=gettext_lazy("state"), empty_label=gettext_lazy("any"))
    target = django_filters.ModelChoiceFilter(queryset=Target.objects.all(), label=gettext_lazy("target"))
    tool = django_filters.ChoiceFilter(field_name="profile__tool", choices=[("sysbench", "sysbench"), ("pgbench", "pgbench")],
                                       label=gettext_lazy("tool"), empty_label=gettext_lazy("any"))
    mine = django_filters.BooleanFilter(method="filter_mine", label=gettext_lazy("only mine"))

    class Meta:
        model = Run
        fields = ["state", "target", "tool"]

    def filter_mine(self, queryset, name, value):
        return queryset.filter(requested_by=self.request.user) if value else queryset


@operator_required
def run_list(request):
    filterset = RunFilter(request.GET, queryset=Run.objects.for_list(), request=request)
    runs = filterset.qs[:200] if filterset.is_valid() else Run.objects.none()
    template = "runs/run_list.html#run-table" if request.headers.get("HX-Request") else "runs/run_list.html"
    return render(request, template, {"filter": filterset, "runs": runs})


@operator_required
def run_new(request):
    reproduces = None
    initial = {}
    if request.method == "GET":
        initial = {k: v for k, v in request.GET.items() if k in ("target", "profile")}
        if request.GET.get("reproduce", "").isdigit():
            reproduces = (PublishedResult.objects.select_related("table__methodology", "engine_version__engine", "flavor")
                          .filter(pk=request.GET["reproduce"]).first())
        if reproduces:
            initial.update(reproduction_initial(reproduces))
    data = request.POST or None
    engine = None
    target_id = (data or {}).get("target") or initial.get("target")
    if target_id and str(target_id).isdigit():
        engine = Target.objects.filter(pk=target_id).values_list("engine", flat=True).first()
    form = RunForm(data, initial=initial, engine=engine)
    if request.method == "POST" and form.is_valid():
        reproduces_id = form.cleaned_data.get("reproduces")
        try:
            with transaction.atomic():
                run = launch_run(target=form.cleaned_data["target"], profile=form.cleaned_data["profile"],
                                 overrides=form.cleaned_data["overrides"], user=request.user,
                                 reproduces=PublishedResult.objects.filter(pk=reproduces_id).first() if reproduces_id else None)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            return redirect(run)
    if request.headers.get("HX-Request") and request.method == "GET":
        return render(request, "runs/run_form.html#profile-field", {"form": form})
    return render(request, "runs/run_form.html", {"form": form, "reproduces": reproduces})


def reproduction_initial(result):
    """Pre-fill the run form from a published row: the profile of its methodology's tool and engine."""
    methodology = result.table.methodology
    engine = result.engine_version.engine.slug
    profiles = BenchmarkProfile.objects.filter(tool=methodology.tool or "sysbench", engine=engine, quick=False)
    if methodology.tool == "pgbench":
        profiles = profiles.filter(workload="rw" if result.rw_qps and not result.ro_qps else "ro")
    profile = profiles.first()
    initial = {"reproduces": result.pk}
    if profile:
        initial["profile"] = profile.pk
    if methodology.threads:
        initial["threads"] = methodology.threads
    if methodology.duration_s:
        initial["duration_s"] = methodology.duration_s
    if methodology.tables and methodology.tool == "sysbench":
        initial["tables"] = methodology.tables
    if methodology.rows_per_table and methodology.tool == "sysbench":
        initial["rows_per_table"] = methodology.rows_per_table
    if methodology.report_interval_s:
        initial["report_interval_s"] = methodology.report_interval_s
    target = Target.objects.filter(engine=engine, vcpus=result.flavor.vcpus, memory_gb=result.flavor.memory_gb).first()
    if target:
        initial["target"] = target.pk
    return initial


def _run_context(run):
    percent, eta = run.progress()
    measured = run.summary or {}
    comparison = None
    if run.reproduces_id and measured.get("tps") is not None:
        published = run.reproduces
        comparison = [
            {"metric": name.upper(), "published": published.display(name), "measured": measured.get(name),
             "ratio": (float(measured[name]) / float(getattr(published, name))) if measured.get(name) and getattr(published, name) else None}
            for name in ("tps", "qps") if getattr(published, name) is not None
        ]
    steps = (run.params or {}).get("thread_sweep") or [(run.params or {}).get("threads") or 0]
    client_heavy = bool(run.client_cores) and max(steps) > 4 * run.client_cores
    return {"run": run, "percent": percent, "eta": eta, "comparison": comparison, "client_heavy": client_heavy,
            "log_tail": "\n".join(run.log.splitlines()[-40:])}


@operator_required
def run_detail(request, pk):
    run = get_object_or_404(
        Run.objects.select_related("target", "profile", "requested_by", "reproduces__table__document",
                                   "reproduces__flavor", "published_result__table__document"), pk=pk)
    context = _run_context(run)
    context["may_change"] = may_change(request.user, run)
    template = "runs/run_detail.html#status" if request.headers.get("HX-Request") else "runs/run_detail.html"
    return render(request, template, context)


@operator_required
@require_POST
def run_cancel(request, pk):
    run = get_object_or_404(Run, pk=pk)
    if not may_change(request.user, run):
        raise PermissionDenied(_("You can only cancel your own runs."))
    if run.cancel(reason=_("Cancelled by %(user)s.") % {"user": request.user.get_username()}):
        messages.info(request, _("Cancel requested: the tool is stopped and its tables dropped."))
    else:
        messages.warning(request, _("Run %(id)s has already finished (%(state)s).") % {"id": run.pk, "state": run.get_state_display()})
    return redirect(run)


@operator_required
@require_POST
def run_publish(request, pk):
    run = get_object_or_404(Run, pk=pk)
    if not may_change(request.user, run):
        raise PermissionDenied(_("You can only publish your own runs."))
    try:
        result = publish_run(run.pk)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Published as row %(pos)s of “%(table)s”.") % {"pos": result.position, "table": result.table.label})
    return redirect(run)
