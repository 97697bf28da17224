"""Customer pages: home, document, engine, engine version, edition diff, flavour, compare, sizing. The explorer
(/explore/ and its CSV) is whitepaper/explorer.py.

Every catalogue page is wrapped in `catalogue_page` (ETag/Last-Modified, 304, cache invalidated by
an import) and reads a fixed number of queries whatever the number of rows."""

from itertools import groupby
from urllib.parse import urlencode

from django.db.models import Count, Q
from django.http import Http404, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html_join
from django.utils.translation import pgettext
from django.utils.translation import gettext as _

from . import charts, display, editions
from .explorer import EXPLORER_COLUMNS, UNSORTED, explorer_state  # noqa: F401  (the explorer's names, as before)
from .explorer import FLAVOUR_LINK_COLUMNS, has_value
from .filters import include_internal
from .forms import SizingForm, sizing_form
from .metrics import METRIC_NAMES
from .flavors import flavour_sheet
from .models import Document, Engine, EngineVersion, Flavor, Origin, PublishedResult
from .pages import catalogue_page, cell, column_label, family_name, measurement_html
from .compare import COMPARE_METRICS, MAX_SELECTIONS, SERIES_KEYS
from .compare_labels import comparison, methodology_differences_data
from .queries import document_newness, version_sort_key
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

