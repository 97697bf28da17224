"""Sizing, one definition for the sizing page and `/api/v1/sizing/`: which is the smallest published
flavour whose TPS (or QPS) reaches a target, per vendor, family, memory ratio and deployment
(`queries.smallest_reaching_once`: a flavour several documents print is listed once, the newest
document answering, the others kept on it as `also`).

By default (`latest` absent or true) only each flavour's newest published figure can answer: a figure an
older edition printed and a newer one revised (PostgreSQL 12 dedicated 64 vCPU: 10929.30 TPS in Huawei's
2023 paper, 8839.4 in its 2025 paper) never reaches a target on the old number. The older editions' rows
stay on the answer as `also`, and `revised` names the newest of them that printed another number.
`latest=false` answers from every edition, as the explorer does."""

from .filters import ResultFilter
from .forms import SizingForm
from .models import Engine, PublishedResult
from .queries import NEWEST_DOCUMENT_FIRST, variant_key


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
    metric, results = data["metric"] or "tps", sizing_filter(data).qs
    if data.get("latest") is False:
        answers = results.smallest_reaching_once(metric, data["target"])
        for r in answers:
            r.revised = None
        return answers
    answers = results.newest_per_variant().smallest_reaching_once(metric, data["target"])
    _attach_older_editions(results, answers, metric)
    return answers


def _attach_older_editions(results, answers, metric):
    """Each answer's older editions (the same variant in older documents, newest first) as `also`, and as
    `revised` the newest of them whose printed `metric` differs (with `revised_pct`, the change in %)."""
    older = {}
    sizes = {(r.flavor.vcpus, r.flavor.memory_gb) for r in answers}
    if sizes:
        rows = (results.filter(is_newest=False, flavor__vcpus__in={v for v, _m in sizes}).with_provenance()
                .order_by(*NEWEST_DOCUMENT_FIRST, "id"))
        for row in rows:
            older.setdefault(variant_key(row), []).append(row)
    for r in answers:
        r.also = older.get(variant_key(r), [])
        r.revised = next((o for o in r.also if getattr(o, metric) is not None and getattr(o, metric) != getattr(r, metric)), None)
        r.revised_pct = (None if r.revised is None else
                         round((getattr(r, metric) - getattr(r.revised, metric)) / getattr(r.revised, metric) * 100, 1))
