"""When `PublishedResult.document_order_key` (queries.DOCUMENT_ORDER) is recomputed: on every write that can
move a row in document order, in the writer's transaction. A result's own save sets it (its table and
position); a document's date or slug and a table's position or document change the keys of their rows.
Bulk writers (`bulk_create`, `QuerySet.update()` of positions, raw SQL) call `refresh()` themselves
(benchmarks/api_scale.py does)."""

from django.db.models.signals import post_save, pre_save

from .models import Document, PublishedResult, ResultTable


def refresh(queryset=None):
    """Recompute the key of these results (None: every result)."""
    (queryset if queryset is not None else PublishedResult.objects.all()).order_by().refresh_document_order()


def _result_saving(sender, instance, raw=False, **kwargs):
    if raw:  # loaddata: fixtures carry their keys
        return
    table, document = instance.table, instance.table.document
    instance.document_order_key = f"{document.published.isoformat()} {document.slug} {table.position:06d} {instance.position:06d}"


def _document_saved(sender, instance, raw=False, created=False, update_fields=None, **kwargs):
    if raw or created or update_fields == frozenset({"changed_at"}):
        return
    refresh(PublishedResult.objects.filter(table__document=instance))


def _table_saved(sender, instance, raw=False, created=False, **kwargs):
    if not (raw or created):
        refresh(PublishedResult.objects.filter(table=instance))


pre_save.connect(_result_saving, sender=PublishedResult, dispatch_uid="order-key-result")
post_save.connect(_document_saved, sender=Document, dispatch_uid="order-key-document")
post_save.connect(_table_saved, sender=ResultTable, dispatch_uid="order-key-table")
