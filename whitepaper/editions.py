"""Editions: documents of one vendor that publish the same engine versions (Huawei 2018, 2023, 2025).

One definition each, used by the edition diff page, the engine version pages and the explorer:

- "the same row in another edition" (`row_key`: the variant, variants.VARIANT_FIELDS) and
  "printed the same" (`same_numbers`: every metric equal as a number, 843.00 = 843);
- what changed between two editions, per table (`diff`: same / changed with % / new / gone);
- which editions print a row identically (`same_in`), and a series printed identically by several
  editions drawn once (`merge_identical_series`);
- the older editions of a newest figure and the one that printed another number (`attach_older_editions`:
  "revised from 10929.30 in 2023, -19.1 %", sizing and compare);
- a row revised by a later edition (`revisions`: the older edition's row, every metric's change), the rule of
  the explorer, its CSV, the export, the API's `revised_from` and the flavour page; and its mirror on the older
  row, what the newest later edition printed (`superseded`: "TPS 8839.4 in 2025, -19.1 %").
"""

from dataclasses import dataclass, field

from django.contrib.postgres.expressions import ArraySubquery
from django.db import connections
from django.db.models import Exists, F, Func, OuterRef, Q, Subquery, Value, prefetch_related_objects
from django.db.models import CharField, QuerySet
from django.db.models.functions import Concat

from .metrics import METRIC_NAMES, percent_difference
from .queries import (NEWEST_DOCUMENT_FIRST, InIdSubquery, NotDistinct, document_key_prefix, document_newness,
                      version_sort_key)
from .variants import editions_of, field_value, series_key, variant_key

# What one table's rows share, across editions: engine version, family and memory ratio (a document
# prints one table per family and ratio; SQL Server's one table is split by the version of each row).
TABLE_FIELDS = ["engine_version", "flavor__family", "flavor__memory_ratio"]

SAME, CHANGED, NEW, GONE = "same", "changed", "new", "gone"
STATUSES = (SAME, CHANGED, NEW, GONE)


def _key(result, paths):
    return (result.table.document.vendor_id, *(field_value(result, p) for p in paths))


def row_key(result):
    """The same row in another edition: its variant (variants.VARIANT_FIELDS, the vendor and data size included)."""
    return variant_key(result)


def _by_row(results, candidates):
    """`candidates` by row_key, and each of `results` with its row_key: every row's key made once (a page of 100
    rows compares them with as many other editions; the results themselves are often among the candidates)."""
    keys = {id(c): row_key(c) for c in candidates}
    by_key = {}
    for c in candidates:
        by_key.setdefault(keys[id(c)], []).append(c)
    return by_key, [(r, keys[id(r)] if id(r) in keys else row_key(r)) for r in results]


def numbers(result):
    """The row's metrics as numbers (missing ones left out) and whether IOPS depends on the disk."""
    values = {m: getattr(result, m) for m in METRIC_NAMES if getattr(result, m) is not None}
    return values, result.iops_depends_on_disk


def same_numbers(a, b):
    return numbers(a) == numbers(b)


@dataclass
class RowDiff:
    status: str
    old: object = None  # the older edition's result (None: new)
    new: object = None  # the newer edition's result (None: gone)
    changes: list = field(default_factory=list)  # [(metric, old result value, new value, % change or None)]

    @property
    def result(self):
        return self.new or self.old


@dataclass
class TableDiff:
    key: tuple
    old_tables: list = field(default_factory=list)
    new_tables: list = field(default_factory=list)
    rows: list = field(default_factory=list)

    @property
    def counts(self):
        return {s: sum(1 for r in self.rows if r.status == s) for s in STATUSES}

    @property
    def first(self):
        return self.rows[0].result


def _changes(old, new):
    (old_values, old_disk), (new_values, new_disk) = numbers(old), numbers(new)
    changes = [(m, old_values.get(m), new_values.get(m), percent_difference(new_values.get(m), old_values.get(m)))
               for m in METRIC_NAMES if old_values.get(m) != new_values.get(m)]
    if old_disk != new_disk:
        changes.append(("iops_depends_on_disk", old_disk, new_disk, None))
    return changes


