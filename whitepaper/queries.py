"""The catalogue's rules about published results, one definition each, as methods of the
`PublishedResult` queryset that the explorer, the engine pages, compare, sizing, the API, its CSV and
`export_results` all call:

- origin: vendor-published unless asked (`visible`); the rule itself is `Vendor.origin` (models.py)
- document order (`DOCUMENT_ORDER`, `document_order`)
- the sort vocabulary, missing numbers last in both directions (`SORTS`, `sorted_by`)
- the newest document's row per variant ("the same flavour", defined in variants.py: `newest_rank`,
  `newest_per_variant`), the best per variant (`best_per_variant`)
- the smallest flavour reaching a target (`smallest_reaching`)
- the values a filter can choose from (`facet_values`; display.facets labels them)
- "not stated" in parameters and URLs (`NOT_STATED`, `from_param`, `to_param`)

This module imports no model (models.py imports it): the queryset reaches the models through
`self.model` and its relations.
"""

import re

from django.db import connections, models
from django.db.models import BooleanField, Count, Expression, F, Q, Subquery, Window
from django.db.models import CharField, OuterRef, Value
from django.db.models.functions import Cast, Concat, LPad, Rank

from .choices import Origin
from .metrics import METRIC_NAMES, METRICS_BY_NAME
from .variants import VARIANT_FIELDS, field_value, series_key, variant_key  # noqa: F401  (field_value: views, cursors)

# --- "Not stated" -------------------------------------------------------------------------------

NOT_STATED = "-"  # in a parameter or a URL: the document names no version / family


def from_param(value):
    """A version or family as given in a parameter or URL -> as stored ('' when not stated)."""
    return "" if value == NOT_STATED else value


def to_param(value):
    """A stored version or family slug -> as written in a parameter or URL ('-' when not stated)."""
    return value or NOT_STATED


# --- Order and sorting --------------------------------------------------------------------------

# Document order: documents oldest first, then each table and row as printed. The export's row order.
# Document order: documents by date, then slug; tables and rows as printed. Stored on each row as one
# indexed value, `PublishedResult.document_order_key` ("2023-08-03 huawei-2023-08-03-rds 000012 000004",
# `document_order_key()`; compared byte-wise: the column's collation is "C" on PostgreSQL), kept by
# whitepaper/order_key.py on every write, so a deep page walks an index instead of sorting every match.
DOCUMENT_ORDER = ("document_order_key",)
DOCUMENT_ORDER_FIELDS = ("table__document__published", "table__document__slug", "table__position", "position")

# The sort keys of the explorer (`sort=`) and the API (`ordering=`): key -> the fields it sorts by.
SORTS = {
    "id": ("id",),
    "published": ("table__document__published",),
    "vendor": ("table__document__vendor__name",),
    "document": ("table__document__published", "table__document__slug"),
    "engine": ("engine_version__engine__name", "engine_version__order_key"),
    "version": ("engine_version__order_key",),  # versions as versions (9.6 < 10): version_order_key
    "family": ("flavor__family__name",),
    "memory_ratio": ("flavor__memory_ratio",),
    "flavor": ("flavor__spec_code",),
    "deployment": ("deployment", "edition"),
    "vcpus": ("flavor__vcpus",),
    "memory_gb": ("flavor__memory_gb",),
    **{name: (name,) for name in METRIC_NAMES},  # every metric (metrics.METRICS), in its declaration order
    "table": ("table__document__slug", "table__position"),
}
# "Newer" between two documents: the later date, then the later slug. The one definition: in SQL
# (NEWEST_DOCUMENT_FIRST, DOCUMENT_ORDER, `newest_rank`) and in Python (`document_newness`).
DOCUMENTS_NEWEST_FIRST = ("-published", "-slug")
NEWEST_DOCUMENT_FIRST = tuple(f"-table__document__{field.lstrip('-')}" for field in DOCUMENTS_NEWEST_FIRST)


class DocumentQuerySet(models.QuerySet):
    def newest_first(self):
        """Documents in "newer" order, newest first: every list of documents (pages, API, drafting) asks this."""
        return self.order_by(*DOCUMENTS_NEWEST_FIRST)


