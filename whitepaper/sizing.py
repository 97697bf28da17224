"""Sizing, one definition for the sizing page and `/api/v1/sizing/`: which is the smallest published
flavour whose TPS (or QPS) reaches a target, per vendor, family, memory ratio and deployment
(`queries.smallest_reaching_once`: a flavour several documents print is listed once, the newest
document answering, the others kept on it as `also`).

By default (`latest` absent or true) only each flavour's newest published figure can answer: a figure an
older edition printed and a newer one revised (PostgreSQL 12 dedicated 64 vCPU: 10929.30 TPS in Huawei's
2023 paper, 8839.4 in its 2025 paper) never reaches a target on the old number. The older editions' rows
stay on the answer as `also`, and `revised` names the newest of them that printed another number.
`latest=false` answers from every edition, as the explorer does."""

from .editions import attach_older_editions
from .filters import ResultFilter
from .forms import SizingForm
from .models import Engine, PublishedResult


def sizing_form(params):
    """The sizing question as a bound SizingForm (engines: those with published results)."""
    engines = list(Engine.objects.filter(versions__results__isnull=False).distinct())
    editions = sorted(PublishedResult.objects.exclude(edition="").order_by().values_list("edition", flat=True).distinct())
    return SizingForm(params or None, engines=engines, editions=editions)


def sizing_filter(data):
    """The results a sizing question looks at (engine, version, vendor, deployment, edition; vendor-published unless
    `include_internal`), as a ResultFilter (invalid, e.g. an unknown vendor: it filters to nothing)."""
    filter_data = {"engine": data["engine"], "include_internal": data.get("include_internal") or False}
    for key in ("version", "vendor", "deployment", "edition"):
        if data.get(key):
            filter_data[key] = data[key]
    return ResultFilter(filter_data, queryset=PublishedResult.objects.all())


def smallest_flavours(data):
    """Per vendor, family, memory ratio and deployment: the smallest flavour whose published
    `data["metric"]` reaches `data["target"]`, smallest first (a SizingForm's cleaned data)."""
    metric, results = data["metric"] or "tps", sizing_filter(data).qs
    if data.get("latest") is False:
        answers = results.smallest_reaching_once(metric, data["target"])
        for r in answers:
            r.revised = None
        return answers
    answers = results.newest_per_variant().smallest_reaching_once(metric, data["target"])
    attach_older_editions(answers, metric, results)
    return answers
