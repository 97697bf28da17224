"""Customer pages: home, document, engine version, flavour explorer (+ CSV), compare, sizing.

Every catalogue page is wrapped in `catalogue_page` (ETag/Last-Modified, 304, cache invalidated by
an import) and reads a fixed number of queries whatever the number of rows."""

import re
from itertools import chain, groupby
from urllib.parse import urlencode

from django.db.models import Count
from django.http import QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext

from . import charts, display
from .export import iter_csv_lines
from .filters import ResultFilter, include_internal
from .forms import COMPARE_METRICS, SizingForm
from .models import Document, Engine, EngineVersion, Origin, PublishedResult
from .pages import catalogue_page, cell, column_label, family_name, origin_name, wants_partial
from .queries import SORTS, methodology_differences, version_sort_key


def _origin_toggle(request):
    """Whether the reader asked for internal measurements, and the URL that flips that choice."""
    wanted = include_internal(request.GET)
    params = request.GET.copy()
    params.pop("include_internal", None)
    if not wanted:
        params["include_internal"] = "true"
    query = params.urlencode()
    return {"include_internal": wanted, "toggle_internal_url": request.path + (f"?{query}" if query else "")}


@catalogue_page
def home(request):
    toggle = _origin_toggle(request)
    visible = PublishedResult.objects.visible(toggle["include_internal"])
    versions = (EngineVersion.objects.select_related("engine")
                .filter(results__in=visible).annotate(
                    n_results=Count("results", distinct=True),
                    n_documents=Count("results__table__document", distinct=True))
                .order_by("engine__name", "version"))
    engines = [(engine, sorted(vs, key=lambda v: version_sort_key(v.version)))
               for engine, vs in groupby(versions, key=lambda v: v.engine)]
    documents = Document.objects.select_related("vendor").annotate(n_tables=Count("tables"))
    if not toggle["include_internal"]:
        documents = documents.filter(vendor__origin=Origin.VENDOR)
    return render(request, "whitepaper/home.html", {
        "engines": engines, "documents": documents, "sizing_form": SizingForm(engines=[e for e, _ in engines]),
        **toggle,
    })


# --- Document ---------------------------------------------------------------------------------

def _table_rows(table):
    rows = []
    for result in table.rows:
        cells = []
        for column in table.columns:
            if column == "iops" and result.iops_depends_on_disk:
                cells.append({"note": True, "value": ""})
            else:
                cells.append({"note": False, "value": cell(result, column)})
        rows.append({"result": result, "cells": cells})
    return rows


def document_sections(document):
    """Tables in document order, grouped by section and methodology, each group with one chart."""
    tables = list(document.tables.select_related("methodology").order_by("position"))
    results = PublishedResult.objects.filter(table__document=document).with_provenance().document_order()
    by_table = {}
    for result in results:
        by_table.setdefault(result.table_id, []).append(result)
    groups = []
    for (section, _methodology), group_tables in groupby(tables, key=lambda t: (t.section, t.methodology_id)):
        group_tables = list(group_tables)
        for table in group_tables:
            table.rows = by_table.get(table.pk, [])
            table.headers = [column_label(c) for c in table.columns]
            table.row_cells = _table_rows(table)
            table.iops_note = any(r.iops_depends_on_disk for r in table.rows)
        group_results = [r for t in group_tables for r in t.rows]
        first = group_tables[0]
        chart = charts.build_chart(f"chart-{first.anchor}",
                                   display.section_title(first) if section else display.table_label(first),
                                   charts.split_series(group_results))
        groups.append({"section": section, "tables": group_tables, "chart": chart,
                       "chart_rows": charts.chart_rows(chart), "methodology": group_tables[0].methodology})
    return groups


@catalogue_page
def document_detail(request, slug):
    document = get_object_or_404(Document.objects.select_related("vendor"), slug=slug)
    return render(request, "whitepaper/document.html", {
        "document": document,
        "methodologies": list(document.methodologies.all()),
        "groups": document_sections(document),
    })


# --- Engine ------------------------------------------------------------------------------------------

