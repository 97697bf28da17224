"""Comparing published results, one definition for the compare page and `/api/v1/compare/`: what a
selection is (a result id, or a whole series as a ResultFilter query), the table of values with the %
difference against a baseline (per flavour, or per vCPU/memory size for series), and the caveats that
go with it (QPS definitions that differ, methodologies that differ).

How rows are chosen: a series selection is each flavour's newest published figure (`latest=true`) unless
it names a document or says `latest=false`; a figure an older edition printed otherwise is named
("revised from ..."). Its rows are split into lines, each one vendor + family + memory ratio (+ data size)
of one edition (`part_key`), drawn as their own chart series; where several lines of one selection have
a size, the table asks which (`candidates`) instead of picking one.

Names in the reader's language (a selection's, a line's, a methodology's client) are presentation's:
compare_labels.py passes them in (`Names`) and adds what the pages show."""

import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlencode

from django.http import QueryDict
from django.utils.translation import gettext as _

from config.limits import is_id

from .editions import attach_older_editions
from .filters import ExplorerFilter
from .metrics import QPS_PUBLISHED_LABEL, metric_label, percent_difference, qps_definitions
from .models import PublishedResult
from .queries import to_param

# A series selection's parameters (`hot_rows`, the data size, is compare's own: not a ResultFilter filter).
SERIES_KEYS = ["vendor", "document", "engine", "version", "family", "memory_ratio", "deployment", "edition", "latest",
               "hot_rows"]
MAX_SELECTIONS = 6


# The metrics a comparison can be made in, with their declared labels: compare shows QPS as published beside QPS
# normalised, the published one says so.
COMPARE_METRICS = [(name, QPS_PUBLISHED_LABEL if name == "qps" else metric_label(name))
                   for name in ("tps", "qps", "qps_normalised", "tps_per_core", "tpm", "ro_qps", "rw_qps")]


@dataclass(frozen=True)
class Names:
    """How a comparison names what it compares (compare_labels.NAMES: in the reader's language)."""

    result: Callable  # (row) -> a single row's name
    series: Callable  # (selection's parameters, rows) -> a series' name
    lines: Callable  # ([rows of each line]) -> [each line's label], naming what differs between them


PLAIN_NAMES = Names(result=lambda r: str(r.pk), series=lambda data, rows: " ".join(f"{k}={v}" for k, v in data.items()),
                    lines=lambda groups: ["" for _group in groups])


# --- A series: one line of one edition ------------------------------------------------------------
# A filter selects rows of many lines (vendors, families, memory ratios, data sizes, editions); each is
# compared on its own (`part_key`), never joined into one line nor merged into one number per size.

def part_key(result):
    """The line a row of a series selection belongs to: vendor + family + memory ratio (the document's,
    or derived from the size) + deployment + edition + data size (hot rows) of one engine version in one
    document (edition)."""
    f = result.flavor
    return (result.table.document.vendor_id, result.table.document_id, result.engine_version_id, f.family_id,
            f.ratio, result.deployment, result.edition, result.hot_rows)


def part_query(data, result):
    """The selection narrowed to the line of `result` (part_key), as a `sel` value."""
    f = result.flavor
    narrowed = {**data, "vendor": result.table.document.vendor.slug, "document": result.table.document.slug,
                "engine": result.engine_version.engine.slug, "version": to_param(result.engine_version.version),
                "family": to_param(f.family.slug if f.family else ""), "memory_ratio": f.ratio}
    narrowed.pop("latest", None)  # one document named: every row of it
    for key, value in (("deployment", result.deployment), ("edition", result.edition), ("hot_rows", result.hot_rows)):
        if value:
            narrowed[key] = str(value)
    return urlencode(narrowed)


def split_parts(data, rows, names=PLAIN_NAMES):
    """[{key, label, rows, sel}] of a selection's rows, in document order; the labels (`names.lines`) name what
    differs between the lines (family, memory ratio, data size, year ...)."""
    parts = {}
    for r in rows:
        parts.setdefault(part_key(r), []).append(r)
    labels = names.lines(list(parts.values()))
    return [{"key": key, "label": label, "rows": group, "sel": part_query(data, group[0])}
            for (key, group), label in zip(parts.items(), labels)]


