"""The campaign pages (issue 47.1-3), for operators: the list, the launch form and a campaign's page, live while it
runs: the matrix of targets against rounds (each round's run, its state and TPS), each cell's series (n, mean TPS,
95 % interval, coefficient of variation), the time left and the TPS-versus-vCPUs chart per family and memory ratio
filling in as cells finish. One template partial (`live`) is the page's part and its htmx update; it asks again
every few seconds until the campaign has ended. Pause, resume and cancel go through runs/campaigns.py."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from config.htmx import wants_partial
from whitepaper import charts
from whitepaper.internal import declared_ratio

from .campaigns import (cancel_campaign, cells, launch_campaign, pause_campaign, resume_campaign, state_of_cells,
                        time_left)
from .footprint import describe
from .forms import CampaignForm
from .models import Campaign
from .params import NAMES as PARAMETER_NAMES
from .permissions import check_may_change_campaign, may_change_campaign, operator_required

FINAL = ("finished", "cancelled")
LIVE_EVERY_SECONDS = 3


@operator_required
def campaign_list(request):
    campaigns = (Campaign.objects.select_related("profile", "created_by").annotate(targets=Count("cells"))
                 .order_by("-created_at", "-id")[:200])
    return render(request, "runs/campaign_list.html", {"campaigns": campaigns})


@operator_required
@require_http_methods(["GET", "POST"])
def campaign_new(request):
    """The launch form: every error named by its field (a target's as "targets.<i>.<field>"), nothing stored."""
    form = CampaignForm(request.POST or None)
    launch_errors, footprint = {}, None
    estimate_only = request.POST.get("action") == "estimate"  # "Estimate": the whole campaign's footprint, nothing launched
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            found = launch_campaign(name=data["name"], profile=data["profile"], overrides=data["overrides"],
                                    targets=list(data["targets"]), user=request.user, repeats=data.get("repeats"),
                                    reference=data.get("reference"), confirm=data.get("confirm", False),
                                    estimate_only=estimate_only)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                if field in form.fields:
                    form.add_error(field, errors)
                else:
                    launch_errors[field] = errors  # a target's own (targets.<i>.<field>): named as such
        else:
            if not estimate_only:
                return redirect("runs:campaign-detail", pk=found.pk)
            footprint = describe(found)
    status = 400 if request.method == "POST" and footprint is None else 200
    return render(request, "runs/campaign_form.html", {
        "form": form, "launch_errors": launch_errors, "footprint": footprint,
        "parameter_fields": [form[name] for name in PARAMETER_NAMES]}, status=status)


def campaign_context(campaign):
    found = cells(campaign)
    state = state_of_cells(campaign, found)
    rounds = list(range(1, campaign.repeats + 1))
    for cell in found:
        cell.row = [cell.rounds.get(r) for r in rounds]
    seconds = None if state in FINAL else time_left(campaign)
    return {"campaign": campaign, "cells": found, "rounds": rounds, "state": state, "final": state in FINAL,
            "minutes_left": None if seconds is None else max(1, round(seconds / 60)), "live_every": LIVE_EVERY_SECONDS,
            **_chart(campaign, found)}


def _chart(campaign, found):
    """TPS against vCPUs, a line per family and memory ratio, a point per cell with a series: the catalogue's chart
    (static/js/charts.js draws it, again after each htmx update)."""
    lines = {}
    for cell in found:
        if cell.series is None:
            continue
        key = " · ".join(filter(None, [cell.family or _("family not stated"), declared_ratio(cell.vcpus, cell.memory_gb)]))
        lines.setdefault(key, []).append({
            "x": cell.vcpus, "memory_gb": cell.memory_gb, "flavor": "", "id": cell.pk, "url": f"#cell-{cell.pk}",
            "tps": round(cell.series.mean, 2), "printed": {"tps": f"{cell.series.mean:.2f}"}})
    if not lines:
        return {"chart": None, "chart_rows": []}
    chart = {"id": "campaign-chart", "data_id": "campaign-chart-data", "title": _("Mean TPS of each cell against vCPUs"),
             "x_label": _("vCPUs"), "per_core_label": _("per vCPU"), "kind": "line", "initial_metric": "tps",
             "initial_per_core": False, "metrics": [charts.metric_spec("tps")],
             "point_caption": _("A point goes to its cell's series below."),
             "series": [{"label": k, "points": sorted(v, key=lambda p: (p["x"], p["memory_gb"]))} for k, v in lines.items()]}
    chart["summary"] = charts.summary(chart, "tps")
    return {"chart": chart, "chart_rows": charts.chart_rows(chart)}


@operator_required
def campaign_detail(request, pk):
    campaign = get_object_or_404(Campaign.objects.select_related("profile", "reference", "edition", "created_by"), pk=pk)
    context = campaign_context(campaign)
    context["may_change"] = may_change_campaign(request.user, campaign)
    template = "runs/campaign_detail.html#live" if wants_partial(request) else "runs/campaign_detail.html"
    return render(request, template, context)


ACTIONS = {  # what each button does, and what the page says after it (done, nothing to do)
    "pause": (pause_campaign, gettext_lazy("Paused: no run of it starts until it resumes; its active runs finish."),
              gettext_lazy("Nothing to pause: it is paused already or has no run left to start.")),
    "resume": (resume_campaign, gettext_lazy("Resumed: its held runs are queued again, in their rounds' order."),
               gettext_lazy("Nothing to resume: it is not paused.")),
    "cancel": (cancel_campaign, gettext_lazy("Cancelled: its queued runs at once, its active runs asked to stop; finished "
                                             "runs kept."), gettext_lazy("Nothing to cancel: every run of it has ended.")),
}


@operator_required
@require_POST
def campaign_action(request, pk, action):
    campaign = get_object_or_404(Campaign, pk=pk)
    check_may_change_campaign(request.user, campaign, _("You can only change your own campaigns."))
    do, done, nothing = ACTIONS[action]
    changed = do(campaign, request.user) if action == "cancel" else do(campaign)
    (messages.success if changed else messages.error)(request, str(done if changed else nothing))
    return redirect("runs:campaign-detail", pk=campaign.pk)
