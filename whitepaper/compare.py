"""Comparing published results, one definition for the compare page and `/api/v1/compare/`: what a
selection is (a result id, or a whole series as a ResultFilter query), the table of values with the %
difference against a baseline (per flavour, or per vCPU/memory size for series), and the caveats that
go with it (QPS definitions that differ, methodologies that differ, rows merged into fewer sizes)."""

from django.http import QueryDict
from django.utils.translation import gettext as _

from . import display
from .charts import percent_difference
from .filters import ResultFilter
from .models import PublishedResult
from .pages import family_name, origin_name
from .queries import methodology_differences_data

SERIES_KEYS = ["vendor", "document", "engine", "version", "family", "memory_ratio", "deployment", "latest"]
MAX_SELECTIONS = 6


def describe_series(data, rows):
    """A readable name for a filter-defined series, from its first row."""
    if not rows:
        return " ".join(f"{k}={v}" for k, v in data.items())
    r = rows[0]
    parts = []
    if "vendor" in data:
        parts.append(display.vendor_name(r.table.document.vendor))
    if "document" in data:
        parts.append(f"{display.vendor_name(r.table.document.vendor)} {display.date(r.table.document.published)}")
    if "engine" in data or "version" in data:
        parts.append(str(r.engine_version) if "version" in data else r.engine_version.engine.name)
    if "family" in data:
        parts.append(family_name(r.flavor.family))
    if "memory_ratio" in data:
        parts.append(r.flavor.memory_ratio)
    if "deployment" in data:
        parts.append(r.get_deployment_display())
    if any(row.is_internal for row in rows):
        parts.append(_("includes internal measurements"))
    return " · ".join(parts)


def describe_result(r):
    family = family_name(r.flavor.family)
    spec = r.flavor.spec_code or f"{r.flavor.vcpus} vCPU / {r.flavor.memory_gb} GB"
    label = f"{r.engine_version} · {family} · {spec} ({display.vendor_name(r.table.document.vendor)} {r.table.document.published:%Y})"
    return f"{label} · {origin_name(r)}" if r.is_internal else label


def parse_selections(values, internal=False):
    """`sel` values: a result id, or a ResultFilter query string (a whole series). Returns
    [(raw, label, rows, error)] in the given order, at most MAX_SELECTIONS; a fixed number of queries
    for the single results, one per series. Internal measurements only when `internal`."""
    ids = [int(v) for v in values if v.isdigit()]
    singles = {r.pk: r for r in PublishedResult.objects.visible(internal).with_provenance().filter(pk__in=ids)}
    selections = []
    for raw in values[:MAX_SELECTIONS]:
        if raw.isdigit():
            r = singles.get(int(raw))
            if r is None:
                selections.append({"raw": raw, "label": raw, "rows": [], "error": _("No published result %(id)s.") % {"id": raw}})
            else:
                selections.append({"raw": raw, "label": describe_result(r), "rows": [r], "error": ""})
            continue
        data = {k: v for k, v in QueryDict(raw).items() if k in SERIES_KEYS and v}
        filterset = ResultFilter({**data, "include_internal": internal},
                                 queryset=PublishedResult.objects.with_provenance().document_order())
        if not data or not filterset.is_valid():
            selections.append({"raw": raw, "label": raw, "rows": [],
                               "error": _("Not a valid selection: %(raw)s") % {"raw": raw}})
            continue
        rows = list(filterset.qs)
        selections.append({"raw": raw, "label": describe_series(data, rows), "rows": rows, "series": True,
                           "error": "" if rows else _("No published result matches %(raw)s.") % {"raw": raw}})
    return selections


def metric_value(result, metric):
    if metric == "tps_per_core":
        return result.tps_per_core
    return getattr(result, metric)


def metric_shown(result, metric):
    """The number as the document prints it (per-core TPS is computed)."""
    if metric == "tps_per_core":
        value = result.tps_per_core
        return "" if value is None else str(value)
    return result.display(metric)


def compare_table(selections, metric, baseline):
    """Single flavours: one row per selection. Series: one row per (vCPUs, memory), the newest
    document's value where a series has several."""
    if all(not s.get("series") for s in selections):
        base_value = metric_value(selections[baseline]["rows"][0], metric) if selections[baseline]["rows"] else None
        rows = []
        for i, s in enumerate(selections):
            value = metric_value(s["rows"][0], metric) if s["rows"] else None
            rows.append({"label": s["label"], "value": value, "baseline": i == baseline,
                         "shown": metric_shown(s["rows"][0], metric) if s["rows"] else "",
                         "diff": None if i == baseline else percent_difference(value, base_value),
                         "result": s["rows"][0] if s["rows"] else None})
        return {"mode": "flavours", "rows": rows}
    points = []
    per_selection = []
    for s in selections:
        values = {}
        n_rows = 0
        for r in s["rows"]:
            v = metric_value(r, metric)
            if v is not None:
                n_rows += 1
                values[(r.flavor.vcpus, r.flavor.memory_gb)] = (v, metric_shown(r, metric))  # newest wins
        if n_rows > len(values):  # say so: several rows (documents, vendors, ratios) share a size
            s["merged"] = {"rows": n_rows, "points": len(values)}
        per_selection.append(values)
        points.extend(k for k in values if k not in points)
    rows = []
    for key in sorted(points):
        base_value = per_selection[baseline].get(key, (None, ""))[0]
        cells = []
        for i, values in enumerate(per_selection):
            v, shown = values.get(key, (None, ""))
            cells.append({"value": v, "shown": shown,
                          "diff": None if i == baseline else percent_difference(v, base_value)})
        rows.append({"vcpus": key[0], "memory_gb": key[1], "cells": cells})
    return {"mode": "series", "rows": rows}


def comparison(sel, baseline=0, metric="tps", internal=False):
    """Everything a comparison shows, from its `sel` values (at most MAX_SELECTIONS are read), the
    baseline's index and the metric: the selections (with their rows or error), the table, and the
    caveats. Internal measurements only when `internal`."""
    selections = parse_selections(sel, internal)
    baseline = baseline if 0 <= baseline < len(selections) else 0
    valid = [s for s in selections if s["rows"]]
    spt = sorted({r.table.methodology.statements_per_transaction for s in valid for r in s["rows"]} - {None})
    methodologies = {r.table.methodology.pk: r.table.methodology for s in valid for r in s["rows"]}
    return {
        "selections": selections, "baseline": baseline, "metric": metric, "valid": valid,
        "table": compare_table(selections, metric, baseline) if selections else None,
        "statements_per_transaction": spt, "qps_definitions_differ": len(spt) > 1,
        "methodology_differences": methodology_differences_data(sorted(methodologies.values(), key=lambda m: m.slug)),
    }