def document_newness(document):
    """A document's place in "newer": sort by it (reverse=True: newest first), compare two with it."""
    return (document.published, document.slug)

# Ties keep import order: `id` lets PostgreSQL walk the (engine_version, tps DESC NULLS LAST, id) index.
SORT_TIE_BREAK = "id"


def _padded(expression):
    return LPad(Cast(expression, CharField()), 6, Value("0"))


class NotDistinct(Expression):
    """`a IS NOT DISTINCT FROM b`: equal, or both missing (NULL)."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, lhs, rhs):
        super().__init__()
        self.lhs, self.rhs = lhs, rhs

    def get_source_expressions(self):
        return [self.lhs, self.rhs]

    def set_source_expressions(self, expressions):
        self.lhs, self.rhs = expressions

    def as_sql(self, compiler, connection):
        lhs_sql, lhs_params = compiler.compile(self.lhs)
        rhs_sql, rhs_params = compiler.compile(self.rhs)
        return f"({lhs_sql} IS NOT DISTINCT FROM {rhs_sql})", (*lhs_params, *rhs_params)


def document_key_prefix(document):
    """What every stored document-order key (`document_order_key`) of a document's rows starts with, in SQL:
    its date and slug, then a space. `document`: the path to the document of the outer query's row
    (OuterRef), e.g. "table__document". The rows of older documents (`document_newness`) have smaller keys:
    byte-wise, the space sorts before any letter of a longer slug."""
    return Concat(Cast(OuterRef(f"{document}__published"), CharField()), Value(" "), OuterRef(f"{document}__slug"),
                  Value(" "), output_field=CharField())


def document_order_key(table_model):
    """The stored document-order key of the row (OuterRef) in a table: DOCUMENT_ORDER_FIELDS as one
    string that sorts the same (fixed-width date and positions; a space before the table's position
    sorts a slug before any longer slug it starts)."""
    return Subquery(table_model.objects.filter(pk=OuterRef("table_id")).annotate(
        _key=Concat(Cast("document__published", CharField()), Value(" "), "document__slug", Value(" "),
                    _padded("position"), Value(" "), _padded(OuterRef("position")), output_field=CharField())
    ).values("_key")[:1])


def keyset_fields(terms):
    """What rows sorted by `terms` (sort keys; none: document order) are ordered by, as (path,
    descending), ending with the id: a row's values of these place it in the order exactly (a cursor)."""
    if not terms:
        return [(path, False) for path in DOCUMENT_ORDER] + [(SORT_TIE_BREAK, False)]
    return [(path, term.startswith("-")) for term in terms for path in SORTS[term.lstrip("-")]] + [(SORT_TIE_BREAK, False)]


def unknown_sort_terms(terms):
    """The terms ('-tps', 'vcpus') that name no sort key."""
    return [t for t in terms if t.lstrip("-") not in SORTS]


# --- Variants and series ------------------------------------------------------------------------
# "The same flavour across editions" is defined once, in variants.py (VARIANT_FIELDS, SERIES_FIELDS).


def newest_rank():
    """The rule "the newest edition of a row": 1 for the rows of the newest document (NEWEST_DOCUMENT_FIRST)
    among those publishing the row's variant (VARIANT_FIELDS; NULL equals NULL in a partition)."""
    return Window(Rank(), partition_by=[F(path) for path in VARIANT_FIELDS.values()],
                  order_by=[F(f[1:]).desc() for f in NEWEST_DOCUMENT_FIRST])


# --- The queryset -------------------------------------------------------------------------------