def shared_engine_versions(old_results, new_results):
    return {r.engine_version for r in old_results} & {r.engine_version for r in new_results}


def diff(old_results, new_results):
    """What changed from an older edition's rows to a newer one's, over the engine versions both
    publish: one TableDiff per table (TABLE_FIELDS), in the newer edition's order (tables only the
    older one prints last), each row same / changed (with each metric's % change) / new / gone."""
    shared = shared_engine_versions(old_results, new_results)
    old_rows = [r for r in old_results if r.engine_version in shared]
    new_rows = [r for r in new_results if r.engine_version in shared]
    old_by_key = {}
    for r in old_rows:
        old_by_key.setdefault(row_key(r), r)
    matched = set()
    tables = {}

    def table(result):
        key = _key(result, TABLE_FIELDS)
        if key not in tables:
            tables[key] = TableDiff(key)
        return tables[key]

    for r in new_rows:
        t = table(r)
        if r.table not in t.new_tables:
            t.new_tables.append(r.table)
        old = old_by_key.get(row_key(r))
        if old is None:
            t.rows.append(RowDiff(NEW, new=r))
            continue
        matched.add(row_key(r))
        changes = _changes(old, r)
        t.rows.append(RowDiff(CHANGED if changes else SAME, old=old, new=r, changes=changes))
        if old.table not in t.old_tables:
            t.old_tables.append(old.table)
    for r in old_rows:
        t = table(r)
        if r.table not in t.old_tables:
            t.old_tables.append(r.table)
        if row_key(r) not in matched:
            t.rows.append(RowDiff(GONE, old=r))
    for t in tables.values():
        t.rows.sort(key=lambda d: (d.result.flavor.vcpus, d.result.flavor.memory_gb, d.result.flavor.spec_code))
    return list(tables.values())


@dataclass
class Revision:
    """A row whose numbers an older edition printed otherwise: that edition's row and each metric's change."""

    older: object
    changes: list  # [(metric, old value, new value, % change or None)], metrics only

    @property
    def document(self):
        return self.older.table.document


@dataclass
class Superseded:
    """A row whose numbers the vendor's newest later edition printed otherwise (the mirror of Revision, said on the
    older row): that edition's row and each metric's change from this row to it."""

    newer: object
    changes: list  # [(metric, this row's value, the newer edition's value, % change or None)], metrics only

    @property
    def document(self):
        return self.newer.table.document


def superseded_candidates(results, queryset):
    """A filter of the rows `superseded` can answer for `results` (rows, or a queryset of them: a document's rows are
    then read with their candidates in one query), in one subquery: per result, the row of the newest later edition
    of its row (the same vendor, engine version, flavour, deployment, edition and hot rows; a later document by the
    stored document-order key). `superseded` decides whether it printed other numbers."""
    # every key of the result's own document starts with its prefix and sorts below prefix + "~" (positions are
    # digits); a later document's keys sort above it
    later = Concat(document_key_prefix("table__document"), Value("~"), output_field=CharField())
    newer = (editions_of(queryset).filter(document_order_key__gt=later)
             .order_by("-document_order_key").values("pk")[:1])
    outer = results if isinstance(results, QuerySet) else queryset.model.objects.filter(pk__in=[r.pk for r in results])
    return InIdSubquery("pk", outer.order_by().values(newer=Subquery(newer)))


def superseded(results, candidates):
    """{result id: Superseded} for each of `results` whose row the newest later edition among `candidates` printed
    with other numbers (not `same_numbers`): what an older row says of the newer edition ("TPS 8839.4 in 2025,
    -19.1 %"), as the newer row says "revised from" (`revisions`)."""
    by_key, keyed = _by_row(results, candidates)
    answer = {}
    for r, key in keyed:
        newness = document_newness(r.table.document)
        newer = [c for c in by_key.get(key, []) if c.pk != r.pk and document_newness(c.table.document) > newness]
        if not newer:
            continue
        newest = max(newer, key=lambda c: (document_newness(c.table.document), c.document_order_key))
        if not same_numbers(r, newest):
            answer[r.pk] = Superseded(newest, [c for c in _changes(r, newest) if c[0] in METRIC_NAMES])
    return answer


