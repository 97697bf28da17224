"""Chart data builders: pure functions from published results to what Chart.js draws.

A chart is a dict (serialised with json_script) of the metrics it can show and its series; each
series has one point per result, x = vCPUs. The text summary says the same in words for screen
readers and print; the page also shows the numbers as a table.
"""

from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from .metrics import (METRICS_BY_NAME, QPS_NORMALISED_LABEL, QPS_PUBLISHED_LABEL, SIZING_METRIC_NAMES, UNIT_LABELS,
                      qps_definitions)
from .display import date, edition_name, memory_ratio_text, metric_shown, same_in, vendor_name
from .pages import family_name, origin_name
from .queries import version_sort_key
from .variants import SERIES_FIELDS, field_value

# Metrics that can be drawn against vCPUs, in the order a chart offers them.
# A chart's metric against vCPUs, and its summary's "peak" (the true maximum), are higher-is-better figures: a
# lower-is-better sizing metric (a latency) is no chart of its own.
CHART_METRICS = [name for name in SIZING_METRIC_NAMES if METRICS_BY_NAME[name].higher_is_better]


def number(value):
    """A JSON-friendly number (Decimal -> int or float), None stays None."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def hot_data_shown(result):
    """A row's data size where its table varies it (Alibaba's PostgreSQL and PPAS: each flavour at several hot-data
    sizes): part of its line, so points measured at different sizes are never joined."""
    return f"{METRICS_BY_NAME['hot_rows'].label} {metric_shown(result, 'hot_rows')}" if result.hot_rows is not None else ""


# How each part of a series (variants.SERIES_FIELDS) is shown in a legend, in legend order.
SERIES_SHOWN = {
    "engine_version": lambda r, v: str(v),
    "family": lambda r, v: family_name(v),
    # The ratio the document prints; a derived one only where split_series splits a line by it (said "derived")
    "memory_ratio": lambda r, v: memory_ratio_text(r.flavor) if v or getattr(r, "split_by_derived_ratio", False) else "",
    "deployment": lambda r, v: r.get_deployment_display() if v else "",
    "edition": lambda r, v: edition_name(v),
    "vendor": lambda r, v: origin_name(r) if r.is_internal else vendor_name(v),
    "hot_rows": lambda r, v: hot_data_shown(r),
}
assert set(SERIES_SHOWN) == set(SERIES_FIELDS)


def series_key(result):
    """The line a row belongs to (its series, variants.SERIES_FIELDS, with its data size), as the legend shows it."""
    return tuple(shown(result, field_value(result, SERIES_FIELDS[name])) for name, shown in SERIES_SHOWN.items())


def edition_series_key(result):
    """A series and the document publishing it: each edition of a number its own line, except where
    editions print the series identically (editions.merge_identical_series sets `same_in`): one line,
    "same in 2023 and 2025"."""
    documents = getattr(result, "same_in", None) or [result.table.document]
    return (*series_key(result), date(documents[0].published) if len(documents) == 1 else same_in(documents))


def series_label(key, varying, fallback):
    parts = [part for part, varies in zip(key, varying) if varies and part]
    return " · ".join(parts) or fallback


def mark_derived_ratio_splits(results, key=series_key):
    """Series follow the memory ratio the document prints. Rows of a document printing none (SQL Server, Alibaba)
    are split by the ratio derived from vCPUs and memory (labelled "derived") only where one line would otherwise
    join two flavours of one vCPU count (a vertical zig-zag), or where every line of that split keeps two points
    or more; otherwise they stay one line (the 2018 SQL Server flavours 4/8, 8/32 and 16/128 GB: one line per
    deployment, not six one-point "lines"). Sets `split_by_derived_ratio` on each row."""
    for r in results:
        r.split_by_derived_ratio = False
    lines = {}
    for r in results:
        lines.setdefault(key(r), []).append(r)
    for rows in lines.values():
        if any(r.flavor.memory_ratio for r in rows):
            continue
        by_ratio = {}
        for r in rows:
            by_ratio.setdefault(r.flavor.ratio, []).append(r)
        zigzag = len({r.flavor.vcpus for r in rows}) < len(rows)
        if len(by_ratio) > 1 and (zigzag or all(len(rs) > 1 for rs in by_ratio.values())):
            for r in rows:
                r.split_by_derived_ratio = True


def split_series(results, key=series_key, fallback=""):
    """Group results into series by `key`; the label names only what differs between series."""
    mark_derived_ratio_splits(results, key)
    keys, groups = [], {}
    for result in results:
        k = key(result)
        if k not in groups:
            keys.append(k)
            groups[k] = []
        groups[k].append(result)
    varying = [len({k[i] for k in keys}) > 1 for i in range(len(keys[0]))] if keys else []
    if len(keys) == 1:
        # A single line: name it by its memory ratio or family, whichever the rows carry.
        first = groups[keys[0]][0]
        name = first.flavor.memory_ratio or family_name(first.flavor.family) or fallback or str(first.engine_version)
        name = " · ".join(filter(None, [name, hot_data_shown(first), origin_name(first)]))
        return [(name, groups[keys[0]])]
    return [(series_label(k, varying, fallback or str(i + 1)), groups[k]) for i, k in enumerate(keys)]


def point(result):
    flavor = result.flavor
    p = {"x": flavor.vcpus, "memory_gb": flavor.memory_gb, "flavor": flavor.spec_code, "id": result.pk,
         "url": flavor.get_absolute_url()}  # a point opens its flavour's page
    for name in CHART_METRICS:
        p[name] = number(getattr(result, name))
    p["qps_normalised"] = number(result.qps_normalised)
    # The chart draws numbers; its data table shows them as printed (10929.30, not 10929.3).
    p["printed"] = {name: result.display(name) for name in CHART_METRICS if getattr(result, name) is not None}
    return p


def available_metrics(results, wanted=None):
    """The metrics these rows have. Where QPS of two definitions meet, QPS is "as published" and QPS
    normalised to one definition is offered beside it, never mixed silently."""
    present = [name for name in CHART_METRICS if any(getattr(r, name) is not None for r in results)]
    metrics = [metric_spec(name) for name in present]
    if "qps" in present and (len(qps_definitions(results)) > 1 or wanted == "qps_normalised"):
        at = present.index("qps")
        metrics[at] = metric_spec("qps", str(QPS_PUBLISHED_LABEL))
        metrics.insert(at + 1, metric_spec("qps_normalised", str(QPS_NORMALISED_LABEL), "queries per second"))
    return metrics


def metric_spec(name, label=None, unit=None):
    """A chart's metric: its name, label and unit (the declaration's, metrics.py), and the y axis saying the unit
    ("TPS (transactions per second)"), per vCPU too."""
    label = label or str(METRICS_BY_NAME[name].label)
    unit = unit or METRICS_BY_NAME[name].unit
    shown = UNIT_LABELS[unit]
    return {"name": name, "label": label, "unit": unit,
            "axis": _("%(metric)s (%(unit)s)") % {"metric": label, "unit": shown},
            "axis_per_core": _("%(metric)s per vCPU (%(unit)s per vCPU)") % {"metric": label, "unit": shown}}


def caption(results, title):
    """A chart's caption names what it draws, engine and version first ("MySQL 5.7 · 1.3.1 General-purpose test
    data"): a chart seen alone (a screenshot, its PNG) still says what it is."""
    versions = sorted({r.engine_version for r in results}, key=lambda v: (v.engine.name, version_sort_key(v.version)))
    engines = pgettext("list separator", ", ").join(str(v) for v in versions)
    return " · ".join(filter(None, [engines, str(title)]))