class InIdSubquery(Expression):
    """`column IN (subquery)`, written `column = ANY(ARRAY(subquery))` on PostgreSQL: evaluated once
    and matched in the index scan (an IN would become a join)."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, column, queryset):
        super().__init__()
        self.column, self.subquery = F(column), Subquery(queryset)

    def get_source_expressions(self):
        return [self.column, self.subquery]

    def set_source_expressions(self, expressions):
        self.column, self.subquery = expressions

    def as_sql(self, compiler, connection):
        column_sql, column_params = compiler.compile(self.column)
        subquery_sql, subquery_params = compiler.compile(self.subquery)
        template = "%s = ANY(ARRAY%s)" if connection.vendor == "postgresql" else "%s IN %s"
        return template % (column_sql, subquery_sql), (*column_params, *subquery_params)


TEXT_SEARCH_WORDS = 8  # the words of a text search read (more narrows nothing a reader means, and costs joins)


class PublishedResultQuerySet(models.QuerySet):
    def with_provenance(self, prefetch=False):
        """With what every listing shows (document, vendor, methodology, engine, flavour, family) in a
        fixed number of queries. `prefetch`: join only flavour and engine version and fetch the small
        rest by prefetch (the API: keeps the page query's plan small at a million rows)."""
        if not prefetch:
            return self.select_related("table__document__vendor", "table__methodology", "engine_version__engine",
                                       "flavor__family__vendor")
        document_model = self.model._meta.get_field("table").related_model._meta.get_field("document").related_model
        family_model = self.model._meta.get_field("flavor").related_model._meta.get_field("family").related_model
        # The table's document (with its vendor) and methodology by their ids, each in a query of its own: joined to
        # the tables, PostgreSQL hashes every document and methodology of the catalogue for a page's 20 tables
        # (3 ms at 10^6 results; the two lookups by id take 0.1 ms).
        return self.select_related("flavor", "engine_version").prefetch_related(
            "table", models.Prefetch("table__document", document_model.objects.select_related("vendor")),
            "table__methodology", "engine_version__engine",
            models.Prefetch("flavor__family", family_model.objects.select_related("vendor")), "flavor__vendor",
        )

    def visible(self, include_internal=False):
        """What a reader sees: vendor-published results, plus internal measurements when asked."""
        if include_internal:
            return self
        table_model = self.model._meta.get_field("table").related_model
        # NOT IN (subquery): PostgreSQL hashes the few internal tables once and checks each row against
        # the hash, with no join, so an index walk (ordering=-tps) still stops after a page.
        internal_tables = table_model.objects.order_by().filter(document__vendor__origin=Origin.INTERNAL).values("id")
        return self.exclude(table_id__in=internal_tables)

    def matching_text(self, text):
        """Rows found by name (the explorer's `q`): each word of `text` in the flavour's spec code, its family's
        name (English or Chinese: "Kunpeng", "鲲鹏"), the engine's or the vendor's name. Words narrow (AND)."""
        queryset = self
        for word in text.split()[:TEXT_SEARCH_WORDS]:
            queryset = queryset.filter(
                Q(flavor__spec_code__icontains=word) | Q(flavor__family__name__icontains=word)
                | Q(flavor__family__name_zh__icontains=word) | Q(engine_version__engine__name__icontains=word)
                | Q(table__document__vendor__name__icontains=word) | Q(table__document__vendor__name_zh__icontains=word))
        return queryset

    def document_order(self):
        return self.order_by(*DOCUMENT_ORDER)

    def sorted_by(self, terms):
        """Sorted by sort keys ('-tps', 'vcpus'; see SORTS); rows without the value come last in either
        direction. No terms: document order. An unknown key is a KeyError (callers validate first
        with `unknown_sort_terms`)."""
        if not terms:
            return self.document_order()
        order = []
        for term in terms:
            for field in SORTS[term.lstrip("-")]:
                order.append(F(field).desc(nulls_last=True) if term.startswith("-") else F(field).asc(nulls_last=True))
        return self.order_by(*order, SORT_TIE_BREAK)

    def keyset_sorted(self, terms):
        """`sorted_by(terms)`, always ending with the id (document order gets it too): a total order."""
        if not terms:
            return self.order_by(*DOCUMENT_ORDER, SORT_TIE_BREAK)
        return self.sorted_by(terms)

    def after(self, terms, values):
        """The rows that come after the row whose `keyset_fields(terms)` values are `values`, in
        `keyset_sorted(terms)` order (missing values last in either direction): a cursor's next page.
        Rows inserted before that row do not shift it, as an offset would."""
        condition, equal = None, Q()
        for (path, descending), value in zip(keyset_fields(terms), values):
            if value is not None:  # after a value: further in its direction, or missing (last)
                later = Q(**{f"{path}__{'lt' if descending else 'gt'}": value}) | Q(**{f"{path}__isnull": True})
                step = equal & later
                condition = step if condition is None else condition | step
                equal &= Q(**{path: value})
            else:  # missing values come last: only rows missing it too can follow on a later field
                equal &= Q(**{f"{path}__isnull": True})
        return self.filter(condition) if condition is not None else self.none()

    def _ranges_after(self, terms, values):
        """The rows after the row with these keyset values as index ranges, [with the first sort value, missing it]
        (the second only where a row can miss it; the first is everything when the row itself misses it)."""
        rows = self.keyset_sorted(terms).after(terms, values)
        (path, descending), first = keyset_fields(terms)[0], values[0]
        if first is None:
            return [rows]
        ranged = rows.filter(**{f"{path}__{'lte' if descending else 'gte'}": first})
        return [ranged, rows.filter(**{f"{path}__isnull": True})] if self._may_be_missing(path) else [ranged]

    def page_after(self, terms, values, size):
        """Up to `size` rows of `keyset_sorted(terms)` after the row with these keyset values (`values`
        None: from the start), in one query. The rows with the first sort value are read within an index range
        (`tps <= v`, which PostgreSQL starts the index walk at: the same cost at any depth), followed by the
        rows missing it (always last) where a row can miss it."""
        if values is None:
            return list(self.keyset_sorted(terms)[:size])
        ranges = self._ranges_after(terms, values)
        if len(ranges) == 1:
            return list(ranges[0][:size])
        ranged, missing = ranges
        if not connections[self.db].features.supports_slicing_ordering_in_compound:  # SQLite: two queries
            page = list(ranged[:size])
            return page + list(missing[:size - len(page)]) if len(page) < size else page
        # One query: the page's ids from both ranges (each an index walk that stops after a page), then its rows.
        ids = ranged.values("pk")[:size].union(missing.values("pk")[:size], all=True).order_by()
        return list(self.keyset_sorted(terms).filter(InIdSubquery("pk", ids))[:size])

    def count_after(self, terms, values, cap):
        """How many rows of `keyset_sorted(terms)` follow the row with these keyset values, counting at most `cap`
        (then cap + 1): index ranges from that row, the same cost at any depth and catalogue size."""
        ranges = [r.values("pk")[:cap + 1] for r in self._ranges_after(terms, values)]
        if len(ranges) == 1:
            return ranges[0].count()
        if not connections[self.db].features.supports_slicing_ordering_in_compound:
            return min(cap + 1, sum(r.count() for r in ranges))
        return min(cap + 1, ranges[0].union(ranges[1], all=True).order_by().count())

    def _may_be_missing(self, path):
        """Whether a row can lack the value at this `__` path (a nullable field or relation on the way)."""
        model = self.model
        for part in path.split("__"):
            field = model._meta.get_field(part)
            if field.null:
                return True
            model = field.related_model
        return False

    def before(self, terms, values):
        """The rows that come before the row whose `keyset_fields(terms)` values are `values`, in
        `keyset_sorted(terms)` order (the mirror of `after`: missing values, last, follow every value)."""
        condition, equal = None, Q()
        for (path, descending), value in zip(keyset_fields(terms), values):
            if value is not None:  # before a value: back in its direction (a missing value never comes before)
                step = equal & Q(**{f"{path}__{'gt' if descending else 'lt'}": value})
                equal &= Q(**{path: value})
            else:  # before a missing value: every row that has one, or rows missing it too that come earlier
                step = equal & Q(**{f"{path}__isnull": False})
                equal &= Q(**{f"{path}__isnull": True})
            condition = step if condition is None else condition | step
        return self.filter(condition) if condition is not None else self.none()

    def page_before(self, terms, values, size):
        """Up to `size` rows of `keyset_sorted(terms)` just before the row with these keyset values, in that
        order: the previous page of a cursor (read backwards from it, within an index range as `page_after`)."""
        rows = self.keyset_sorted(terms).before(terms, values)
        (path, descending), first = keyset_fields(terms)[0], values[0]
        if first is not None:
            rows = rows.filter(**{f"{path}__{'gte' if descending else 'lte'}": first})
        return list(rows.reverse()[:size])[::-1]

    def rows(self, start, stop):
        """The rows [start, stop) of this sorted queryset in one query: the order and the offset are
        decided over narrow rows (ids and the sort keys' joins, not every shown column of every match),
        then only those rows are read with what they show (`id = ANY(ARRAY(...))`, evaluated once)."""
        return self.filter(InIdSubquery("pk", self.values("pk")[start:stop]))

    def newest_per_variant(self, among_these=False):
        """Only the rows of the newest document (NEWEST_DOCUMENT_FIRST) publishing each variant
        (VARIANT_FIELDS), so editions never repeat one number. Newest among every published result
        (`latest=true`: a filter on a size or a number then applies to that row): the stored
        `is_newest`, which `refresh_newest` computes by this rule (`newest_rank`) whenever the catalogue
        changes (whitepaper/newest.py says when); or `among_these` rows only (the spec lookup: the rule
        as a window over its few matching rows)."""
        if among_these:
            return self.alias(_newest=newest_rank()).filter(_newest=1)
        return self.filter(is_newest=True)

    def refresh_document_order(self):
        """Store `document_order_key` for these rows (a bulk update: no signal)."""
        table_model = self.model._meta.get_field("table").related_model
        self.update(document_order_key=document_order_key(table_model))

    def refresh_newest(self):
        """Store the rule (`newest_rank`) in `is_newest` for these rows. The rows must hold every row of
        each variant they hold (e.g. every row of some engine versions: the engine version is part of
        the variant), since the rank is taken among them. Bulk updates: no signal, no recursion."""
        newest = set(self.order_by().alias(_newest=newest_rank()).filter(_newest=1).values_list("pk", flat=True))
        self.filter(is_newest=True).exclude(pk__in=newest).update(is_newest=False)
        self.filter(is_newest=False, pk__in=newest).update(is_newest=True)

    def best_per_variant(self, metric=None):
        """Per variant (VARIANT_FIELDS, "the same flavour") among these rows, across documents: the
        row of the newest document (NEWEST_DOCUMENT_FIRST), or with `metric` the row with the best
        value of it (the highest, the lowest where lower is better: Metric.higher_is_better) (rows without it last; ties: the newer document). Each row is annotated with
        `variant_rows`, how many of these rows publish its variant (its editions)."""
        partition = [F(path) for path in VARIANT_FIELDS.values()]
        newest = [F(f[1:]).desc() for f in NEWEST_DOCUMENT_FIRST]
        better = (F(metric).desc(nulls_last=True) if metric not in METRICS_BY_NAME or METRICS_BY_NAME[metric].higher_is_better
                  else F(metric).asc(nulls_last=True))
        order = ([better] if metric else []) + newest
        return (self.annotate(variant_rows=Window(Count("id"), partition_by=partition))
                .alias(_best=Window(Rank(), partition_by=partition, order_by=order)).filter(_best=1))

    def smallest_reaching(self, metric, target):
        """Per document, series (SERIES_FIELDS) and data size (hot rows: Alibaba's PostgreSQL and PPAS tables
        print each flavour at several): the smallest flavour whose `metric` reaches `target` (at or above it, at or
        below it for a metric where lower is better: Metric.higher_is_better); smallest first, then the better
        number, then the newer document."""
        best = {}
        higher = METRICS_BY_NAME[metric].higher_is_better if metric in METRICS_BY_NAME else True
        rows = self.filter(**{f"{metric}__{'gte' if higher else 'lte'}": target}).with_provenance().order_by(
            "flavor__vcpus", "flavor__memory_gb", metric if higher else f"-{metric}", "id")
        for r in rows:
            best.setdefault((r.table.document_id, *series_key(r)), r)
        return _smallest_first(best.values(), metric)

    def smallest_reaching_once(self, metric, target):
        """`smallest_reaching`, each variant (VARIANT_FIELDS) listed once: when several documents (editions)
        print the same flavour, the newest document's row answers and the others are kept on it as
        `also` (each with its own printed number)."""
        merged = {}
        for r in sorted(self.smallest_reaching(metric, target), key=lambda r: document_newness(r.table.document),
                        reverse=True):
            key = variant_key(r)
            if key in merged:
                merged[key].also.append(r)
            else:
                r.also = []
                merged[key] = r
        return _smallest_first(merged.values(), metric)

    def published_metrics(self, metrics, engine=None, version=None):
        """Which of `metrics` some of these rows publish (of an engine slug and version), in the given order:
        one query."""
        rows = self
        if engine:
            rows = rows.filter(engine_version__engine__slug=engine)
        if version is not None:
            rows = rows.filter(engine_version__version=version)
        counts = rows.aggregate(**{m: Count(m) for m in metrics})
        return [m for m in metrics if counts[m]]

    def facet_values(self):
        """The values each filter can choose from among these results, from one query, unlabelled (display.facets
        labels and orders them in the reader's language): {"vendors": {slug: (name, name_zh)}, "documents": {slug:
        (published, title_en, title, vendor slug)}, "engines": {slug: name}, "versions": {(engine, version)},
        "example_versions": {(engine, version)} named only as an example (Alibaba's "PPAS 10"), "families": {slug:
        (name, name_zh)}, "memory_ratios", "deployments", "editions", "hot_rows" (sets, none empty or missing),
        "covers": {document slug: {engine names}}}."""
        rows = (self.order_by().values_list(
            "table__document__vendor__slug", "table__document__vendor__name", "table__document__vendor__name_zh",
            "table__document__slug", "table__document__title_en", "table__document__title",
            "table__document__published", "engine_version__engine__slug", "engine_version__engine__name",
            "engine_version__version", "flavor__family__slug", "flavor__family__name", "flavor__family__name_zh",
            "flavor__memory_ratio", "deployment", "edition", "hot_rows", "table__version_example")
            .distinct())
        values = {"vendors": {}, "documents": {}, "engines": {}, "versions": set(), "families": {},
                  "memory_ratios": set(), "deployments": set(), "editions": set(), "hot_rows": set(), "covers": {}}
        stated, example = set(), set()  # (engine, version) named as tested / only as an example
        for (v, vn, vzh, d, dt, dzh, dp, e, en, ver, f, fn, fzh, ratio, deployment, edition, hot, is_example) in rows:
            (example if is_example else stated).add((e, ver))
            values["vendors"][v] = (vn, vzh)
            values["documents"][d] = (dp, dt, dzh, v)
            values["engines"][e] = en
            values["covers"].setdefault(d, set()).add(en)
            if ver:
                values["versions"].add((e, ver))
            if f:
                values["families"][f] = (fn, fzh)
            for name, value, stated_value in (("memory_ratios", ratio, bool(ratio)), ("deployments", deployment,
                                              deployment != ""), ("editions", edition, edition != ""),
                                              ("hot_rows", hot, hot is not None)):
                if stated_value:
                    values[name].add(value)
        values["example_versions"] = example - stated
        return values


def _smallest_first(rows, metric):
    """Smallest flavour first, then the better number (Metric.higher_is_better), then the newer document
    (`document_newness`)."""
    sign = -1 if metric not in METRICS_BY_NAME or METRICS_BY_NAME[metric].higher_is_better else 1
    newest_first = sorted(rows, key=lambda r: document_newness(r.table.document), reverse=True)
    return sorted(newest_first, key=lambda r: (r.flavor.vcpus, r.flavor.memory_gb, sign * getattr(r, metric)))


def version_sort_key(version):
    """Versions sort as versions, not as text: 5.6 < 5.7 < 8.0; 9.6 < 10 < 11; 2008 R2 < 2012 < 2014.
    Numbers compare as numbers, the text between them as text; '' (not stated) last."""
    if not version:
        return ((2, ""),)
    return tuple((0, int(part)) if part.isdigit() else (1, part.strip().lower())
                 for part in re.findall(r"\d+|\D+", version))


def version_order_key(version):
    """`version_sort_key` as one string that sorts the same byte-wise (stored as EngineVersion.order_key, so
    SQL sorts versions as versions: 9.6 < 10; the explorer's and the API's `version` sort key): numbers
    zero-padded after a 0, text lowercased after a 1, parts joined by a space; '' (not stated) last."""
    if not version:
        return "~"
    return " ".join(f"0{int(part):012d}" if part.isdigit() else f"1{part.strip().lower()}"
                    for part in re.findall(r"\d+|\D+", version))