@catalogue_page
def engine_index(request, engine):
    """One engine: its versions (in version order) with their counts, and the documents that cover it."""
    engine_obj = get_object_or_404(Engine, slug=engine)
    toggle = _origin_toggle(request)
    visible = PublishedResult.objects.visible(toggle["include_internal"]).filter(engine_version__engine=engine_obj)
    versions = sorted(EngineVersion.objects.select_related("engine").filter(results__in=visible).annotate(
        n_results=Count("results", distinct=True), n_documents=Count("results__table__document", distinct=True)),
        key=lambda v: version_sort_key(v.version))
    documents = (Document.objects.select_related("vendor").filter(tables__results__in=visible).distinct()
                 .order_by("-published", "slug"))
    return render(request, "whitepaper/engine.html", {
        "engine": engine_obj, "versions": versions, "documents": documents, **toggle})


# --- Engine version -----------------------------------------------------------------------------

@catalogue_page
def engine_version(request, engine, version):
    # <stated:version> has turned '-' into '' (not stated).
    version_obj = get_object_or_404(EngineVersion.objects.select_related("engine"), engine__slug=engine, version=version)
    toggle = _origin_toggle(request)
    results = list(PublishedResult.objects.visible(toggle["include_internal"]).filter(engine_version=version_obj)
                   .with_provenance().document_order())
    by_family = {}
    for result in results:
        by_family.setdefault(family_name(result.flavor.family) or _("No family stated"), []).append(result)
    family_charts = []
    for i, (family, rows) in enumerate(by_family.items(), 1):
        chart = charts.build_chart(f"chart-family-{i}", family,
                                   charts.split_series(rows, key=charts.edition_series_key, fallback=family))
        family_charts.append({"family": family, "chart": chart, "chart_rows": charts.chart_rows(chart)})
    tables = {}
    for result in results:
        tables.setdefault(result.table_id, result.table)
    return render(request, "whitepaper/engine_version.html", {
        "engine_version": version_obj, "family_charts": family_charts, "tables": list(tables.values()),
        "n_results": len(results), **toggle,
    })


# --- Explorer ------------------------------------------------------------------------------------

# The explorer's columns (key -> label); each sorts by the catalogue's sort key of the same name (queries.SORTS).
EXPLORER_COLUMNS = {
    "vendor": gettext_lazy("Vendor"),
    "document": gettext_lazy("Document"),
    "engine": gettext_lazy("Engine"),
    "family": gettext_lazy("Family"),
    "memory_ratio": gettext_lazy("CPU:memory"),
    "flavor": gettext_lazy("Spec code"),
    "deployment": gettext_lazy("Deployment"),
    "vcpus": gettext_lazy("vCPUs"),
    "memory_gb": gettext_lazy("Memory (GB)"),
    "max_connections": column_label("max_connections"),
    "iops": column_label("iops"),
    "tps": column_label("tps"),
    "qps": column_label("qps"),
    "tpm": column_label("tpm"),
    "ro_qps": column_label("ro_qps"),
    "rw_qps": column_label("rw_qps"),
    "table": gettext_lazy("Table"),
}
assert set(EXPLORER_COLUMNS) <= set(SORTS)
TEXT_COLUMNS = {"vendor", "document", "engine", "family", "flavor", "deployment", "table"}  # left-aligned; numbers right
DEFAULT_COLUMNS = ["vendor", "document", "engine", "family", "memory_ratio", "flavor", "vcpus", "memory_gb",
                   "max_connections", "tps", "qps"]
FILTER_FIELDS = ["vendor", "document", "engine", "version", "family", "memory_ratio", "deployment",
                 "min_vcpus", "max_vcpus", "min_memory_gb", "max_memory_gb", "min_tps", "max_tps",
                 "min_qps", "max_qps", "min_max_connections", "max_max_connections", "latest", "include_internal"]


def explorer_state(request):
    cols = [c for c in request.GET.getlist("cols") if c in EXPLORER_COLUMNS] or DEFAULT_COLUMNS
    sort = request.GET.get("sort", "")
    sort_key = sort.lstrip("-")
    filterset = ResultFilter(request.GET, queryset=PublishedResult.objects.with_provenance())
    if filterset.is_valid():
        queryset = filterset.qs.sorted_by([sort] if sort_key in EXPLORER_COLUMNS else [])
    else:
        queryset = PublishedResult.objects.none()
    return filterset, queryset, cols, sort


