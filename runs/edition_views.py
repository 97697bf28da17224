"""A campaign's edition, for staff (issue 47.4-5): the review page (the drafted tables and methodology, the diff
against the previous edition of the series with the verdict rule's word on each changed figure, and the reference
document's printed figures beside ours with what differs in the set-up), drafting, publishing, retracting, and the
data file. Operators read the review; staff draft, publish and retract."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from config.permissions import is_staff
from whitepaper import charts

from .campaign_edition import (EditionError, draft_edition, draft_tables, export_text, other_load_runs, publish_edition,
                               reference_rows, retract_edition, review)
from .models import Campaign
from .permissions import operator_required


def _campaign(pk):
    return get_object_or_404(Campaign.objects.select_related("profile", "reference", "edition", "drafted_by"), pk=pk)


def review_url(campaign):
    return reverse("runs:campaign-edition", args=[campaign.pk])


@operator_required
@require_http_methods(["GET", "POST"])
def campaign_edition(request, pk):
    campaign = _campaign(pk)
    if request.method == "POST":
        return _act(request, campaign)
    context = {"campaign": campaign, "draft": campaign.draft or None, "may_publish": is_staff(request.user),
               "tables": draft_tables(campaign.draft) if campaign.draft else [],
               "reference": reference_rows(campaign) if campaign.draft else [],
               "other_load_runs": other_load_runs(campaign.draft) if campaign.draft and not campaign.edition_id else []}
    if campaign.draft:
        context["previous"], context["diff_tables"] = review(campaign)
        context.update(draft_chart(context["tables"]))
    return render(request, "runs/campaign_edition.html", context)


def draft_chart(tables):
    """The draft's TPS and QPS against vCPUs, a line per table (engine version, family, memory ratio), as the
    published document's charts draw them (static/js/charts.js); a point goes to its table."""
    metrics = [name for name in ("tps", "qps") if any(r.get(name) for t in tables for r in t["rows"])]
    series = []
    for position, table in enumerate(tables, start=1):
        points = [{"x": int(r["vcpus"]), "memory_gb": float(r["memory_gb"]), "flavor": "", "id": position,
                   "url": f"#edition-table-{position}", **{m: float(r[m]) if r.get(m) else None for m in metrics},
                   "printed": {m: r[m] for m in metrics if r.get(m)}} for r in table["rows"]]
        series.append({"label": table["label"], "points": sorted(points, key=lambda p: (p["x"], p["memory_gb"]))})
    if not metrics:
        return {"chart": None, "chart_rows": []}
    chart = {"id": "edition-chart", "data_id": "edition-chart-data", "title": _("The draft's TPS and QPS against vCPUs"),
             "x_label": _("vCPUs"), "per_core_label": _("per vCPU"), "kind": "line", "initial_metric": metrics[0],
             "initial_per_core": False, "metrics": [charts.metric_spec(m) for m in metrics], "series": series,
             "point_caption": _("A point goes to its table above.")}
    chart["summary"] = charts.summary(chart, metrics[0])
    return {"chart": chart, "chart_rows": charts.chart_rows(chart)}


def _act(request, campaign):
    """POST action=draft | publish (with confirm=yes) | retract: staff only; each refusal said, nothing changed."""
    if not is_staff(request.user):
        raise PermissionDenied(_("Only staff can draft, publish or retract an edition."))
    action = request.POST.get("action")
    try:
        if action == "draft":
            draft_edition(campaign, request.user)
            messages.success(request, _("Drafted from the cells finished so far: review it below."))
        elif action == "publish":
            if request.POST.get("confirm") != "yes":
                raise EditionError(_("Tick “I have reviewed the draft” to publish it."))
            document = publish_edition(campaign, request.user,
                                       acknowledge_other_load=request.POST.get("acknowledge_other_load") == "on")
            messages.success(request, _("Published as %(slug)s.") % {"slug": document.slug})
        elif action == "retract":
            retract_edition(campaign)
            messages.success(request, _("The edition was retracted: its document is gone from the catalogue."))
        else:
            raise EditionError(_("Unknown action “%(action)s”: draft, publish or retract.") % {"action": action or ""})
    except ValidationError as exc:  # EditionError, or the missing acknowledgement of other load
        messages.error(request, " ".join(exc.messages))
        return redirect(review_url(campaign))
    return redirect(review_url(campaign))


@operator_required
@require_GET
def campaign_edition_file(request, pk):
    """The drafted edition as the data file a catalogue imports (whitepaper/data/README.md)."""
    campaign = _campaign(pk)
    if not campaign.draft:
        return HttpResponse(_("Campaign %(id)s has no drafted edition.") % {"id": campaign.pk}, status=404,
                            content_type="text/plain; charset=utf-8")
    response = HttpResponse(export_text(campaign), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.draft["document"]["slug"]}.yaml"'
    return response
