"""Sizing, one definition for the sizing page and `/api/v1/sizing/`: which is the smallest published
flavour whose TPS (or QPS) reaches a target, per vendor, family, memory ratio and deployment
(`queries.smallest_reaching_once`: a flavour several documents print is listed once, the newest
document answering, the others kept on it as `also`)."""

from .filters import ResultFilter
from .forms import SizingForm
from .models import Engine, PublishedResult


def sizing_form(params):
    """The sizing question as a bound SizingForm (engines: those with published results)."""
    engines = list(Engine.objects.filter(versions__results__isnull=False).distinct())
    return SizingForm(params or None, engines=engines)


def sizing_filter(data):
    """The results a sizing question looks at (engine, version, vendor; vendor-published unless
    `include_internal`), as a ResultFilter (invalid, e.g. an unknown vendor: it filters to nothing)."""
    filter_data = {"engine": data["engine"], "include_internal": data.get("include_internal") or False}
    for key in ("version", "vendor"):
        if data.get(key):
            filter_data[key] = data[key]
    return ResultFilter(filter_data, queryset=PublishedResult.objects.all())


def smallest_flavours(data):
    """Per vendor, family, memory ratio and deployment: the smallest flavour whose published
    `data["metric"]` reaches `data["target"]`, smallest first (a SizingForm's cleaned data)."""
    return sizing_filter(data).qs.smallest_reaching_once(data["metric"] or "tps", data["target"])
