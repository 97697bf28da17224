"""Customer pages: home, document, engine version, flavour explorer (+ CSV), compare, sizing.

Every catalogue page is wrapped in `catalogue_page` (ETag/Last-Modified, 304, cache invalidated by
an import) and reads a fixed number of queries whatever the number of rows."""

import functools
import re
from itertools import chain, groupby
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q
from django.http import Http404, QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext_lazy, pgettext
from django.utils.translation import gettext as _

from config.htmx import wants_partial

from . import charts, cursors, display, editions
from .export import iter_csv_lines
from .filters import ExplorerFilter, ResultFilter, include_internal
from .forms import SizingForm, sizing_form
from .metrics import METRIC_NAMES, QPS_PUBLISHED_LABEL, metric_label, qps_definitions
from .freshness import catalogue_stamp
from .flavors import flavour_sheet
from .models import Document, Engine, EngineVersion, Flavor, Origin, PublishedResult
from .pages import catalogue_page, cell, column_label, family_name, measurement_html
from .compare import COMPARE_METRICS, MAX_SELECTIONS, SERIES_KEYS
from .compare_labels import comparison, methodology_differences_data
from .queries import SORTS, document_newness, field_value, keyset_fields, version_sort_key
from .display import data_sizes
from .sizing import LATENCY_METRIC, SIZING_METRICS, asked_metric, latency_note, smallest_flavours


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
                    n_documents=Count("results__table__document", distinct=True),
                    # rows whose document names the version only as an example (Alibaba's "PPAS 10")
                    n_example=Count("results", filter=Q(results__table__version_example=True), distinct=True))
                .order_by("engine__name", "version"))
    engines = [(engine, sorted(vs, key=lambda v: version_sort_key(v.version)))
               for engine, vs in groupby(versions, key=lambda v: v.engine)]
    # An aggregate query ignores Meta.ordering, so the order is asked for here.
    documents = Document.objects.select_related("vendor").annotate(n_tables=Count("tables")).newest_first()
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
                cells.append({"note": True, "value": "", "label": column_label(column), "column": column})
            else:
                cells.append({"note": False, "value": cell(result, column), "label": column_label(column), "column": column,
                              "link": result.flavor.get_absolute_url() if column in FLAVOUR_LINK_COLUMNS else "",
                              "newer": display.superseded_cell(result, column)})
        if table.document.vendor.is_internal:  # the run behind the row: its interval, flags and record
            cells.append({"note": False, "value": measurement_html(result), "label": _("Measurement"), "column": "measurement"})
        rows.append({"result": result, "cells": cells})
    return rows


WIDE_TABLE_COLUMNS = 7


def document_sections(document):
    """Tables in document order, grouped by section and methodology, each group with one chart."""
    tables = list(document.tables.select_related("methodology", "document__vendor").order_by("position"))
    # The document's rows and, in the same query, the newest later edition of each (a row a later edition printed
    # otherwise says what it printed: editions.superseded).
    own = PublishedResult.objects.filter(table__document=document)
    read = list(PublishedResult.objects.filter(
        Q(table__document=document) | Q(editions.superseded_candidates(own, PublishedResult.objects.visible()))
    ).with_provenance().document_order())
    results = [r for r in read if r.table.document_id == document.pk]
    newer = editions.superseded(results, read)
    for r in results:
        r.superseded = newer.get(r.pk)
    by_table = {}
    for result in results:
        by_table.setdefault(result.table_id, []).append(result)
    groups = []
    previous_heading = None
    for (section, _methodology), group_tables in groupby(tables, key=lambda t: (t.section, t.methodology_id)):
        group_tables = list(group_tables)
        for table in group_tables:
            table.rows = by_table.get(table.pk, [])
            table.headers = [column_label(c) for c in table.columns] + ([_("Measurement")] if document.vendor.is_internal else [])
            table.row_cells = _table_rows(table)
            table.iops_note = any(r.iops_depends_on_disk for r in table.rows)
        group_results = [r for t in group_tables for r in t.rows]
        first = group_tables[0]
        chart = charts.build_chart(f"chart-{first.anchor}", charts.caption(
            group_results, display.section_title(first) if section else display.table_label(first)),
            charts.split_series(group_results))
        # Tables of many columns (Alibaba's pgbench tables: spec, size, storage, capacity, data, hot data, both QPS)
        # take the page's width, the chart below them: beside it their key columns would scroll out of view.
        wide = any(len(t.columns) > WIDE_TABLE_COLUMNS for t in group_tables)
        new_heading = bool(first.heading) and first.heading != previous_heading
        # The heading above the group's tables (its chapter's where it opens one, else its section's): where the
        # summary's link to an engine version lands (document_summary).
        groups.append({"section": section, "tables": group_tables, "chart": chart, "wide": wide,
                       "chart_rows": charts.chart_rows(chart), "methodology": group_tables[0].methodology,
                       "heading": first.heading, "new_heading": new_heading, "heading_id": f"{first.anchor}-heading"})
        previous_heading = first.heading
    return groups


def contents(groups):
    """The contents: groups under their engine heading, [{"heading": first table or None, "groups": [...]}]."""
    chapters = []
    for group in groups:
        if not chapters or group["new_heading"] or (chapters[-1]["heading"] and not group["heading"]):
            chapters.append({"heading": group["tables"][0] if group["heading"] else None, "groups": []})
        chapters[-1]["groups"].append(group)
    return chapters


# A document's contents (every table by its printed number) is shown open up to this many tables; a longer one folds,
# the summary's engine links above it, so the first table stays on a 1280 x 800 screen (issue 49.7: the 2023
# document's 36 tables took 340 px and put its first row at 899 px; 20 tables take 161-181 px).
CONTENTS_OPEN_TABLES = 24


