"""Issue 51.2: "the same flavour across editions" has one definition (whitepaper/variants.py) and its data size is
part of it. Alibaba's PPAS table prints each flavour at several hot-data sizes; a later edition of it (made here
from the 2019 rows) is an edition of each size's row, never of another size's."""

import datetime

import pytest
from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Subquery

from whitepaper import editions, variants
from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db


def _flavour_at_two_sizes():
    """The 2019 Alibaba rows of one flavour printed at two hot-data sizes or more in one table, by size."""
    rows = PublishedResult.objects.filter(table__document__vendor__slug="alibaba", hot_rows__isnull=False,
                                          ro_qps__isnull=False).select_related("table__document", "flavor")
    by_flavour = {}
    for r in rows.order_by("id"):
        by_flavour.setdefault((r.table_id, r.flavor_id, r.engine_version_id, r.deployment, r.edition), []).append(r)
    group = next(g for g in by_flavour.values() if len({r.hot_rows for r in g}) >= 2)
    by_size = {r.hot_rows: r for r in group}
    assert len(by_size) == len(group)  # one row per size
    return by_size


def _later_edition(rows, ro_qps):
    """A later Alibaba document printing `rows` again (the same table, flavour and hot rows), each with the ro_qps
    given per hot-row count; a size missing from `ro_qps` is not printed."""
    first = next(iter(rows.values()))
    document = first.table.document
    document.pk, document.slug, document.published = None, "alibaba-2030-01-01-rds", datetime.date(2030, 1, 1)
    document.save()
    table = first.table
    table.pk, table.document = None, document
    table.save()
    printed = {}
    for hot, r in rows.items():
        if hot in ro_qps:
            copy = PublishedResult.objects.get(pk=r.pk)
            copy.pk, copy.table, copy.ro_qps = None, table, ro_qps[hot]
            copy.document_order_key = ""
            copy.save()
            printed[hot] = copy
    return printed


def test_each_size_is_diffed_against_the_same_size_of_the_older_edition():
    old = _flavour_at_two_sizes()
    small, large = sorted(old)[:2]
    new = _later_edition({small: old[small], large: old[large]},
                         {small: old[small].ro_qps + 100, large: old[large].ro_qps})
    [table] = editions.diff([old[small], old[large]], list(new.values()))
    found = {d.new.hot_rows: (d.status, d.old.pk) for d in table.rows}
    assert found == {small: (editions.CHANGED, old[small].pk), large: (editions.SAME, old[large].pk)}


def test_a_size_only_the_older_edition_prints_stays_its_newest_figure():
    old = _flavour_at_two_sizes()
    small, large = sorted(old)[:2]
    new = _later_edition({small: old[small], large: old[large]}, {small: old[small].ro_qps + 100})
    newest = dict(PublishedResult.objects.filter(pk__in=[old[small].pk, old[large].pk, new[small].pk])
                  .values_list("pk", "is_newest"))
    assert newest == {old[small].pk: False, old[large].pk: True, new[small].pk: True}


def test_the_sql_shape_finds_what_the_python_shape_keys_alike():
    """variants.editions_of (SQL, through the flavour's id) and variants.variant_key (Python) agree on every row of
    the catalogue: the same rows are editions of each other either way."""
    rows = list(PublishedResult.objects.select_related("table__document", "flavor"))
    by_key = {}
    for r in rows:
        by_key.setdefault(variants.variant_key(r), set()).add(r.pk)
    editions_sql = PublishedResult.objects.annotate(_editions=Subquery(
        variants.editions_of(PublishedResult.objects.all()).order_by().values("flavor_id")
        .annotate(ids=ArrayAgg("id")).values("ids")[:1]))
    sql = {r.pk: set(r._editions) for r in editions_sql}
    assert {r.pk: by_key[variants.variant_key(r)] for r in rows} == sql
    assert any(len(ids) > 1 for ids in sql.values())  # Huawei's editions print flavours again
