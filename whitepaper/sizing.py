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
from django.utils.translation import gettext_lazy

from .editions import attach_older_editions
from .filters import ResultFilter
from .metrics import metric_label
from .models import PublishedResult

# Every metric a document publishes for an engine can be sized for, named as the export's columns (tps, qps,
# tpm, ro_qps, rw_qps): PPAS and Alibaba PostgreSQL print read-only and read-write QPS only.
# Read-only and read-write QPS name their export column too (English pages): readers match them with the CSV.
SIZING_COLUMN_LABELS = {"ro_qps": gettext_lazy("Read-only QPS (ro_qps)"), "rw_qps": gettext_lazy("Read-write QPS (rw_qps)")}
SIZING_METRICS = [(name, SIZING_COLUMN_LABELS.get(name) or metric_label(name)) for name in ("tps", "qps", "tpm", "ro_qps", "rw_qps")]


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
