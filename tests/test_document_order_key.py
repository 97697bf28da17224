"""The stored document-order key (`PublishedResult.document_order_key`, kept by whitepaper/order_key.py) puts
rows in document order: documents by date, then slug; tables and rows as printed. It is right after an
import and after every write that moves a row (a document's date or slug, a table's position), so the
explorer, API and export read rows in the documents' order from an index (benchmarks/explorer_scale.py)."""

import datetime

import pytest

from whitepaper import order_key
from whitepaper.models import Document, PublishedResult, ResultTable
from whitepaper.queries import DOCUMENT_ORDER_FIELDS

pytestmark = pytest.mark.django_db


def by_key():
    return list(PublishedResult.objects.order_by("document_order_key", "id").values_list("pk", flat=True))


def by_fields():
    return list(PublishedResult.objects.order_by(*DOCUMENT_ORDER_FIELDS, "id").values_list("pk", flat=True))


def keys():
    return dict(PublishedResult.objects.values_list("pk", "document_order_key"))


def test_it_orders_the_imported_catalogue_as_the_documents_do():
    assert PublishedResult.objects.filter(document_order_key="").count() == 0
    assert by_key() == by_fields()
    first = PublishedResult.objects.order_by("document_order_key").select_related("table__document").first()
    earliest = Document.objects.filter(tables__results__isnull=False).order_by("published", "slug").first()
    assert first.table.document == earliest and first.table.position == 1 and first.position == 1
    # what a row's own save stores is what the bulk refresh computes
    before = keys()
    order_key.refresh()
    assert keys() == before


def test_it_follows_a_documents_new_date():
    document = Document.objects.order_by("published").first()
    document.published = datetime.date(2030, 1, 1)
    document.save()
    moved = set(PublishedResult.objects.filter(table__document=document).values_list("pk", flat=True))
    assert moved and set(by_key()[-len(moved):]) == moved  # now the newest document: its rows come last
    assert by_key() == by_fields()


def test_it_follows_a_tables_new_position():
    document = Document.objects.get(slug="huawei-2025-10-21-mysql")
    first, second = ResultTable.objects.filter(document=document).order_by("position")[:2]
    first.position, second.position = 10**6, first.position
    first.save()
    second.save()
    assert by_key() == by_fields()
    rows = list(PublishedResult.objects.filter(table__document=document).order_by("document_order_key")
                .values_list("table_id", flat=True))
    assert rows[0] == second.pk and rows[-1] == first.pk
