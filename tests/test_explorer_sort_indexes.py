"""An index per offered sort (issue 39.2): every sort the explorer offers on a column of the result row, in either
direction, is read in its order from an index (a page walks it and stops after a page), not sorted after reading
every match. At 10^5 results such a page cost 30-100 ms and the page after it 0.3-0.8 s without one (EXPLAIN ANALYZE,
benchmarks/explorer_scale.out.txt). Sorts on the flavour, engine, vendor, document or table order by another table's
columns, which no index of the result table serves: they are left out here.

How: the explorer's own page query (the ordered ids, queries.rows) planned with sorting switched off; where no index
gives the order PostgreSQL has to sort anyway and the plan shows a Sort node."""

import pytest
from django.db import connection
from django.test import RequestFactory

from whitepaper import views
from whitepaper.queries import SORTS

pytestmark = pytest.mark.django_db

# The explorer's sortable columns that are the result row's own (no "__" path to another table).
ROW_SORTS = [c for c in views.EXPLORER_COLUMNS if c not in views.UNSORTED and all("__" not in p for p in SORTS[c])]


def test_the_row_sorts_are_the_metrics_and_the_deployment():
    assert sorted(ROW_SORTS) == sorted(["tps", "qps", "ro_qps", "rw_qps", "tpm", "hot_rows", "data_rows",
                                        "max_connections", "iops", "latency_p95_ms", "deployment"])


@pytest.mark.parametrize("sort", [f"{d}{c}" for c in ROW_SORTS for d in ("", "-")])
def test_a_row_sort_reads_its_order_from_an_index(sort):
    _filters, queryset, _cols, _sort, terms = views.explorer_state(RequestFactory().get(f"/explore/?sort={sort}&latest=false"))
    assert terms == [sort]
    sql, params = queryset.values("pk")[:101].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off; SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Sort" not in plan, plan
