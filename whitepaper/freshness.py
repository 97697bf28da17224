"""The catalogue's change stamp: written by every write to a catalogue model, read by the page cache.

Any save or delete of a catalogue model (admin, importer, publishing a run, a shell) bumps the
`changed_at` of the documents it belongs to (of every document for shared vocabulary such as a vendor
or a flavour), through the signals below, so no writer can forget. The stamp is (newest changed_at,
number of documents); `whitepaper.pages` keys cached pages, ETag and Last-Modified on it.
Bulk `QuerySet.update()` sends no signal: code that uses it calls `touch()` itself (the importer does).
"""

import time

from django.conf import settings
from django.db import connections, router, transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from .models import (Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, PublishedResult,
                     ResultTable, Vendor)

_stamp = {"value": None, "read_at": float("-inf")}


def touch(documents=None):
    """Mark the catalogue changed now: `documents` (a Document queryset), or every document."""
    documents = Document.objects.all() if documents is None else documents
    documents.update(changed_at=timezone.now())
    # This process reads the new stamp at once (others within CATALOGUE_STAMP_TTL), after the commit.
    transaction.on_commit(forget_stamp)


def forget_stamp():
    _stamp["read_at"] = float("-inf")


def catalogue_stamp(request, fresh=False):
    """(newest Document.changed_at, number of documents), read with one query at most every
    CATALOGUE_STAMP_TTL seconds per process (default 1 s; 0 reads it on every request). `fresh`: read now, once per
    request (what keys a number kept for as long as the catalogue does not change: another process's write of the
    last second must not be missed)."""
    if fresh and not getattr(request, "_catalogue_stamp_read", False):  # the request's stamp is another's reading
        request.__dict__.pop("_catalogue_stamp", None)
    if not hasattr(request, "_catalogue_stamp"):
        ttl = 0 if fresh else getattr(settings, "CATALOGUE_STAMP_TTL", 1.0)
        now = time.monotonic()
        request._catalogue_stamp_read = ttl <= 0 or now - _stamp["read_at"] >= ttl
        if request._catalogue_stamp_read:
            _stamp.update(value=read_stamp(), read_at=now)
        request._catalogue_stamp = _stamp["value"]
    return request._catalogue_stamp


def read_stamp():
    """(newest changed_at, number of documents) by one statement, the SQL the ORM writes for
    `Document.objects.aggregate(Max("changed_at"), Count("pk"))`, compiled once per database: read on every
    anonymous API request, the ORM's building of it cost more than the query (issue 52.14, a third of a cached
    answer's time)."""
    connection = connections[router.db_for_read(Document)]
    sql = _STAMP_SQL.get(connection.alias)
    if sql is None:
        table = connection.ops.quote_name(Document._meta.db_table)
        column = f"{table}.{connection.ops.quote_name(Document._meta.get_field('changed_at').column)}"
        pk = f"{table}.{connection.ops.quote_name(Document._meta.pk.column)}"
        sql = _STAMP_SQL[connection.alias] = f"SELECT MAX({column}), COUNT({pk}) FROM {table}"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        changed, n = cursor.fetchone()
    convert = getattr(connection.ops, "convert_datetimefield_value", None)  # SQLite answers text
    if convert is not None and changed is not None:
        changed = convert(changed, None, connection)
    return changed, n


_STAMP_SQL = {}


def _documents_of(instance):
    """The documents a changed object belongs to (None: all of them)."""
    if isinstance(instance, Document):
        return Document.objects.filter(pk=instance.pk)
    if isinstance(instance, (Methodology, ResultTable)):
        return Document.objects.filter(pk=instance.document_id)
    if isinstance(instance, PublishedResult):
        return Document.objects.filter(tables=instance.table_id)
    return None  # vocabulary shared by documents: vendor, engine, version, family, flavour


def _changed(sender, instance, **kwargs):
    if kwargs.get("raw"):  # loaddata: fixtures are not edits
        return
    if isinstance(instance, Document) and kwargs.get("update_fields") == frozenset({"changed_at"}):
        return
    touch(_documents_of(instance))


for _model in (Vendor, Document, Methodology, Engine, EngineVersion, InstanceFamily, Flavor, ResultTable,
               PublishedResult):
    post_save.connect(_changed, sender=_model, dispatch_uid=f"catalogue-stamp-{_model.__name__}")
    post_delete.connect(_changed, sender=_model, dispatch_uid=f"catalogue-stamp-delete-{_model.__name__}")
