"""When `PublishedResult.is_newest` is recomputed: on every write to the catalogue, in the writer's transaction.

The rule itself is `queries.newest_rank` (stored by `PublishedResultQuerySet.refresh_newest`); this module
only says when. Any save or delete of a result, document, table or flavour (importer, publishing or
retracting a run, admin, a shell) refreshes the engine versions it concerns through the signals below,
so no writer can forget (an engine version holds every row of each of its variants). A writer saving
many rows wraps them in `batch()` (the importer does): one refresh at its end. Bulk `QuerySet.update()`
of a variant field, or `bulk_create`, sends no signal: such code calls `refresh()` itself
(benchmarks/api_scale.py does).
"""

import threading
from contextlib import contextmanager

from django.db.models.signals import post_delete, post_save

from .models import Document, Flavor, PublishedResult, ResultTable

_state = threading.local()


def refresh(engine_version_ids=None):
    """Recompute `is_newest` for every result of these engine versions (None: the whole catalogue)."""
    if engine_version_ids is None:
        engine_version_ids = set(PublishedResult.objects.order_by().values_list("engine_version_id", flat=True).distinct())
    ids = {i for i in engine_version_ids if i is not None}
    pending = getattr(_state, "pending", None)
    if pending is not None:
        pending.update(ids)
        return
    for engine_version_id in sorted(ids):  # one engine version at a time: bounded lists of ids
        PublishedResult.objects.filter(engine_version_id=engine_version_id).refresh_newest()


@contextmanager
def batch():
    """Refresh once, at the end, for every write inside (nested batches join the outer one)."""
    if getattr(_state, "pending", None) is not None:
        yield
        return
    _state.pending = set()
    try:
        yield
        pending = _state.pending
    finally:
        _state.pending = None
    refresh(pending)


def _versions_of(**lookup):
    return PublishedResult.objects.order_by().filter(**lookup).values_list("engine_version_id", flat=True).distinct()


def _result_changed(sender, instance, **kwargs):
    if kwargs.get("raw"):  # loaddata: fixtures carry their flags
        return
    refresh({instance.engine_version_id, getattr(instance, "_loaded_engine_version_id", None)})


def _document_changed(sender, instance, **kwargs):  # its date or slug decides which edition is newest
    if kwargs.get("raw") or kwargs.get("created") or kwargs.get("update_fields") == frozenset({"changed_at"}):
        return
    refresh(_versions_of(table__document=instance))


def _table_changed(sender, instance, **kwargs):  # moved to another document
    if not (kwargs.get("raw") or kwargs.get("created")):
        refresh(_versions_of(table=instance))


def _flavor_changed(sender, instance, **kwargs):  # its size, family, ratio or code are the variant's
    if not (kwargs.get("raw") or kwargs.get("created")):
        refresh(_versions_of(flavor=instance))


post_save.connect(_result_changed, sender=PublishedResult, dispatch_uid="newest-result-save")
post_delete.connect(_result_changed, sender=PublishedResult, dispatch_uid="newest-result-delete")
post_save.connect(_document_changed, sender=Document, dispatch_uid="newest-document-save")
post_save.connect(_table_changed, sender=ResultTable, dispatch_uid="newest-table-save")
post_save.connect(_flavor_changed, sender=Flavor, dispatch_uid="newest-flavor-save")