def revision_candidates(results, queryset):
    """A filter of the rows `revisions` can answer for `results`, read in one subquery whatever the number of
    editions: per result, the row of the newest older edition of its row (the same vendor, engine version,
    flavour, deployment, edition and hot rows; an older document by the stored document-order key) that printed
    other numbers (`same_numbers` in SQL: every metric equal as a number or missing in both, the disk flag equal).
    An index walk back from the result's document (result_editions) that stops at the first such row.
    `revisions` decides; this only narrows what it reads. `queryset`: the rows a reader may see."""
    older = (editions_of(queryset).filter(document_order_key__lt=document_key_prefix("table__document"))
             .exclude(_same_numbers()).order_by("-document_order_key").values("pk")[:1])
    return InIdSubquery("pk", queryset.model.objects.order_by().filter(pk__in=[r.pk for r in results]).values(
        older=Subquery(older)))


def revisions(results, candidates):
    """{result id: Revision} for each of `results` whose row (row_key, the same hot rows: Alibaba prints a
    flavour at several) an older edition among `candidates` (the results themselves may be among them) printed with other numbers (not `same_numbers`):
    the newest such edition, as `attach_older_editions` takes it for one metric."""
    by_key, keyed = _by_row(results, candidates)
    answer = {}
    for r, key in keyed:
        newness = document_newness(r.table.document)
        older = sorted((c for c in by_key.get(key, []) if c.pk != r.pk and document_newness(c.table.document) < newness
                        and not same_numbers(c, r)),
                       key=lambda c: (document_newness(c.table.document), c.document_order_key), reverse=True)
        if older:
            answer[r.pk] = Revision(older[0], [c for c in _changes(older[0], r) if c[0] in METRIC_NAMES])
    return answer


def read_editions(queryset, condition, results):
    """The rows of `queryset` matching `condition` (`may_print_the_same`, `revision_candidates`: other editions of
    `results`' rows), each with its document. An edition of a row has that row's engine version and flavour (the
    editions' index matches on both), so it takes the objects `results` already hold rather than reading them
    again per row; a relation `results` did not load is read once per object (prefetch)."""
    shared = {name: {getattr(r, f"{name}_id"): getattr(r, name) for r in results
                     if r._meta.get_field(name).is_cached(r)} for name in ("engine_version", "flavor")}
    rows = list(queryset.select_related("table__document").filter(condition).order_by())
    unshared = {name: [] for name in shared}
    for row in rows:
        for name, loaded in shared.items():
            if getattr(row, f"{name}_id") in loaded:
                setattr(row, name, loaded[getattr(row, f"{name}_id")])
            else:
                unshared[name].append(row)
    prefetch_related_objects(unshared["engine_version"], "engine_version")
    prefetch_related_objects(unshared["flavor"], "flavor__family")
    return rows


def attach_revisions(results, queryset):
    """Set `revised_from` (a Revision or None) and `superseded` (a Superseded or None) on each of `results`, reading
    other editions from `queryset` (the rows a reader may see) in one query."""
    results = [r for r in results if not hasattr(r, "revised_from")]
    if not results:
        return
    candidates = read_editions(
        queryset, Q(revision_candidates(results, queryset)) | Q(superseded_candidates(results, queryset)), results)
    found, newer = revisions(results, [*candidates, *results]), superseded(results, [*candidates, *results])
    for r in results:
        r.revised_from = found.get(r.pk)
        r.superseded = newer.get(r.pk)


def _same_numbers():
    """`same_numbers` in SQL, between a row and the outer query's row (OuterRef): every metric equal as a number or
    missing in both, and the disk flag equal."""
    same = Q(iops_depends_on_disk=OuterRef("iops_depends_on_disk"))
    for m in METRIC_NAMES:
        same &= Q(NotDistinct(F(m), OuterRef(m)))
    return same