def document_summary(groups):
    """What a document page opens with: how many tables and results, and the engine versions they cover, each a link
    to the heading above its first tables (a reader who came for one version reaches it in one step, issue 49.7)."""
    results = [r for g in groups for t in g["tables"] for r in t.rows]
    first_group = {}
    for group in groups:
        for t in group["tables"]:
            for r in t.rows:
                first_group.setdefault(r.engine_version, group)
    versions = sorted(first_group, key=lambda v: (v.engine.name, version_sort_key(v.version)))  # as charts.caption
    engines = format_html_join(pgettext("list separator", ", "), '<a class="engine-link" href="#{}">{}</a>',
                               ((first_group[v]["heading_id"], str(v)) for v in versions))
    tables = sum(len(g["tables"]) for g in groups)
    return {"tables": tables, "results": len(results), "engines": engines,
            "contents_open": tables <= CONTENTS_OPEN_TABLES}


@catalogue_page
def document_detail(request, slug):
    document = get_object_or_404(Document.objects.select_related("vendor"), slug=slug)
    return render(request, "whitepaper/document.html", {
        "document": document,
        "methodologies": list(document.methodologies.all()),
        "groups": (groups := document_sections(document)), "contents": contents(groups),
        "summary": document_summary(groups),
        "editions": [p for p in edition_links(vendor_coverage(document.vendor)) if document in p[:2]],
    })


# --- Edition diff -----------------------------------------------------------------------------

def edition_links(pairs):
    """[(older, newer, shared engine versions)] (editions.edition_pairs) from (document, engine version)
    pairs; no query."""
    documents = {}
    for document, engine_version in pairs:
        documents.setdefault(document.pk, document).__dict__.setdefault("engine_versions", set()).add(engine_version)
    return editions.edition_pairs(documents.values())


def vendor_coverage(vendor):
    """(document, engine version) for every engine version each of a vendor's documents publishes: one query."""
    rows = (PublishedResult.objects.filter(table__document__vendor=vendor).order_by()
            .values_list("table__document_id", "table__document__slug", "table__document__published",
                         "engine_version_id", "engine_version__version", "engine_version__engine__name").distinct())
    documents, versions = {}, {}
    for doc_id, slug, published, ev_id, version, engine in rows:
        document = documents.setdefault(doc_id, Document(pk=doc_id, slug=slug, published=published, vendor=vendor))
        ev = versions.setdefault(ev_id, EngineVersion(pk=ev_id, version=version, engine=Engine(name=engine)))
        yield document, ev


def _diff_rows(table_diff):
    """A table's rows for the page: each metric either edition prints, as printed, with its % change."""
    metrics = [m for m in METRIC_NAMES if any(getattr(r.result, m) is not None
                                              or (r.old and getattr(r.old, m) is not None) for r in table_diff.rows)]
    rows = []
    for r in table_diff.rows:
        changed = {m: pct for m, _old, _new, pct in r.changes}
        cells = [{"old": display.metric_shown(r.old, m) if r.old else "", "new": display.metric_shown(r.new, m) if r.new else "",
                  "changed": m in changed, "pct": changed.get(m), "label": column_label(m), "column": m} for m in metrics]
        rows.append({"diff": r, "cells": cells})
    return [column_label(m) for m in metrics], rows


