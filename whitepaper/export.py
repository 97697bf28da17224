"""The CSV contract shared by `manage.py export_results`, the API's ?format=csv and the explorer's
export: the columns of DESIGN.md ("Interfaces"), in that order, then a few more."""

import csv
import io

from .metrics import METRICS

EXPORT_COLUMNS = [
    "vendor", "document", "published", "engine", "version", "family", "memory_ratio", "flavor",
    "deployment", "edition", "vcpus", "memory_gb", "storage", "max_connections", "iops", "tps", "qps",
    "tpm", "capacity_rows", "data_rows", "hot_rows", "ro_qps", "rw_qps", "table",
    # Extra columns (the contract allows more after `table`).
    "section", "methodology", "iops_note",
]
IOPS_ON_DISK_NOTE = "depends on disk"


def export_queryset(queryset):
    """The related rows each exported result needs, fetched in a fixed number of queries; in document
    order unless the caller sorted the queryset (the explorer's sort, the API's `ordering`)."""
    queryset = queryset.with_provenance()
    return queryset if queryset.query.order_by else queryset.document_order()


def _metric_cell(result, metric):
    value = getattr(result, metric.name)
    if value is None:
        return ""
    if metric.kind == "decimal":
        return result.printed.get(metric.name, str(value))  # as printed: 843.00 stays 843.00
    return str(value)


def result_row(result):
    document, flavor = result.table.document, result.flavor
    row = {
        "vendor": document.vendor.slug,
        "document": document.slug,
        "published": document.published.isoformat(),
        "engine": result.engine_version.engine.slug,
        "version": result.engine_version.version,
        "family": flavor.family.slug if flavor.family else "",
        "memory_ratio": flavor.memory_ratio,
        "flavor": flavor.spec_code,
        "deployment": result.deployment,
        "edition": result.edition,
        "vcpus": str(flavor.vcpus),
        "memory_gb": str(flavor.memory_gb),
        "storage": flavor.storage,
        "table": result.table.label,
        "section": result.table.section,
        "methodology": result.table.methodology.slug,
        "iops_note": IOPS_ON_DISK_NOTE if result.iops_depends_on_disk else "",
    }
    row.update({m.name: _metric_cell(result, m) for m in METRICS})
    return [row[c] for c in EXPORT_COLUMNS]


def iter_csv_lines(queryset):
    """Yield CSV text line by line (for streaming responses and stdout)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(EXPORT_COLUMNS)
    yield buffer.getvalue()
    for result in export_queryset(queryset).iterator(chunk_size=2000):
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(result_row(result))
        yield buffer.getvalue()