def may_print_the_same(results, queryset):
    """A filter of the other rows of `queryset` that may print one of `results` the same (`same_numbers`): the
    editions of each result (variants.editions_of: an index range, result_editions) whose numbers equal
    its own in SQL, read per result. It only narrows what `same_in` reads (a few rows, not every edition of a
    page's flavours); `same_in` decides."""
    ids = [r.pk for r in results]
    if connections[queryset.db].vendor != "postgresql":  # SQLite (the laptop default): the same rows by a semi-join
        same = editions_of(queryset.model.objects.filter(pk__in=ids)).filter(_same_numbers())
        return Q(Exists(same)) & ~Q(pk__in=ids)
    same = editions_of(queryset).filter(_same_numbers()).exclude(pk__in=ids).values("pk")
    per_result = queryset.model.objects.order_by().filter(pk__in=ids).annotate(
        _same=Func(ArraySubquery(same), function="unnest")).values("_same")
    return Q(InIdSubquery("pk", per_result))


def same_in(results, candidates):
    """For each result, the documents (oldest first) whose row of the same variant prints the same
    numbers, its own document included: {result id: [documents]}. `candidates`: the rows of every
    edition to look in (the results themselves may be among them)."""
    by_key, keyed = _by_row(results, candidates)
    answer = {}
    for r, key in keyed:
        docs = {r.table.document_id: r.table.document}
        for c in by_key.get(key, []):
            if same_numbers(c, r):
                docs.setdefault(c.table.document_id, c.table.document)
        answer[r.pk] = sorted(docs.values(), key=document_newness)
    return answer


def merge_identical_series(results):
    """A series (a chart line, variants.SERIES_FIELDS: engine version, family, memory ratio, deployment, edition,
    data size of one vendor)
    that several documents print identically (the same rows, every row the same numbers) is kept once:
    the newest document's rows, each with `same_in` = those documents, oldest first. Every other
    row keeps its own document in `same_in`. The order of `results` is kept."""
    by_series = {}
    for r in results:
        by_series.setdefault(series_key(r), {}).setdefault(r.table.document, []).append(r)
    dropped = set()
    for documents in by_series.values():
        ordered = sorted(documents, key=document_newness, reverse=True)
        newest = ordered[0]
        same = [newest]
        for older in ordered[1:]:
            rows = diff(documents[older], documents[newest])
            if all(d.status == SAME for t in rows for d in t.rows):
                same.append(older)
                dropped.update(r.pk for r in documents[older])
        same.sort(key=document_newness)
        for d, rows in documents.items():
            for r in rows:
                r.same_in = same if d == newest else [d]
    return [r for r in results if r.pk not in dropped]


def edition_pairs(documents):
    """Pairs (older, newer) of one vendor's documents that publish at least one engine version in
    common, newest pairs first. `documents`: each with `engine_versions` (a set) loaded."""
    pairs = []
    docs = sorted(documents, key=document_newness)
    for i, older in enumerate(docs):
        for newer in docs[i + 1:]:
            if older.vendor_id == newer.vendor_id and older.engine_versions & newer.engine_versions:
                pairs.append((older, newer, sorted(older.engine_versions & newer.engine_versions,
                                                   key=lambda ev: (ev.engine.name, version_sort_key(ev.version)))))
    return sorted(pairs, key=lambda p: (document_newness(p[1]), document_newness(p[0])), reverse=True)


def attach_older_editions(answers, metric, results):
    """Each answer's older editions (the same variant, variants.VARIANT_FIELDS, in older documents among
    `results`, newest first) as `also`, and as `revised` the newest of them whose `metric` differs (with
    `revised_pct`, the change in %, one decimal). One query whatever the number of answers."""
    older = {}
    answers = list(answers)
    if answers:
        newest = {a.pk for a in answers}
        rows = (results.filter(engine_version_id__in={a.engine_version_id for a in answers},
                               flavor__vcpus__in={a.flavor.vcpus for a in answers})
                .exclude(pk__in=newest).with_provenance().order_by(*NEWEST_DOCUMENT_FIRST, "id"))
        for row in rows:
            older.setdefault(variant_key(row), []).append(row)
    for r in answers:
        newness = document_newness(r.table.document)
        r.also = [o for o in older.get(variant_key(r), []) if document_newness(o.table.document) < newness]
        r.revised = next((o for o in r.also if getattr(o, metric) is not None and getattr(r, metric) is not None
                          and getattr(o, metric) != getattr(r, metric)), None)
        r.revised_pct = (None if r.revised is None else
                         percent_difference(getattr(r, metric), getattr(r.revised, metric)))