@catalogue_page
def edition_diff(request, older, newer):
    """Two editions of one vendor's numbers, per table: same, changed (with % change), new and gone."""
    docs = {d.slug: d for d in Document.objects.select_related("vendor").filter(slug__in=[older, newer])}
    if older not in docs or newer not in docs or older == newer or docs[older].vendor_id != docs[newer].vendor_id:
        raise Http404(_("No two editions of one vendor at this address."))
    old, new = docs[older], docs[newer]
    if document_newness(old) > document_newness(new):
        return redirect("whitepaper:edition-diff", new.slug, old.slug)
    results = list(PublishedResult.objects.filter(table__document__in=[old, new]).with_provenance().document_order())
    old_rows = [r for r in results if r.table.document_id == old.pk]
    new_rows = [r for r in results if r.table.document_id == new.pk]
    tables = editions.diff(old_rows, new_rows)
    for t in tables:
        t.headers, t.row_cells = _diff_rows(t)
    shared = editions.shared_engine_versions(old_rows, new_rows)
    by_version = {}  # engine version id -> the vendor's other documents publishing it (one query)
    for document, engine_version in vendor_coverage(old.vendor):
        if document.pk not in (old.pk, new.pk):
            by_version.setdefault(engine_version.pk, []).append(document)
    only = []
    for doc, rows, other in ((old, old_rows, new), (new, new_rows, old)):
        evs = sorted({r.engine_version for r in rows} - shared, key=lambda ev: (ev.engine.name, version_sort_key(ev.version)))
        if evs:
            # Where another edition publishes them, link to that comparison: "only this edition" would be untrue.
            elsewhere = {}
            for ev in evs:
                for d in by_version.get(ev.pk, []):
                    elsewhere.setdefault(d.pk, (d, []))[1].append(ev)
            links = [(d, versions, reverse("whitepaper:edition-diff", args=[a.slug, b.slug]))
                     for d, versions in sorted(elsewhere.values(), key=lambda dv: document_newness(dv[0]))
                     for a, b in [sorted([doc, d], key=document_newness)]]
            only.append({"document": doc, "other": other, "versions": evs, "elsewhere": links})
    engines = sorted({ev.engine.name for ev in shared})
    return render(request, "whitepaper/edition_diff.html", {
        "old": old, "new": new, "tables": tables, "only": only,
        "engines": pgettext("list separator", ", ").join(engines),
        "totals": {s: sum(t.counts[s] for t in tables) for s in editions.STATUSES},
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
                 .newest_first())
    return render(request, "whitepaper/engine.html", {
        "engine": engine_obj, "versions": versions, "documents": documents, **toggle})


# --- Engine version -----------------------------------------------------------------------------

@catalogue_page
def engine_version(request, engine, version):
    # <stated:version> has turned '-' into '' (not stated).
    version_obj = get_object_or_404(EngineVersion.objects.select_related("engine"), engine__slug=engine, version=version)
    toggle = _origin_toggle(request)
    visible = PublishedResult.objects.visible(toggle["include_internal"])
    results = list(visible.filter(engine_version=version_obj).with_provenance().document_order())
    drawn = editions.merge_identical_series(results)  # a series several editions print identically: one line
    # Each flavour's newest published figure by default (as sizing and compare); every edition with latest=false.
    newest_only = request.GET.get("latest") != "false"
    if newest_only:
        drawn = [r for r in drawn if r.is_newest]
    by_family = {}
    for result in drawn:
        by_family.setdefault(family_name(result.flavor.family) or _("No family stated"), []).append(result)
    family_charts = []
    for i, (family, rows) in enumerate(by_family.items(), 1):
        chart = charts.build_chart(f"chart-family-{i}", charts.caption(rows, family),
                                   charts.split_series(rows, key=charts.edition_series_key, fallback=family))
        # Lines measured under unlike set-ups (Alibaba's and Huawei's sysbench): the compare page's caveat.
        differences = methodology_differences_data(sorted({r.table.methodology for r in rows}, key=lambda m: m.slug))
        family_charts.append({"family": family, "chart": chart, "chart_rows": charts.chart_rows(chart), "rows": rows,
                              "methodology_differences": [(d["label"], d["shown"]) for d in differences],
                              "revised": [], "metric_label": next(
                                  (m["label"] for m in chart["metrics"] if m["name"] == chart["initial_metric"]), "")})
    # Where an older edition printed another number for a drawn flavour (the chart's metric): one query per metric.
    for metric in {fc["chart"]["initial_metric"] for fc in family_charts} - {None} if newest_only else ():
        shown_in = [fc for fc in family_charts if fc["chart"]["initial_metric"] == metric]
        editions.attach_older_editions([r for fc in shown_in for r in fc["rows"]], metric, visible)
        for fc in shown_in:
            fc["revised"] = [{"result": r, "shown": display.metric_shown(r, metric), "old": display.metric_shown(r.revised, metric),
                              "year": r.revised.table.document.published.year, "pct": r.revised_pct}
                             for r in fc["rows"] if r.revised is not None]
    params = request.GET.copy()
    if newest_only:
        params["latest"] = "false"
    else:
        params.pop("latest", None)
    tables = {}
    for result in results:
        tables.setdefault(result.table_id, result.table)
    return render(request, "whitepaper/engine_version.html", {
        "editions": edition_links((r.table.document, r.engine_version) for r in results),
        "same_in": sorted({display.same_in(r.same_in) for r in drawn if len(r.same_in) > 1}),
        "engine_version": version_obj, "family_charts": family_charts, "tables": list(tables.values()),
        "n_results": len(results), "newest_only": newest_only,
        "latest_toggle_url": request.path + (f"?{params.urlencode()}" if params else ""), **toggle,
    })


# --- Flavour -------------------------------------------------------------------------------------


@catalogue_page
def flavor_detail(request, pk=None, **address):
    """One flavour, as ec2instances.info has a page per instance: every published row of it (each edition and
    methodology, revisions said), its revision history and the same size elsewhere (flavors.flavour_sheet).
    Addressed by its id or by name (`address`: vendor and spec code, or vendor, family and size)."""
    flavors = Flavor.objects.select_related("vendor", "family")
    if pk is not None:
        flavor = get_object_or_404(flavors, pk=pk)
    else:
        found = list(flavors.filter(**Flavor.address_lookup(**address))[:2])
        if len(found) != 1:  # none, or (a catalogue where family and size name two flavours) not one
            raise Http404("No flavour has this address.")
        flavor = found[0]
    toggle = _origin_toggle(request)
    sheet = flavour_sheet(flavor, toggle["include_internal"] or flavor.vendor.is_internal)
    metrics = sheet.metrics
    rows = [{"result": r, "cells": [(m, column_label(m), display.metric_shown(r, m), m == "iops" and r.iops_depends_on_disk)
                                    for m in metrics], "revised": display.revised_from(r),
             "superseded": display.superseded(r)} for r in sheet.results]
    explore = {"vendor": flavor.vendor.slug, "vcpus": flavor.vcpus, "memory_gb": flavor.memory_gb, "latest": "false"}
    if flavor.spec_code:
        explore["flavor"] = flavor.spec_code
    if flavor.family:
        explore["family"] = flavor.family.slug
    return render(request, "whitepaper/flavor.html", {
        "flavor": flavor, "sheet": sheet, "rows": rows, "metric_headers": [(m, column_label(m)) for m in metrics],
        "same_size": [{"result": r, "tps": display.metric_shown(r, "tps"), "qps": display.metric_shown(r, "qps"),
                       "tpm": display.metric_shown(r, "tpm"), "rw_qps": display.metric_shown(r, "rw_qps")}
                      for r in sheet.same_size],
        "explore_url": reverse("whitepaper:explore") + "?" + urlencode(explore),
        "api_url": reverse("v1:flavor-detail", args=[flavor.pk]), **toggle,
    })


# --- Explorer ------------------------------------------------------------------------------------

# The explorer's columns (key -> label), in the order the picker lists them and the table shows them: key figures
# first (the flavour's family and size, its metrics and the data size they were measured at), then what tells rows
# apart, then where they come from. Each sorts by the catalogue's sort key of the same name (queries.SORTS) unless
# UNSORTED.
EXPLORER_COLUMNS = {
    "family": gettext_lazy("Family"),
    "vcpus": gettext_lazy("vCPUs"),
    "memory_gb": gettext_lazy("Memory (GB)"),
    "tps": column_label("tps"),
    "tps_per_core": metric_label("tps_per_core"),  # computed (PublishedResult.tps_per_core)
    "qps": QPS_PUBLISHED_LABEL,
    "qps_normalised": metric_label("qps_normalised"),  # computed (PublishedResult.qps_normalised)
    "ro_qps": column_label("ro_qps"),
    "rw_qps": column_label("rw_qps"),
    "tpm": column_label("tpm"),
    "hot_rows": column_label("hot_rows"),
    "data_rows": column_label("data_rows"),
    "memory_ratio": gettext_lazy("CPU:memory"),
    "flavor": gettext_lazy("Spec code"),
    "deployment": gettext_lazy("Deployment"),
    "edition": column_label("edition"),  # sorted with the deployment (queries.SORTS["deployment"])
    "engine": gettext_lazy("Engine"),
    "vendor": gettext_lazy("Vendor"),
    "document": gettext_lazy("Document"),
    "max_connections": column_label("max_connections"),
    "iops": column_label("iops"),
    "table": gettext_lazy("Table"),
}
UNSORTED = {"qps_normalised", "tps_per_core", "edition"}
assert set(EXPLORER_COLUMNS) - UNSORTED <= set(SORTS)
TEXT_COLUMNS = {"vendor", "document", "engine", "family", "flavor", "deployment", "edition", "table"}  # left-aligned
# Shown unless `cols` is chosen, each where a row of the page has a value: what tells the rows apart (SQL Server's
# edition and deployment, Alibaba's hot data) and every metric the rows have (TPM for SQL Server, read-only and
# read-write QPS for pgbench); a column empty for every row of the page is left out (and named under the table).
# Max connections (a stress-test capacity, not a performance figure), IOPS, test data and TPS per vCPU are one tick
# away, so that the default columns of a page mixing engines still fit 1280 px.
DEFAULT_COLUMNS = ["family", "vcpus", "memory_gb", "tps", "qps", "ro_qps", "rw_qps", "tpm", "hot_rows", "memory_ratio",
                   "flavor", "deployment", "edition", "engine", "vendor", "document"]
DISPLAY_ORDER = list(EXPLORER_COLUMNS)
FILTER_FIELDS = ["q", "vendor", "document", "engine", "version", "family", "memory_ratio", "deployment", "edition", "hot_rows",
                 "min_vcpus", "max_vcpus", "min_memory_gb", "max_memory_gb", "min_tps", "max_tps",
                 "min_qps", "max_qps", "min_max_connections", "max_max_connections", "latest", "include_internal"]


FLAVOUR_LINK_COLUMNS = {"vcpus", "memory_gb", "flavor"}  # cells linking to the flavour's page (views.flavor_detail)


def has_value(result, column):
    """Whether the explorer's `column` says something for this row (an empty cell otherwise)."""
    flavor = result.flavor
    if column == "family":
        return flavor.family_id is not None
    if column == "flavor":
        return bool(flavor.spec_code)
    if column == "memory_ratio":
        return bool(flavor.ratio)
    if column in ("deployment", "edition"):
        return bool(getattr(result, column))
    if column == "iops":
        return result.iops is not None or result.iops_depends_on_disk
    if column in ("tps_per_core", "qps_normalised") or column in METRIC_NAMES:
        return getattr(result, column) is not None
    return True


def shown_columns(cols, chosen, results):
    """The columns the table shows, in DISPLAY_ORDER: the chosen ones, or the default ones that a row of the page
    has a value for; and the default ones left out as empty."""
    ordered = sorted(cols, key=DISPLAY_ORDER.index)
    if chosen or not results:
        return ordered, []
    shown = [c for c in ordered if any(has_value(r, c) for r in results)]
    return shown, [c for c in ordered if c not in shown]


def latest_default(params):
    """The explorer shows each flavour's newest edition only (`latest=true`), older editions one click
    away (`latest=false`); a chosen document shows all of its own rows (`latest=false`)."""
    return "false" if params.get("document") else "true"


def explorer_params(params):
    """The query string with the explorer's default for `latest` filled in."""
    if params.get("latest"):
        return params
    params = params.copy()
    params["latest"] = latest_default(params)
    return params


def requested_columns(params):
    """The names in `cols`, repeated (cols=a&cols=b, as the form sends) or comma-separated (cols=a,b, as typed)."""
    return [name.strip() for value in params.getlist("cols") for name in value.split(",") if name.strip()]


def chosen_columns(params):
    """The columns the reader chose (`cols`), [] for the default."""
    return list(dict.fromkeys(c for c in requested_columns(params) if c in EXPLORER_COLUMNS))


def unknown_columns(params):
    """Names in `cols` that are no column: said on the page (issue 49.9), never silently dropped."""
    return [c for c in requested_columns(params) if c not in EXPLORER_COLUMNS]


def explorer_state(request):
    """The filters, the matching rows sorted, the columns, `sort` as given and the sort terms applied."""
    params = explorer_params(request.GET)
    cols = chosen_columns(params) or DEFAULT_COLUMNS
    sort = params.get("sort", "")
    sort_key = sort.lstrip("-")
    terms = [sort] if sort_key in SORTS and sort_key in EXPLORER_COLUMNS and sort_key not in UNSORTED else []
    filterset = ExplorerFilter(params, queryset=PublishedResult.objects.with_provenance())
    if filterset.is_valid():
        queryset = filterset.qs.keyset_sorted(terms)
    else:
        queryset = PublishedResult.objects.none()
    return filterset, queryset, cols, sort, terms


def other_editions(results, internal):
    """For this page's rows, in one query: {result id: the documents printing that row identically}
    (editions.same_in), and each row's `revised_from` (editions.revisions: an older edition printed
    other numbers) and `superseded` (editions.superseded: the newest later edition printed other numbers)."""
    if not results:
        return {}
    # the rows that may print one of them the same, and each one's newest older edition printing it otherwise:
    # a few rows, not every edition of the page's flavours
    visible = PublishedResult.objects.visible(internal)
    candidates = editions.read_editions(
        visible, editions.may_print_the_same(results, visible) | Q(editions.revision_candidates(results, visible))
        | Q(editions.superseded_candidates(results, visible)), results)
    revised = editions.revisions(results, [*candidates, *results])
    newer = editions.superseded(results, [*candidates, *results])  # an older row says what the newest edition printed
    for r in results:
        r.revised_from = revised.get(r.pk)
        r.superseded = newer.get(r.pk)
    return editions.same_in(results, candidates)


# The cells that read one related row only, besides nothing of their own row: every row of the page sharing that
# flavour (its size, spec code, ratio and family), table (its label, its document's vendor) or engine version shows
# the same cell, made once per page (explorer_rows). The document cell's link, made once per document, is another.
CELL_SOURCES = {"vcpus": "flavor_id", "memory_gb": "flavor_id", "flavor": "flavor_id", "memory_ratio": "flavor_id",
                "family": "flavor_id", "engine": "engine_version_id", "vendor": "table_id", "table": "table_id"}


def explorer_cell(result, column, same=None, made=None):
    """A cell of the explorer's row (safe HTML or text). `made`: the cells made for the other rows of the page (a
    dict, filled here), so that a cell reading one related row only (CELL_SOURCES) is made once per page."""
    made = {} if made is None else made
    source = CELL_SOURCES.get(column)
    if source is not None:
        key = (column, getattr(result, source))
        if key not in made:
            made[key] = related_cell(result, column, made)
        return made[key]
    if column == "document":
        key = ("document", result.table.document_id)
        if key not in made:
            made[key] = document_link(result.table.document, made.get("covers", {}).get(result.table.document.slug, ""))
        link = made[key]
        documents = (same or {}).get(result.pk, [])
        if len(documents) > 1:  # printed identically by several editions
            return format_html('{} <span class="same-in">{}</span>', link, display.same_in(documents))
        if getattr(result, "revised_from", None):  # an older edition printed other numbers: say which and how
            link = format_html('{} <span class="revised">{}</span>', link, display.revised_from(result))
        if getattr(result, "superseded", None):  # a later edition printed other numbers: say what
            link = format_html('{} <span class="revised superseded">{}</span>', link, display.superseded(result))
        return link
    if column == "iops" and result.iops_depends_on_disk:
        return _("depends on disk")
    return cell(result, column)


def document_link(document, covers=""):
    """The document cell's link: its date and short title, the full title and date on hover. Made once per process
    for everything it shows and depends on (a page at 10^5 results links up to 100 documents, each ~50 µs to make:
    the URL, the localised date), so an edited document or another language is another key, never a stale link."""
    return _document_link(document.slug, document.title, document.title_en, document.published, covers, get_language(),
                          get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)


@functools.lru_cache(maxsize=4096)
def _document_link(slug, title, title_en, published, covers, _language, _prefix, _urlconf):
    document = Document(slug=slug, title=title, title_en=title_en, published=published)
    title = display.document_title(document)
    link = format_html('<a href="{}" title="{}">{}</a>', document.get_absolute_url(),
                       title + pgettext("list separator", ", ") + display.date(document.published),
                       display.document_short_title(document))
    # the printed title may name one engine of several (Alibaba's "RDS for MySQL" with PPAS and PostgreSQL rows)
    return format_html('{} <span class="covers">({})</span>', link, covers) if covers else link


def flavour_url(flavor, made):
    """The flavour's page (views.flavor_detail), made once per page (`made`: explorer_cell's)."""
    key = ("flavour url", flavor.pk)
    if key not in made:
        made[key] = flavor.get_absolute_url()
    return made[key]


def related_cell(result, column, made):
    """A cell of CELL_SOURCES: what it shows reads the row's flavour, table or engine version only."""
    flavor = result.flavor
    if column == "vendor":
        return display.vendor_name(result.table.document.vendor)
    if column == "engine":
        return str(result.engine_version)
    if column == "family":
        return display.family_html(flavor.family)
    if column == "flavor" and flavor.spec_code:  # the flavour's page; a long spec code may break after its dots
        parts = flavor.spec_code.split(".")
        return format_html('<a href="{}">{}</a>', flavour_url(flavor, made),
                           format_html_join(mark_safe(".<wbr>"), "{}", ((p,) for p in parts)))
    if column in FLAVOUR_LINK_COLUMNS and has_value(result, column):  # the flavour's page (every edition of it)
        return format_html('<a href="{}">{}</a>', flavour_url(flavor, made), cell(result, column))
    if column == "table":  # the row's source: its table on the document page (#table-N)
        return format_html('<a href="{}">{}</a>', result.table.get_absolute_url(), display.table_label_html(result.table))
    return cell(result, column)


def explorer_rows(results, shown, same, covers=None):
    """The table's rows: each one's cells as HTML (explorer_cell in a <td> each, the first one followed by the origin
    label of an internal measurement, _origin.html) and its compare checkbox's label (row_name). `covers`: what each
    document covers ({slug: text}, the facets' `document_covers`), said beside its title."""
    made = {"covers": covers or {}}
    flavour_link = not FLAVOUR_LINK_COLUMNS & set(shown)  # no size column shown: the first cell links to the flavour
    link_text = _("flavour")
    opening = [format_html('<td data-col="{}"{}>', c, mark_safe(' class="text"') if c in TEXT_COLUMNS else "")
               for c in shown]
    rows = []
    for r in results:
        values = [explorer_cell(r, c, same, made) for c in shown]
        if flavour_link:
            values[0] = format_html('{} <a class="flavour-link" href="{}">{}</a>', values[0], flavour_url(r.flavor, made),
                                    link_text)
        if r.is_internal:
            values[0] = format_html("{}{}", values[0], render_to_string("whitepaper/_origin.html", {"result": r}))
        rows.append({"result": r, "label": _("Compare %(name)s") % {"name": row_name(r)},  # its checkbox's
                     "cells": mark_safe("".join(f"{td}{conditional_escape(v)}</td>" for td, v in zip(opening, values)))})
    return rows


def row_name(result):
    """What a row is called where it has to be named alone (its compare checkbox): family, ratio, spec code,
    size, engine, deployment, edition, data size, vendor and year; distinct for the rows of a page."""
    flavor, document = result.flavor, result.table.document
    parts = [display.family_name(flavor.family), display.memory_ratio_text(flavor), flavor.spec_code,
             f"{flavor.vcpus} vCPU / {flavor.memory_gb} GB", str(result.engine_version),
             result.get_deployment_display() if result.deployment else "",
             display.edition_name(result.edition) if result.edition else "",
             f"{column_label('hot_rows')} {cell(result, 'hot_rows')}" if result.hot_rows else "",
             f"{display.vendor_name(document.vendor)} {document.published.year}"]
    return " · ".join(str(p) for p in parts if p)


EXPLORER_PAGE_SIZE = 100
# How many rows after a page are counted: "Results 1-100 of 512", or "of more than 1,100" past that. Counting every
# match of a catalogue of 10^5 would cost each page more than reading it; counting at most this many after the page
# (an index range from its last row) costs the same at any size and depth.
EXPLORER_COUNT_AHEAD = 1000


def page_number(raw):
    """(page number, whether `raw` was one): no `page` is page 1; 0, -1 or "abc" is page 1 said so (explorer_page)."""
    if raw in (None, ""):
        return 1, True
    try:
        number = int(raw)
    except ValueError:
        return 1, False
    return (number, True) if number >= 1 else (1, False)


def explorer_page(queryset, terms, params):
    """One page of the explorer's rows (EXPLORER_PAGE_SIZE, `page` from 1) in one query, and how many follow it
    (one count query, capped: EXPLORER_COUNT_AHEAD): the same queries on every page.

    Next and Previous carry the place of the page's last / first row (`after=` / `before=`, a cursor as the API's
    `next`: whitepaper/cursors.py), so the page after it is read from the sort's index at any depth
    (`page_after`, `page_before`), as the API's cursor pages are; `page` then only numbers the rows. A page
    number alone (a typed or older link, or a cursor made for another sort) is read by its offset (`rows`).

    Never a silent change of what was asked (issue 49.10): a page past the last one is answered with the last page
    (counting every row is then worth it), a page that is not a number with page 1, a cursor that cannot be read
    by the page's number; `notice` says which."""
    raw = params.get("page")
    number, valid = page_number(raw)
    notice = None if valid else _("“%(page)s” is not a page number (pages are numbered from 1): page 1 is shown.") % {"page": raw[:40]}
    cursors_given = {key: params[key] for key in ("after", "before") if params.get(key)}
    decoded = {key: cursors.decode(token, terms) for key, token in cursors_given.items()}
    if any(value is None for value in decoded.values()) and notice is None:
        notice = _("The position in this link could not be read (it belongs to another sort or was changed): "
                   "page %(page)s is shown by its number.") % {"page": number}
    page = read_page(queryset, terms, number, *((decoded.get(key) if number > 1 else None) for key in ("after", "before")))
    if not page["results"] and number > 1:
        last = max(1, -(-queryset.count() // EXPLORER_PAGE_SIZE))
        page = read_page(queryset, terms, last, None, None)
        page["notice"] = _("There is no page %(asked)s: these results end at page %(last)s, shown here.") % {
            "asked": number, "last": last}
    else:
        page["notice"] = notice
    return page


def read_page(queryset, terms, number, after, before):
    if after is not None:
        rows = queryset.page_after(terms, after, EXPLORER_PAGE_SIZE + 1)
    elif before is not None:  # the row the cursor names follows this page
        rows = queryset.page_before(terms, before, EXPLORER_PAGE_SIZE) + [None]
    else:
        start = (number - 1) * EXPLORER_PAGE_SIZE
        rows = list(queryset.rows(start, start + EXPLORER_PAGE_SIZE + 1))
    has_next = len(rows) > EXPLORER_PAGE_SIZE
    rows = rows[:EXPLORER_PAGE_SIZE]
    start = (number - 1) * EXPLORER_PAGE_SIZE
    page = {"results": rows, "number": number, "first": start + 1, "last": start + len(rows),
            "has_next": has_next, "has_previous": number > 1, "complete": number == 1 and not has_next,
            "next": number + 1, "after": cursors.encode(terms, rows[-1]) if has_next else None,
            "previous": number - 1 if number > 2 else None,
            "before": cursors.encode(terms, rows[0]) if number > 2 and rows else None}
    if not rows:
        page["total"], page["more"] = 0, False
    else:
        values = [field_value(rows[-1], path) for path, _descending in keyset_fields(terms)]
        following = queryset.count_after(terms, values, EXPLORER_COUNT_AHEAD)
        page["more"] = following > EXPLORER_COUNT_AHEAD
        page["total"] = page["last"] + min(following, EXPLORER_COUNT_AHEAD)
    return page


def catalogue_facets(request, internal, engine):
    """The filters' choices (display.facets), kept in the cache under the catalogue stamp and language:
    they change only with the catalogue, and reading them walks every result."""
    changed, n = catalogue_stamp(request)
    key = f"facets:{changed.isoformat() if changed else '-'}:{n}:{internal}:{engine}:{get_language()}"
    facets = cache.get(key)
    if facets is None:
        facets = display.facets(PublishedResult.objects.visible(internal), engine=engine)
        cache.set(key, facets, 3600)
    return facets


def canonical_query(params):
    """The query string without empty values, the default columns and the default `latest` (what the explorer
    pushes and links to; static/js/explorer.js does the same in the browser)."""
    default_cols = params.getlist("cols") == DEFAULT_COLUMNS
    default_latest = params.getlist("latest") == [latest_default(params)]
    return urlencode([(k, v) for k, vs in params.lists() for v in vs
                      if v != "" and not (k == "cols" and default_cols) and not (k == "latest" and default_latest)])


def hidden_filters(params):
    """Filter parameters of the URL that the explorer's form has no control for (`flavor`, `vcpus`,
    `edition` ...): kept as hidden inputs, so changing a control never drops them."""
    shown = set(FILTER_FIELDS) | {"sort", "cols"}
    return [(k, v) for k, vs in params.lists() if k in ResultFilter.base_filters and k not in shown
            for v in vs if v != ""]


@catalogue_page
def explore(request):
    versions = request.GET.getlist("version")
    if versions and ":" in versions[0] and not request.GET.get("engine"):
        # A version of the grouped menu ("ppas:10"): that engine's version, at its canonical URL.
        params = request.GET.copy()
        params["engine"], _sep, version = versions[0].partition(":")
        params.setlist("version", [version])
        return redirect(request.path + "?" + canonical_query(params))
    if not getattr(request, "htmx", False) and any(v == "" for _k, vs in request.GET.lists() for v in vs):
        # A form submitted without JavaScript: the same view at its canonical URL (no empty parameters).
        query = canonical_query(request.GET)
        return redirect(request.path + (f"?{query}" if query else ""))
    filterset, queryset, cols, sort, terms = explorer_state(request)
    page = explorer_page(queryset, terms, request.GET)
    results = page["results"]
    same = other_editions(results, include_internal(request.GET))
    shown, empty = shown_columns(cols, bool(chosen_columns(request.GET)), results)
    choices = catalogue_facets(request, include_internal(request.GET), request.GET.get("engine") or None)
    rows = explorer_rows(results, shown, same, choices["document_covers"])
    query = canonical_query(request.GET)
    context = {
        "filterset": filterset, "rows": rows, "cols": cols, "sort": sort, "query": query, "page": page,
        "headers": [(c, EXPLORER_COLUMNS[c]) for c in shown],
        "all_columns": list(EXPLORER_COLUMNS.items()), "default_cols": DEFAULT_COLUMNS, "text_cols": TEXT_COLUMNS,
        "filter_query": urlencode([(k, v) for k, vs in request.GET.lists() if k in FILTER_FIELDS for v in vs if v != ""]),
        # the folded form's summary says how many filters narrow the rows (a phone sees the results first)
        "active_filters": len({k for k, vs in request.GET.lists() if k in FILTER_FIELDS and k != "latest" and any(vs)}
                              | {k for k, _v in hidden_filters(request.GET)}),
    }
    # The version control lists the chosen engine's versions (every engine's, grouped, when none is
    # chosen); an htmx update sends it along (out of band), so it follows the engine.
    context["choices"] = choices
    context["values"] = explorer_params(request.GET)
    for name, latest in (("all_editions_query", "false"), ("newest_query", "true")):
        params = request.GET.copy()
        params["latest"] = latest
        context[name] = canonical_query(params)
    version = request.GET.get("version")
    if version and not request.GET.get("engine"):  # version=10: PostgreSQL 10 and PPAS 10 are not one version
        engines = [name for _e, name, versions in context["choices"]["engine_versions"] if version in versions]
        if len(engines) > 1:
            context["version_engines"] = pgettext("list separator", ", ").join(engines)
    context["compare_series_url"] = compare_series_url(request.GET, results)
    context["qps_definitions"] = qps_definitions(results)
    context["computed_cols"] = UNSORTED
    context["empty_columns"] = [EXPLORER_COLUMNS[c] for c in empty]
    context["unknown_columns"] = unknown_columns(request.GET)
    context["column_keys"] = list(EXPLORER_COLUMNS)
    # The CSV link writes the columns the screen shows (the default ones a row of this page has), not every default one.
    csv_params = request.GET.copy()
    if not chosen_columns(request.GET):
        csv_params.setlist("cols", shown)
    context["csv_query"] = canonical_query(csv_params)
    context["qps_normalised_shown"] = "qps_normalised" in cols
    params = request.GET.copy()
    params.setlist("cols", [c for c in cols if c != "qps"] + ["qps", "qps_normalised"])
    context["add_qps_normalised_query"] = canonical_query(params)
    if wants_partial(request):
        return render(request, "whitepaper/explore.html#update", context)
    context["hidden_filters"] = hidden_filters(request.GET)
    return render(request, "whitepaper/explore.html", context)


def csv_filename(params):
    """A filename that says what was filtered: published-results_engine-mysql_version-8.0_min_vcpus-16.csv
    (filters in the URL's order; sort, columns, page and the BOM switch are not filters)."""
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


# The export columns (export.EXPORT_COLUMNS) behind each explorer column: the ratio column shows derived ratios
# ("1:4 (derived)"), exported beside the document's as memory_ratio_derived.
CSV_COLUMNS = {"iops": ["iops", "iops_note"], "vendor": ["vendor"], "document": ["document", "published", "revised_from", "revised_changes", "superseded_by", "superseded_changes"], "engine": ["engine", "version"],
               "deployment": ["deployment", "edition"], "memory_ratio": ["memory_ratio", "memory_ratio_derived"]}


def csv_columns(cols):
    return list(dict.fromkeys(c for col in cols for c in CSV_COLUMNS.get(col, [col])))  # edition once


def explore_csv(request):
    """The explorer's rows as CSV: every matching row (not one page), the visible columns (as export
    columns; `columns=all`: every column of the export). `bom=true` starts it with a UTF-8 byte order
    mark, for spreadsheets that otherwise read UTF-8 (亿, 独享型) as another encoding."""
    filterset, queryset, cols, _sort, _terms = explorer_state(request)
    columns = None if request.GET.get("columns") == "all" else csv_columns(cols)
    lines = iter_csv_lines(queryset, columns=columns)
    if request.GET.get("bom") == "true":
        lines = chain(["\ufeff"], lines)
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{csv_filename(request.GET)}"'
    return response


# --- Compare ---------------------------------------------------------------------------------------

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
    result = comparison(sel, baseline, metric, internal)
    selections, valid = result["selections"], result["valid"]
    for i, s in enumerate(selections):
        s["remove_url"] = _compare_url(sel[:i] + sel[i + 1:], 0, metric, internal)
        s["baseline_url"] = _compare_url(sel, i, metric, internal)
    chart = None
    if valid:
        single = all(not s.get("series") for s in valid)
        # Each line of a series selection is its own chart series (compare.split_parts), never one zig-zag.
        groups = [(" · ".join(filter(None, [s["label"], part["label"]])), part["rows"])
                  for s in valid for part in (s.get("parts") or [{"label": "", "rows": s["rows"]}])]
        chart = charts.build_chart("chart-compare", _("Comparison"), groups, metric=metric,
                                   kind="bar" if single else "line")
        # The chart and the table show one metric, the URL's: the chart's metric buttons are links.
        drawn = {x["name"] for x in chart["metrics"]} | {metric}
        if "tps" in drawn:
            drawn.add("tps_per_core")
        chart["metric_links"] = [{"name": m, "label": label, "url": _compare_url(sel, result["baseline"], m, internal),
                                  "current": m == metric} for m, label in COMPARE_METRICS if m in drawn]
    for s in selections:
        for part in s.get("parts", []):
            part["url"] = _compare_url([part["sel"] if x == s["raw"] else x for x in sel], 0, metric, internal)
    table = result["table"]
    for row in (table["rows"] if table and table["mode"] == "series" else []):
        for i, c in enumerate(row["cells"]):
            c["selection_label"] = selections[i]["label"]  # a phone's card names each cell's selection
            for candidate in c.get("candidates", []):
                candidate["url"] = _compare_url([candidate["sel"] if j == i else x for j, x in enumerate(sel)],
                                                result["baseline"], metric, internal)
    newest_only = any(s.get("newest_only") for s in selections)
    every_edition = [x if x.isdigit() else urlencode({**QueryDict(x).dict(), "latest": "false"}) for x in sel]
    return render(request, "whitepaper/compare.html", {
        "selections": selections, "baseline": result["baseline"], "metric": metric,
        "metric_label": dict(COMPARE_METRICS)[metric],
        "metrics": COMPARE_METRICS, "chart": chart, "chart_rows": charts.chart_rows(chart) if chart else [],
        "table": result["table"],
        "qps_definitions_differ": result["qps_definitions_differ"],
        "statements_per_transaction": result["statements_per_transaction"],
        "methodology_differences": [(d["label"], d["shown"]) for d in result["methodology_differences"]],
        "qps_normalised_url": _compare_url(sel, baseline, "qps_normalised", internal),
        "newest_only": newest_only, "every_edition_url": _compare_url(every_edition, result["baseline"], metric, internal),
        "too_many": len(sel) > MAX_SELECTIONS, "sel": sel,
        "choices": display.facets(PublishedResult.objects.visible(toggle["include_internal"])),
        "max_selections": MAX_SELECTIONS, **toggle,
    })


# --- Sizing ------------------------------------------------------------------------------------

@catalogue_page
def sizing(request):
    form = sizing_form(request.GET)
    answers = smallest_flavours(form.cleaned_data) if form.is_valid() else None
    metric = asked_metric(form.cleaned_data) if answers is not None else ""
    # The asked metric first (the key number), then the other sizing metrics these answers print; under a latency
    # bound the rate sustained and the bound it was measured under.
    if metric == LATENCY_METRIC:
        columns = [metric, "latency_bound_ms"] if answers else []
    else:
        columns = [metric] + [m for m, _label in SIZING_METRICS if m != metric and any(getattr(r, m) is not None for r in answers)] \
            if answers else []
    rows = [{"result": r, "cells": [(m, column_label(m), display.metric_shown(r, m)) for m in columns],
             "data_size": display.data_size(r), "also": [(o, display.metric_shown(o, metric)) for o in r.also],
             "revised": r.revised and display.metric_shown(r.revised, metric)} for r in answers or []]
    # Columns that say something for an answer only (SQL Server: deployment and edition; no family or spec code).
    shows = {c: any(has_value(r, c) for r in answers or []) for c in ("flavor", "family", "deployment", "edition")}
    return render(request, "whitepaper/sizing.html", {"form": form, "answers": answers, "rows": rows, "metric": metric,
                                                       "shows": shows, "latency": metric == LATENCY_METRIC,
                                                       "data_sizes": data_sizes(answers or []),
                                                       "latency_note": latency_note(form.cleaned_data, answers) if metric else "",
                                                       "metric_headers": [(m, column_label(m)) for m in columns]})