def explorer_cell(result, column):
    flavor = result.flavor
    if column == "vendor":
        return display.vendor_name(result.table.document.vendor)
    if column == "document":
        document = result.table.document
        title = display.document_title(document)
        return format_html('<a href="{}" title="{}">{} {}</a>', document.get_absolute_url(), title,
                           display.date(document.published), title)
    if column == "engine":
        return str(result.engine_version)
    if column == "family":
        return display.family_html(flavor.family)
    if column == "iops" and result.iops_depends_on_disk:
        return _("depends on disk")
    if column == "table":  # the row's source: its table on the document page (#table-N)
        return format_html('<a href="{}">{}</a>', result.table.get_absolute_url(), display.table_label_html(result.table))
    return cell(result, column)


def canonical_query(params):
    """The query string without empty values and without the default columns (what the explorer
    pushes and links to; static/js/explorer.js does the same in the browser)."""
    default_cols = params.getlist("cols") == DEFAULT_COLUMNS
    return urlencode([(k, v) for k, vs in params.lists() for v in vs
                      if v != "" and not (k == "cols" and default_cols)])


def hidden_filters(params):
    """Filter parameters of the URL that the explorer's form has no control for (`flavor`, `vcpus`,
    `edition` ...): kept as hidden inputs, so changing a control never drops them."""
    shown = set(FILTER_FIELDS) | {"sort", "cols"}
    return [(k, v) for k, vs in params.lists() if k in ResultFilter.base_filters and k not in shown
            for v in vs if v != ""]


@catalogue_page
def explore(request):
    if not getattr(request, "htmx", False) and any(v == "" for _k, vs in request.GET.lists() for v in vs):
        # A form submitted without JavaScript: the same view at its canonical URL (no empty parameters).
        query = canonical_query(request.GET)
        return redirect(request.path + (f"?{query}" if query else ""))
    filterset, queryset, cols, sort = explorer_state(request)
    results = list(queryset)
    rows = [{"result": r, "cells": [(explorer_cell(r, c), c in TEXT_COLUMNS) for c in cols], "origin": origin_name(r)} for r in results]
    query = canonical_query(request.GET)
    context = {
        "filterset": filterset, "rows": rows, "cols": cols, "sort": sort, "query": query,
        "headers": [(c, EXPLORER_COLUMNS[c]) for c in cols],
        "all_columns": list(EXPLORER_COLUMNS.items()), "default_cols": DEFAULT_COLUMNS, "text_cols": TEXT_COLUMNS,
        "filter_query": urlencode([(k, v) for k, vs in request.GET.lists() if k in FILTER_FIELDS for v in vs if v != ""]),
    }
    # The version control lists the chosen engine's versions (every engine's, grouped, when none is
    # chosen); an htmx update sends it along (out of band), so it follows the engine.
    context["choices"] = PublishedResult.objects.visible(include_internal(request.GET)).facets(
        engine=request.GET.get("engine") or None)
    context["values"] = request.GET
    version = request.GET.get("version")
    if version and not request.GET.get("engine"):  # version=10: PostgreSQL 10 and PPAS 10 are not one version
        engines = [name for _e, name, versions in context["choices"]["engine_versions"] if version in versions]
        if len(engines) > 1:
            context["version_engines"] = pgettext("list separator", ", ").join(engines)
    context["compare_series_url"] = compare_series_url(request.GET, results)
    if wants_partial(request):
        return render(request, "whitepaper/explore.html#update", context)
    context["hidden_filters"] = hidden_filters(request.GET)
    return render(request, "whitepaper/explore.html", context)


def csv_filename(params):
    """A filename that says what was filtered: published-results_engine-mysql_version-8.0_min_vcpus-16.csv
    (filters in the URL's order; sort, columns and the BOM switch are not filters)."""
    parts = [f"{k}-{v}" for k, vs in params.lists() if k in ResultFilter.base_filters for v in vs if v != ""]
    name = "_".join(["published-results", *parts])
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:180] + ".csv"


def compare_series_url(params, results):
    """"Compare this filter as a series": the filter's series parameters; rows of several vendors (no
    vendor chosen) become one series per vendor, so vendors are never merged into one line."""
    series = [(k, v) for k, vs in params.lists() if k in SERIES_KEYS for v in vs if v != ""]
    if not series:
        return ""
    vendors = sorted({r.table.document.vendor.slug for r in results})
    if "vendor" not in dict(series) and len(vendors) > 1:
        selections = [urlencode(series + [("vendor", v)]) for v in vendors[:MAX_SELECTIONS]]
    else:
        selections = [urlencode(series)]
    internal = [("include_internal", "true")] if include_internal(params) else []
    return reverse("whitepaper:compare") + "?" + urlencode([("sel", s) for s in selections] + internal)


