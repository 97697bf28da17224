"""The count of a numbered results page (issue 39.3): kept under the catalogue stamp (stamped_count), so a second
request does not count again, yet right after any committed write, another process's included, and never another
filter's. Expected counts come from SQL written here, not from the API."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db

API = "/api/v1"


def mysql_rows_with_tps_at_least(tps):
    with connection.cursor() as cursor:
        cursor.execute("""SELECT count(*) FROM whitepaper_publishedresult r
                          JOIN whitepaper_engineversion v ON v.id = r.engine_version_id
                          JOIN whitepaper_engine e ON e.id = v.engine_id
                          JOIN whitepaper_resulttable t ON t.id = r.table_id
                          JOIN whitepaper_document d ON d.id = t.document_id
                          JOIN whitepaper_vendor o ON o.id = d.vendor_id
                          WHERE e.slug = 'mysql' AND r.tps >= %s AND o.origin <> 'internal'""", [tps])
        return cursor.fetchone()[0]


def counted(ctx):
    return [q["sql"] for q in ctx.captured_queries
            if q["sql"].startswith("SELECT COUNT(*)") and "whitepaper_publishedresult" in q["sql"]]


def test_a_second_request_is_not_counted_again_and_another_filter_is(client):
    with CaptureQueriesContext(connection) as first:
        body = client.get(f"{API}/results/", {"engine": "mysql", "min_tps": 1000, "page_size": 5}).json()
    assert body["count"] == mysql_rows_with_tps_at_least(1000) > 5
    assert len(counted(first)) == 1
    with CaptureQueriesContext(connection) as second:
        again = client.get(f"{API}/results/", {"engine": "mysql", "min_tps": 1000, "page_size": 5, "page": 2}).json()
    assert again["count"] == body["count"] and counted(second) == []
    other = client.get(f"{API}/results/", {"engine": "mysql", "min_tps": 5000, "page_size": 5}).json()
    assert other["count"] == mysql_rows_with_tps_at_least(5000) < body["count"]


def test_the_count_follows_a_write_this_process_has_not_been_told_of(client, settings):
    """A write by another process: this process's stamp was read before it (a long CATALOGUE_STAMP_TTL, and the
    test's transaction never runs the on-commit hook that tells this process). The count must follow at once, and
    the page must list the row: a kept count of 0 would make the paginator list nothing."""
    settings.CATALOGUE_STAMP_TTL = 3600
    row = PublishedResult.objects.filter(engine_version__engine__slug="mysql", tps__isnull=False).order_by("-tps").first()
    threshold = float(row.tps) + 1
    before = client.get(f"{API}/results/", {"engine": "mysql", "min_tps": threshold}).json()
    assert before["count"] == mysql_rows_with_tps_at_least(threshold) == 0 and before["results"] == []
    row.tps = threshold + 1
    row.save()
    after = client.get(f"{API}/results/", {"engine": "mysql", "min_tps": threshold}).json()
    assert after["count"] == mysql_rows_with_tps_at_least(threshold) == 1
    assert [r["id"] for r in after["results"]] == [row.pk]