def build_chart(chart_id, title, labelled_groups, metric=None, kind="line"):
    """labelled_groups: [(series label, [results])]. Points are sorted by vCPUs, then memory.
    `metric`: the metric drawn first (a page's chosen metric; 'tps_per_core' = TPS per vCPU);
    `kind`: "line" (against vCPUs) or "bar" (one bar per series: single flavours side by side)."""
    all_results = [r for _, rs in labelled_groups for r in rs]
    series = []
    for label, rs in labelled_groups:
        pts = sorted((point(r) for r in rs), key=lambda p: (p["x"], p["memory_gb"]))
        series.append({"label": label, "points": pts})
    metrics = available_metrics(all_results, metric)
    per_core = metric == "tps_per_core"
    first = "tps" if per_core else metric
    if first not in {m["name"] for m in metrics}:
        first, per_core = (metrics[0]["name"] if metrics else None), False
    chart = {"id": chart_id, "data_id": f"{chart_id}-data", "title": title, "x_label": _("vCPUs"),
             "per_core_label": _("per vCPU"), "metrics": metrics, "series": series,
             "initial_metric": first, "initial_per_core": per_core, "kind": kind}
    chart["summary"] = summary(chart, first)
    return chart


def summary(chart, metric=None):
    """One sentence per series: the range of the first metric against vCPUs."""
    if not chart["metrics"]:
        return _("No chartable numbers in this table.")
    metric = metric or chart["metrics"][0]["name"]
    label = next(m["label"] for m in chart["metrics"] if m["name"] == metric)
    sentences = []
    for s in chart["series"]:
        pts = [p for p in s["points"] if p.get(metric) is not None]
        if not pts:
            continue
        first, last = pts[0], pts[-1]
        top = max(pts, key=lambda p: p[metric])  # the true maximum, wherever it is (not the largest flavour's)
        at = {"series": s["label"], "metric": label}
        if len(pts) == 1:
            sentences.append(_("%(series)s: %(metric)s %(value)s at %(vcpus)s (one point).") % {
                **at, "value": f"{first[metric]:,}", "vcpus": vcpus_text(first["x"])})
            continue
        sentence = _("%(series)s: %(metric)s from %(low)s at %(lx)s to %(high)s at %(hx)s") % {
            **at, "low": f"{first[metric]:,}", "lx": vcpus_text(first["x"]), "high": f"{last[metric]:,}",
            "hx": vcpus_text(last["x"])}
        if top[metric] != last[metric]:
            sentence += _(", highest %(top)s at %(tx)s") % {"top": f"{top[metric]:,}", "tx": vcpus_text(top["x"])}
        sentences.append(sentence + " " + ngettext("(%(n)s point).", "(%(n)s points).", len(pts)) % {"n": len(pts)})
    return " ".join(sentences)


def vcpus_text(n):
    return ngettext("%(n)s vCPU", "%(n)s vCPUs", n) % {"n": n}


def chart_rows(chart):
    """The chart's numbers as table rows: (series, vCPUs, memory, {metric: value})."""
    return [
        {"series": s["label"], "x": p["x"], "memory_gb": p["memory_gb"], "flavor": p["flavor"], "url": p["url"],
         "values": [p["printed"].get(m["name"], p.get(m["name"])) for m in chart["metrics"]]}
        for s in chart["series"] for p in s["points"]
    ]