def explore_csv(request):
    """The explorer's rows as CSV. `bom=true` starts it with a UTF-8 byte order mark, for spreadsheets
    that otherwise read UTF-8 (亿, 独享型) as another encoding."""
    filterset, queryset, _cols, _sort = explorer_state(request)
    lines = iter_csv_lines(queryset)
    if request.GET.get("bom") == "true":
        lines = chain(["\ufeff"], lines)
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{csv_filename(request.GET)}"'
    return response


# --- Compare ---------------------------------------------------------------------------------------

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
                         "diff": None if i == baseline else charts.percent_difference(value, base_value),
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
                          "diff": None if i == baseline else charts.percent_difference(v, base_value)})
        rows.append({"vcpus": key[0], "memory_gb": key[1], "cells": cells})
    return {"mode": "series", "rows": rows}


def _compare_url(sel, base=0, metric="tps", internal=False):
    internal = [("include_internal", "true")] if internal else []
    return "?" + urlencode([("sel", s) for s in sel] + [("base", base), ("metric", metric)] + internal)


@catalogue_page
def compare(request):
    sel = [s for s in request.GET.getlist("sel") if s.strip()]
    metric = request.GET.get("metric", "tps")
    if metric not in dict(COMPARE_METRICS):
        metric = "tps"
    toggle = _origin_toggle(request)
    internal = toggle["include_internal"]
    add = {k[4:]: v for k, v in request.GET.items() if k.startswith("add-") and v and k[4:] in SERIES_KEYS}
    if add:
        return redirect(request.path + _compare_url(sel + [urlencode(add)], request.GET.get("base", 0), metric, internal))
    try:
        baseline = int(request.GET.get("base", 0))
    except ValueError:
        baseline = 0
    selections = parse_selections(sel, internal)
    baseline = baseline if 0 <= baseline < len(selections) else 0
    for i, s in enumerate(selections):
        s["remove_url"] = _compare_url(sel[:i] + sel[i + 1:], 0, metric, internal)
        s["baseline_url"] = _compare_url(sel, i, metric, internal)
    valid = [s for s in selections if s["rows"]]
    chart = None
    if valid:
        groups = [(s["label"], s["rows"]) for s in valid]
        single = all(not s.get("series") for s in valid)
        chart = charts.build_chart("chart-compare", _("Comparison"), groups, metric=metric,
                                   kind="bar" if single else "line")
    spt = sorted({r.table.methodology.statements_per_transaction for s in valid for r in s["rows"]} - {None})
    methodologies = {r.table.methodology.pk: r.table.methodology for s in valid for r in s["rows"]}
    differences = methodology_differences(sorted(methodologies.values(), key=lambda m: m.slug))
    return render(request, "whitepaper/compare.html", {
        "selections": selections, "baseline": baseline, "metric": metric, "metric_label": dict(COMPARE_METRICS)[metric],
        "metrics": COMPARE_METRICS, "chart": chart, "chart_rows": charts.chart_rows(chart) if chart else [],
        "table": compare_table(selections, metric, baseline) if selections else None,
        "qps_definitions_differ": len(spt) > 1, "statements_per_transaction": spt,
        "methodology_differences": differences,
        "too_many": len(sel) > MAX_SELECTIONS, "sel": sel,
        "choices": PublishedResult.objects.visible(toggle["include_internal"]).facets(),
        "max_selections": MAX_SELECTIONS, **toggle,
    })


# --- Sizing ------------------------------------------------------------------------------------

def smallest_flavours(form):
    """Per document and series: the smallest flavour whose published metric reaches the target."""
    data = form.cleaned_data
    filter_data = {"engine": data["engine"], "include_internal": data["include_internal"]}
    for key in ("version", "vendor"):
        if data.get(key):
            filter_data[key] = data[key]
    return ResultFilter(filter_data, queryset=PublishedResult.objects.all()).qs.smallest_reaching_once(
        data["metric"], data["target"])


@catalogue_page
def sizing(request):
    engines = list(Engine.objects.filter(versions__results__isnull=False).distinct())
    form = SizingForm(request.GET or None, engines=engines)
    answers = smallest_flavours(form) if form.is_valid() else None
    return render(request, "whitepaper/sizing.html", {"form": form, "answers": answers,
                                                       "metric": form.cleaned_data["metric"] if answers is not None else ""})
