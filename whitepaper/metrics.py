"""The metrics a published result can carry: one declaration each, used by the model, the
importer, the export, the API schema and the pages, so a unit is written down exactly once."""

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    unit: str
    kind: str  # "int" (whole numbers), "decimal" (kept as printed), "rows" (亿/万 counts)
    higher_is_better: bool = True  # False: sizing asks for the smallest flavour at or below the value (queries)
    description: str = ""
    # Where the metric appears, each list derived from these declarations (a new metric is its line here, a migration
    # for its field and index, its translations and its tests):
    explorer: bool = True  # an explorer column (explorer.EXPLORER_COLUMNS), the admin's list, the filters
    indexed: bool = True  # the explorer's sort on it walks an index of its own (models: result_<name>_asc/_desc)
    sizing: bool = False  # a sizing choice and a chart's metric against vCPUs (forms.SIZING_METRICS, charts.CHART_METRICS)
    printed: bool = True  # vendors' documents print it: the drafting parser reads it from their tables (drafting/draft.py)
    # (value, a minimum, a maximum) the API's documentation gives its filters as examples (name, min_<name>, max_<name>):
    # values the documents print (Huawei 2023 SQL Server web 16 vCPU, Alibaba 2019 ppas.x8.2xlarge.2 at 1亿 hot rows).
    example: tuple = None


METRICS = [
    Metric("max_connections", _("Max connections"), "connections", "int", example=(10000, 5000, 20000),
           description=_("Maximum connections reached in the vendor's stress test (最大连接数).")),
    Metric("iops", _("IOPS"), "I/O operations per second", "int", example=(18000, 16000, 22000),
           description=_("Disk I/O operations per second; empty where IOPS depends on the disk.")),
    Metric("tps", _("TPS"), "transactions per second", "decimal", example=(3102, 3000, 10000), indexed=False,
           sizing=True),  # its index: models
    Metric("qps", _("QPS"), "queries per second", "decimal", example=(62045, 50000, 200000), indexed=False,
           sizing=True,  # its index: models
           description=_("Statements per second; what counts as a statement depends on the methodology "
                         "(Huawei counts 20 per sysbench transaction, Alibaba about 18).")),
    Metric("tpm", _("TPM"), "TPC-C transactions per minute", "decimal", example=(1500000, 1000000, 1500000),
           sizing=True),
    Metric("capacity_rows", _("Estimated capacity"), "rows", "rows", explorer=False, indexed=False,
           description=_("Rows the flavour is estimated to store (预计可存储数据量).")),
    Metric("data_rows", _("Test data"), "rows", "rows", example=(1000000000, 500000000, 5000000000),
           description=_("Rows loaded for the test (测试数据量).")),
    Metric("hot_rows", _("Hot data"), "rows", "rows", example=(100000000, 100000000, 1000000000),
           description=_("Rows touched by the test's queries (热/活跃数据量).")),
    Metric("ro_qps", _("Read-only QPS"), "queries per second", "decimal", example=(268319, 200000, 700000), sizing=True),
    Metric("rw_qps", _("Read-write QPS"), "queries per second", "decimal", example=(170955, 100000, 310000), sizing=True),
    # Issue 35.5: an internal capacity search's answer, never mixed with the closed-loop TPS above. Its bound is the
    # row's latency_bound_ms; vendor whitepapers state no latency and never carry it.
    Metric("sustained_tps", _("TPS sustained at a p95 bound (open-loop)"), "transactions per second", "decimal",
           explorer=False, indexed=False, printed=False,
           description=_("Internal measurements only: the highest offered rate a capacity search sustained with p95, "
                         "from the scheduled start, at or below the row's latency bound (latency_bound_ms); open-loop, "
                         "not comparable with closed-loop TPS.")),
    # Issue 51.1: a lower-is-better metric. The smallest flavour "reaching" a p95 asks for one at or below it (sizing).
    Metric("latency_p95_ms", _("p95 latency (ms)"), "milliseconds", "decimal", example=(12.5, 5, 50),
           higher_is_better=False, sizing=True,
           printed=False,
           description=_("Internal measurements only: the transactions' 95th percentile latency in ms; a series of runs "
                         "carries the highest of its runs' (every run's p95 at or below it). Vendor documents state no "
                         "latency.")),
]
METRICS_BY_NAME = {m.name: m for m in METRICS}
# Units as the pages show them (charts' axes), in the reader's language; the API and exports keep `Metric.unit`.
UNIT_LABELS = {
    "transactions per second": _("transactions per second"),
    "queries per second": _("queries per second"),
    "TPC-C transactions per minute": _("TPC-C transactions per minute"),
    "milliseconds": _("milliseconds"),
}

# QPS on one definition, where documents count differently (Huawei 20 statements per sysbench
# transaction, BEGIN and COMMIT included; Alibaba about 18): the 18 statements of the OLTP read-write
# transaction (10 point selects, 4 range selects, 2 updates, 1 delete, 1 insert). A result's QPS on it
# is PublishedResult.qps_normalised = QPS x 18 / its methodology's statements_per_transaction.
QPS_NORMALISED_STATEMENTS = 18
QPS_NORMALISED_LABEL = _("QPS, normalised to 18 statements per transaction")
QPS_PUBLISHED_LABEL = _("QPS as published")
METRIC_NAMES = [m.name for m in METRICS]
EXPLORER_METRICS = [m.name for m in METRICS if m.explorer]  # filters, explorer columns, admin
INDEXED_METRICS = [m.name for m in METRICS if m.indexed]  # models' sort indexes
SIZING_METRIC_NAMES = [m.name for m in METRICS if m.sizing]  # sizing's choices, charts' metrics
PRINTED_METRICS = [m.name for m in METRICS if m.printed]  # what a vendor's table may print (drafting)
# Figures computed from a row's metrics (PublishedResult.tps_per_core, .qps_normalised), labelled here too.
DERIVED_LABELS = {"tps_per_core": _("TPS per vCPU"), "qps_normalised": QPS_NORMALISED_LABEL}


def metric_label(name):
    """A metric's label, a computed figure's too."""
    return DERIVED_LABELS.get(name) or METRICS_BY_NAME[name].label


def qps_definitions(results):
    """The QPS definitions (statements per transaction) among these rows' QPS figures: two or more and
    "QPS definitions differ" (charts, compare). Rows without QPS define nothing."""
    return sorted({r.qps_definition for r in results} - {None})


def percent_difference(value, baseline):
    """(value - baseline) / baseline in %, one decimal; None when either is missing or baseline is 0: a revision's
    change (editions) and a comparison's difference (compare)."""
    if value is None or baseline in (None, 0):
        return None
    return round((float(value) - float(baseline)) / float(baseline) * 100, 1)