def parse_selections(values, internal=False, names=PLAIN_NAMES):
    """`sel` values: a result id, or a ResultFilter query string (a whole series). Returns
    [(raw, label, rows, error)] in the given order, at most MAX_SELECTIONS; a fixed number of queries
    for the single results, one per series. Internal measurements only when `internal`.
    A series is each flavour's newest published figure (`latest=true`) unless it names a document or
    says `latest=false`; its rows are split into lines (`parts`, one edition each)."""
    ids = [int(v) for v in values if is_id(v)]
    singles = {r.pk: r for r in PublishedResult.objects.visible(internal).with_provenance().filter(pk__in=ids)}
    selections = []
    for raw in values[:MAX_SELECTIONS]:
        if raw.isdigit():
            r = singles.get(int(raw)) if is_id(raw) else None
            if r is None:
                selections.append({"raw": raw, "label": raw, "rows": [], "error": _("No published result %(id)s.") % {"id": raw}})
            else:
                selections.append({"raw": raw, "label": names.result(r), "rows": [r], "error": ""})
            continue
        data = {k: v for k, v in QueryDict(raw).items() if k in SERIES_KEYS and v}
        hot_rows = data.get("hot_rows")
        filter_data = {k: v for k, v in data.items() if k != "hot_rows"}
        if "latest" not in filter_data and "document" not in filter_data:
            filter_data["latest"] = "true"
        # ExplorerFilter: a derived memory ratio (Alibaba's sizes) names its line as the pages show it.
        filterset = ExplorerFilter({**filter_data, "include_internal": internal},
                                   queryset=PublishedResult.objects.with_provenance().document_order())
        if not data or not filterset.is_valid() or (hot_rows is not None and not hot_rows.isascii()) \
                or (hot_rows is not None and not hot_rows.isdigit()):
            selections.append({"raw": raw, "label": raw, "rows": [],
                               "error": _("Not a valid selection: %(raw)s") % {"raw": raw}})
            continue
        queryset = filterset.qs if hot_rows is None else filterset.qs.filter(hot_rows=int(hot_rows))
        rows = list(queryset)
        selections.append({"raw": raw, "label": names.series(data, rows), "rows": rows, "series": True,
                           "parts": split_parts(data, rows, names), "newest_only": filter_data.get("latest") == "true",
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


def _cell(row, metric, revised=True):
    value = metric_value(row, metric)
    cell = {"value": value, "shown": metric_shown(row, metric), "result": row, "revised": None}
    older = getattr(row, "revised", None) if revised else None
    if older is not None:
        cell["revised"] = {"result": older, "shown": metric_shown(older, metric), "pct": row.revised_pct,
                           "year": older.table.document.published.year}
    return cell


def compare_table(selections, metric, baseline):
    """Single flavours: one row per selection. Series: one row per (vCPUs, memory), a cell per selection:
    the number where one line of the selection has that size; where several do (families, memory ratios,
    data sizes, editions), the cell lists them as `candidates` (each with the narrowed selection) and
    has no number: the reader chooses, nothing is picked for them."""
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
    per_selection = []  # per selection: {(vcpus, memory): [(part, row)]}
    points = set()
    for s in selections:
        at = {}
        parts = s.get("parts") or [{"label": "", "rows": s["rows"], "sel": s["raw"]}]
        for part in parts:
            for r in part["rows"]:
                if metric_value(r, metric) is not None:
                    at.setdefault((r.flavor.vcpus, r.flavor.memory_gb), []).append((part, r))
        per_selection.append(at)
        points.update(at)
    rows = []
    for key in sorted(points):
        cells = []
        for at in per_selection:
            found = at.get(key, [])
            if len(found) == 1:
                part, row = found[0]
                cells.append({**_cell(row, metric), "line": part["label"]})  # which line, where a selection has several
            else:
                cells.append({"value": None, "shown": "", "result": None, "revised": None,
                              "candidates": [{"label": part["label"], "sel": part["sel"], **_cell(r, metric, False)}
                                             for part, r in found]})
        base_value = cells[baseline]["value"]
        for i, c in enumerate(cells):
            c["diff"] = None if i == baseline else percent_difference(c["value"], base_value)
        rows.append({"vcpus": key[0], "memory_gb": key[1], "cells": cells,
                     "ambiguous": any(c.get("candidates") for c in cells)})
    return {"mode": "series", "rows": rows}


def comparison(sel, baseline=0, metric="tps", internal=False, names=PLAIN_NAMES):
    """Everything a comparison shows, from its `sel` values (at most MAX_SELECTIONS are read), the
    baseline's index and the metric: the selections (with their rows or error), the table, and the
    caveats. Internal measurements only when `internal`; named by `names`."""
    selections = parse_selections(sel, internal, names)
    newest = [r for s in selections if s.get("newest_only") for r in s["rows"]]
    attach_older_editions(newest, metric, PublishedResult.objects.visible(internal))
    baseline = baseline if 0 <= baseline < len(selections) else 0
    valid = [s for s in selections if s["rows"]]
    spt = qps_definitions(r for s in valid for r in s["rows"])
    methodologies = {r.table.methodology.pk: r.table.methodology for s in valid for r in s["rows"]}
    return {
        "selections": selections, "baseline": baseline, "metric": metric, "valid": valid,
        "table": compare_table(selections, metric, baseline) if selections else None,
        "statements_per_transaction": spt, "qps_definitions_differ": len(spt) > 1,
        "methodology_differences": methodology_differences(sorted(methodologies.values(), key=lambda m: m.slug)),
    }


# The methodology fields a comparison checks, as `methodology_differences` names them.
METHODOLOGY_DIFFERENCE_FIELDS = ["tool", "tool_version", "client", "scale", "threads", "duration"]


# What a client machine is, read from a methodology's client text (English, as transcribed): two documents that
# word one machine differently ("8 cores" / "8 vCPU", "with an EIP" / "elastic IP bound") describe the same client.
CLIENT_FACTS = [
    ("type", r"\b(HC2|c\d\.\d*x?large\.\d+|ecs\.[\w.]+)\b"),
    ("cores", r"(\d+)\s*(?:vCPUs?|cores?)\b"),
    ("memory_gb", r"(\d+)\s*Gi?B\b(?!\s*(?:local\s+)?SSD)"),
    ("disk", r"(\d+)\s*Gi?B\s*(?:local\s+)?SSD"),
    ("os", r"(CentOS\s+[\d.]+|Windows Server \d{4}(?: R2)?)"),
    # the region's printed Chinese name where given (the English renderings vary), else the English words
    ("region", r"[(（]([^()（）]*[\u4e00-\u9fff][^()（）]*)[)）]"),
    ("region", r"region ([^,;]+)"),
    ("zone", r"\b(AZ\d+)\b"),
]
CLIENT_NETWORK = [("vpc", r"\bVPC\b"), ("eip", r"\bEIP\b|elastic IP")]


def client_facts(text):
    """{fact: value} of what a client text states (type, cores, memory, disk, OS, region, zone, network), each
    left out when the text does not state it; {} for "not stated"."""
    facts = {}
    for name, pattern in CLIENT_FACTS:
        found = None if name in facts else re.search(pattern, text or "", re.IGNORECASE if name != "type" else 0)
        if found:
            facts[name] = next(g for g in found.groups() if g).strip()
    network = {name for name, pattern in CLIENT_NETWORK if re.search(pattern, text or "")}
    if network:
        facts["network"] = network
    return facts


def clients_differ(texts):
    """Whether the clients these texts describe differ in a stated fact (client_facts): wording alone does not; a
    fact one text leaves out is not a difference, but a client described beside one "not stated" is. Network: differs
    only where both say and neither set holds the other (a VPC with an EIP is still a VPC)."""
    stated = [client_facts(t) for t in texts]
    if any(stated) and not all(stated):
        return True
    for name in {n for facts in stated for n in facts}:
        values = [facts[name] for facts in stated if name in facts]
        if name == "network":
            if any(not (a <= b or b <= a) for a in values for b in values):
                return True
        elif len({str(v).lower() for v in values}) > 1:
            return True
    return False


def methodology_differences(methodologies):
    """What differs between the methodologies behind compared numbers (besides the QPS definition,
    which a comparison states on its own): for each field with more than one distinct stated value,
    {"field", "label", "values" (as stated, in English), "methodologies" (the first stating each value: how the
    pages show it is compare_labels.methodology_differences_data's)}. Fields: tool, tool_version, client, scale
    (tables x rows), threads, duration. Values not stated by a document are left out, not counted as a difference."""
    def scale(m):
        return f"{m.tables} × {m.rows_per_table}" if m.tables and m.rows_per_table else ""

    fields = [
        ("tool", _("Tool"), lambda m: m.tool or ""),
        ("tool_version", _("Tool version"), lambda m: m.tool_version),
        ("client", _("Client"), lambda m: m.client),
        ("scale", _("Tables × rows"), scale),
        ("threads", _("Threads"), lambda m: str(m.threads) if m.threads else ""),
        ("duration", _("Duration"), lambda m: f"{m.duration_s} s" if m.duration_s else ""),
    ]
    assert [f[0] for f in fields] == METHODOLOGY_DIFFERENCE_FIELDS
    differences = []
    for key, label, value in fields:
        values = {}  # stated value -> the first methodology stating it
        for m in methodologies:
            stated = value(m)
            if stated and stated not in values:
                values[stated] = m
        if len(values) > 1 and (key != "client" or clients_differ(list(values))):  # a client by what it is
            differences.append({"field": key, "label": label, "values": list(values),
                                "methodologies": list(values.values())})
    return differences
