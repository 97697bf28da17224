"""The explorer (/explore/ and /explore/results.csv): every published result, filtered, sorted and paged, in the
columns the reader chose; its view-model (columns, cells, rows, pages, canonical URLs) and its view.

What the query string asks (filters, sort, page and cursor) is read once per request into a ResultQuery
(whitepaper/result_query.py), shared by the page and its CSV."""

import functools
import re
from itertools import chain
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q
from django.http import StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext_lazy, pgettext
from django.utils.translation import gettext as _

from config.htmx import wants_partial

from . import cursors, display, editions
from .compare import MAX_SELECTIONS, SERIES_KEYS
from .export import iter_csv_lines
from .filters import ExplorerFilter, ResultFilter, include_internal
from .freshness import catalogue_stamp
from .metrics import EXPLORER_METRICS, METRIC_NAMES, QPS_PUBLISHED_LABEL, metric_label, qps_definitions
from .models import Document, PublishedResult
from .pages import catalogue_page, cell, column_label
from .queries import SORTS, field_value, keyset_fields
from .result_query import ResultQuery

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
# A metric declared later (metrics.METRICS, explorer=True) follows the metrics above (after data_rows), in the picker
# and in the table.
_later = {name: column_label(name) for name in EXPLORER_METRICS if name not in EXPLORER_COLUMNS}
EXPLORER_COLUMNS = dict(sum(([(key, label)] + (list(_later.items()) if key == "data_rows" else [])
                             for key, label in EXPLORER_COLUMNS.items()), []))
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
DEFAULT_COLUMNS += list(_later)  # a later metric is a performance figure: shown where a row has it
# In the picker's order (EXPLORER_COLUMNS), as the form sends the ticked boxes: the page and its script recognise the
# default by comparing the two lists (a later metric appended here but placed after data_rows in the picker made every
# default URL carry `cols`).
DEFAULT_COLUMNS = [name for name in EXPLORER_COLUMNS if name in DEFAULT_COLUMNS]
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


def explorer_query(params):
    """What the explorer's query string asks, read once (the page and its CSV read this, never `params` again): the
    filters (`latest` defaulted: explorer_params), the sort (`sort`, one column that sorts; any other value: document
    order), the page number and the Next / Previous cursors (`after` / `before`, used past page 1). Forgiving: a page
    that is no number is page 1 and a cursor that cannot be read is none, each kept to be said (explorer_page)."""
    params = explorer_params(params)
    sort = params.get("sort", "")
    sort_key = sort.lstrip("-")
    terms = [sort] if sort_key in SORTS and sort_key in EXPLORER_COLUMNS and sort_key not in UNSORTED else []
    raw = params.get("page")
    number, valid = page_number(raw)
    decoded = {key: cursors.decode(params[key], terms) for key in ("after", "before") if params.get(key)}
    return ResultQuery(filterset=ExplorerFilter(params, queryset=PublishedResult.objects.with_provenance()),
                       terms=terms, page=number, page_size=EXPLORER_PAGE_SIZE,
                       after=decoded.get("after") if number > 1 else None,
                       before=decoded.get("before") if number > 1 else None,
                       page_unread=None if valid else raw, cursor_unread=any(v is None for v in decoded.values()))


def explorer_rows_of(query):
    """The rows the explorer's query matches, in its sort (a total order: the keyset pages' and the CSV's)."""
    return query.matching().keyset_sorted(query.terms)


def explorer_state(request, query=None):
    """The filters, the matching rows sorted, the columns, `sort` as given and the sort terms applied."""
    query = query or explorer_query(request.GET)
    cols = chosen_columns(request.GET) or DEFAULT_COLUMNS
    return query.filterset, explorer_rows_of(query), cols, request.GET.get("sort", ""), query.terms


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


def explorer_page(queryset, query):
    """One page of the explorer's rows (EXPLORER_PAGE_SIZE, `page` from 1) in one query, and how many follow it
    (one count query, capped: EXPLORER_COUNT_AHEAD): the same queries on every page.

    Next and Previous carry the place of the page's last / first row (`after=` / `before=`, a cursor as the API's
    `next`: whitepaper/cursors.py), so the page after it is read from the sort's index at any depth
    (`page_after`, `page_before`), as the API's cursor pages are; `page` then only numbers the rows. A page
    number alone (a typed or older link, or a cursor made for another sort) is read by its offset (`rows`).

    Never a silent change of what was asked (issue 49.10): a page past the last one is answered with the last page
    (counting every row is then worth it), a page that is not a number with page 1, a cursor that cannot be read
    by the page's number; `notice` says which."""
    terms, number = query.terms, query.page
    notice = None if query.page_unread is None else _(
        "“%(page)s” is not a page number (pages are numbered from 1): page 1 is shown.") % {"page": query.page_unread[:40]}
    if query.cursor_unread and notice is None:
        notice = _("The position in this link could not be read (it belongs to another sort or was changed): "
                   "page %(page)s is shown by its number.") % {"page": number}
    page = read_page(queryset, terms, number, query.after, query.before)
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
    query = explorer_query(request.GET)
    filterset, queryset, cols, sort, _terms = explorer_state(request, query)
    page = explorer_page(queryset, query)
    results = page["results"]
    internal = include_internal(request.GET)
    same = other_editions(results, internal)
    shown, empty = shown_columns(cols, bool(chosen_columns(request.GET)), results)
    choices = catalogue_facets(request, internal, request.GET.get("engine") or None)
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
    _filterset, queryset, cols, _sort, _terms = explorer_state(request)
    columns = None if request.GET.get("columns") == "all" else csv_columns(cols)
    lines = iter_csv_lines(queryset, columns=columns)
    if request.GET.get("bom") == "true":
        lines = chain(["\ufeff"], lines)
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{csv_filename(request.GET)}"'
    return response
