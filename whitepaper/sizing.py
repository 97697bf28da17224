"""Sizing, one definition for the sizing page and `/api/v1/sizing/`: which is the smallest published
flavour whose TPS (or QPS) reaches a target, per vendor, family, memory ratio and deployment
(`queries.smallest_reaching_once`: a flavour several documents print is listed once, the newest
document answering, the others kept on it as `also`).

By default (`latest` absent or true) only each flavour's newest published figure can answer: a figure an
older edition printed and a newer one revised (PostgreSQL 12 dedicated 64 vCPU: 10929.30 TPS in Huawei's
2023 paper, 8839.4 in its 2025 paper) never reaches a target on the old number. The older editions' rows
stay on the answer as `also`, and `revised` names the newest of them that printed another number.
`latest=false` answers from every edition, as the explorer does.

With a latency bound (issue 35.5) the question is "the smallest flavour sustaining N TPS with p95 at or below L ms":
only published capacity searches answer (LATENCY_METRIC, their bound at or below L), internal measurements by
nature; a closed-loop TPS never does, and when no figure states a latency the answer is empty and says so."""

from django.utils.translation import gettext as _

from .editions import attach_older_editions
from .filters import ResultFilter, include_internal
from .forms import SizingForm
from . import display
from .choices import Origin
from .models import Document, Engine, PublishedResult


def sizing_form(params):
    """The sizing question as a bound SizingForm (engines: those with published results)."""
    engines = list(Engine.objects.filter(versions__results__isnull=False).distinct())
    editions = sorted(PublishedResult.objects.exclude(edition="").order_by().values_list("edition", flat=True).distinct())
    documents = Document.objects.select_related("vendor").newest_first()
    if not include_internal(params or {}):  # the menus name internal measurements only where the answer may use them
        documents = documents.exclude(vendor__origin=Origin.INTERNAL)
    vendors = {d.vendor.slug: display.vendor_name(d.vendor) for d in documents}
    return SizingForm(params or None, engines=engines, editions=editions, vendors=sorted(vendors.items()),
                      documents=[(d.slug, f"{display.vendor_name(d.vendor)}: {display.document_short_title(d)}")
                                 for d in documents])


def sizing_filter(data):
    """The results a sizing question looks at (engine, version, vendor, document, deployment, edition; vendor-published unless
    `include_internal`), as a ResultFilter (invalid, e.g. an unknown vendor: it filters to nothing)."""
    filter_data = {"engine": data["engine"], "include_internal": data.get("include_internal") or False}
    for key in ("version", "vendor", "document", "deployment", "edition"):
        if data.get(key):
            filter_data[key] = data[key]
    return ResultFilter(filter_data, queryset=PublishedResult.objects.all())


LATENCY_METRIC = "sustained_tps"  # whitepaper.metrics: a capacity search's rate, with its row's latency_bound_ms


def asked_metric(data):
    """The metric a sizing question is answered in (a SizingForm's cleaned data): sustained_tps under a latency bound."""
    return LATENCY_METRIC if data.get("latency_bound_ms") is not None else (data.get("metric") or "tps")


def smallest_flavours(data):
    """Per vendor, family, memory ratio and deployment: the smallest flavour whose published
    `data["metric"]` reaches `data["target"]`, smallest first (a SizingForm's cleaned data). With
    `data["latency_bound_ms"]`: the smallest flavour whose published capacity search sustained the target with a
    bound at or below it (a bound of 20 ms also meets 50 ms), from those figures only."""
    bound = data.get("latency_bound_ms")
    if bound is not None:
        rows = sizing_filter({**data, "include_internal": True}).qs.filter(latency_bound_ms__lte=bound)
        answers = rows.smallest_reaching_once(LATENCY_METRIC, data["target"])
        for r in answers:
            r.revised = None
        return answers
    metric, results = data["metric"] or "tps", sizing_filter(data).qs
    # a chosen document answers with its own figures, as the explorer shows a chosen document's every row
    if data.get("latest") is False or (data.get("document") and data.get("latest") is None):
        answers = results.smallest_reaching_once(metric, data["target"])
        for r in answers:
            r.revised = None
        return answers
    answers = results.newest_per_variant().smallest_reaching_once(metric, data["target"])
    attach_older_editions(answers, metric, results)
    return answers


def data_sizes(answers):
    """[(data size, how many answers)] when the answers were measured on different data sizes (display.data_size:
    hot rows, rows of test data, or tables x rows), [] when on one: a figure on ten times less data is no like
    figure (Huawei's 2018 MySQL runs: 8 tables x 1,000,000 rows; 2023: 64 x 10,000,000)."""
    counts = {}
    for r in answers:
        size = display.data_size(r) or _("not stated")
        counts[size] = counts.get(size, 0) + 1
    return list(counts.items()) if len(counts) > 1 else []


def latency_note(data, answers):
    """What a latency-bound answer rests on, or that there is none (the page says the same): '' without a bound."""
    if data.get("latency_bound_ms") is None:
        return ""
    if answers:
        return _("Answered from this dashboard's published capacity searches only (internal measurements, open-loop, "
                 "p95 from the scheduled start), never from closed-loop TPS.")
    return _("No published figure sustains that rate with p95 ≤ %(bound)s ms for this engine and version. Vendor "
             "whitepapers state no latency with their TPS, so only capacity searches published from this dashboard's "
             "runs can answer; closed-loop TPS is not used.") % {"bound": data["latency_bound_ms"]}
