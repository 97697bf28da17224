"""The CSV contract shared by `manage.py export_results`, the API's ?format=csv and the explorer's
export: the columns of DESIGN.md ("Interfaces"), in that order, then a few more."""

import csv
import datetime
import io
import json
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq

from .editions import attach_revisions
from .measurement import Measurement
from .metrics import METRICS, METRICS_BY_NAME
from .models import PublishedResult

EXPORT_COLUMNS = [
    "vendor", "document", "published", "engine", "version", "family", "memory_ratio", "flavor",
    "deployment", "edition", "vcpus", "memory_gb", "storage", "max_connections", "iops", "tps", "qps",
    "tpm", "capacity_rows", "data_rows", "hot_rows", "ro_qps", "rw_qps", "table",
    # Extra columns (the contract allows more after `table`), only ever appended.
    "section", "methodology", "iops_note",
    "id", "url", "tps_per_core", "statements_per_transaction", "origin",
    "qps_normalised", "memory_ratio_derived", "revised_from", "revised_changes",
    "run", "tps_ci_low", "tps_ci_high", "client_bound", "other_load", "latency_caveat", "repeats_n", "repeats_stdev",
    "sustained_tps", "latency_bound_ms", "superseded_by", "superseded_changes", "tps_cv", "client_disturbed",
]
# A metric declared later (metrics.METRICS) is a column appended after these: the contract's columns never move.
EXPORT_COLUMNS += [m.name for m in METRICS if m.name not in EXPORT_COLUMNS]
CHUNK = 2000  # rows read at a time, each chunk's older editions in one query
IOPS_ON_DISK_NOTE = "depends on disk"
RESULTS_PATH = "/api/v1/results/"  # + id: a result's `url` column, the same bytes for the API and the command


def _or_empty(value):
    return "" if value is None else str(value)


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


# The column dictionary (a Frictionless table schema, https://specs.frictionlessdata.io/table-schema/):
# type, unit and meaning of every column, served by the API at /api/v1/results/columns/. Empty cells are
# "not given by the document". The descriptions are of the CSV's typed cells (typed_cells); with the deprecated
# `printed_cells=true` numbers are as printed and `version` is bare (read it as text there: 10 is not 10.0).
_TEXT = "string"
COLUMN_INFO = {
    "vendor": (_TEXT, "", "Vendor slug (see /api/v1/vendors/)."),
    "document": (_TEXT, "", "Document slug (see /api/v1/documents/)."),
    "published": ("date", "", "The document's publication date (ISO 8601)."),
    "engine": (_TEXT, "", "Engine slug: mysql, postgresql, sqlserver, ppas."),
    "version": (_TEXT, "", "Engine and version as the document names them ('PostgreSQL 10', 'MySQL 8.0', 'SQL Server "
                "2008 R2'; text in every reader, 10 is not 10.0); empty when the version is not stated. The bare version "
                "('10') is the JSON's and the Parquet's `version`, and the `version` filter's value."),
    "family": (_TEXT, "", "Instance family slug; empty when the document names none."),
    "memory_ratio": (_TEXT, "", "Memory ratio as the document groups it, 1:N = N GB per vCPU."),
    "flavor": (_TEXT, "", "Spec code as the document prints it."),
    "deployment": (_TEXT, "", "ha (primary/standby), single, or empty when not stated."),
    "edition": (_TEXT, "", "SQL Server edition(s) joined by +; empty otherwise."),
    "vcpus": ("integer", "vCPUs", "vCPUs of the flavour."),
    "memory_gb": ("integer", "GB", "Memory of the flavour."),
    "storage": (_TEXT, "", "Storage as the document prints it."),
    **{m.name: ("integer" if m.kind in ("int", "rows") else "number", m.unit,
                str(m.description or m.label) + (" Always two decimals (494 printed is 494.00, the same value; as "
                                                 "printed in the JSON's `printed`)." if m.kind == "decimal" else ""))
       for m in METRICS},
    "table": (_TEXT, "", "The table's label as printed (Chinese)."),
    "section": (_TEXT, "", "The document section of the table, as printed."),
    "methodology": (_TEXT, "", "Methodology slug (see /api/v1/methodologies/)."),
    "iops_note": (_TEXT, "", "'depends on disk' where the document refers IOPS to the EVS disk."),
    "id": ("integer", "", "The result's id (stable across re-imports)."),
    "url": (_TEXT, "", "The result in the API, relative to the server (/api/v1/results/<id>/)."),
    "tps_per_core": ("number", "transactions per second per vCPU", "TPS / vCPUs, to 2 decimals."),
    "statements_per_transaction": ("integer", "statements", "Statements the methodology counts per transaction "
                                   "in its QPS (Huawei 20, Alibaba about 18); empty when not stated."),
    "origin": (_TEXT, "", "vendor (published by the vendor) or internal (measured by this dashboard)."),
    "qps_normalised": ("number", "queries per second", "Computed, not printed: QPS x 18 / statements_per_transaction "
                       "(QPS on one definition, 18 statements per transaction), to 2 decimals; empty without both."),
    "memory_ratio_derived": (_TEXT, "", "Derived, not printed: where the document groups the flavour by no memory "
                             "ratio (memory_ratio empty), the ratio computed from vCPUs and memory (1:N = N GB per "
                             "vCPU, one decimal when not whole); empty where the document states one."),
    "revised_from": (_TEXT, "", "Where an older edition of the vendor's numbers printed this row otherwise: that "
                     "document's slug; empty otherwise (the API's revised_from)."),
    "revised_changes": (_TEXT, "", "Each metric that older edition printed otherwise: 'tps 10929.30 -> 8839.4 "
                        "(-19.1 %)', several joined by '; '; empty when not revised."),
    "superseded_by": (_TEXT, "", "Where the vendor's newest later edition printed this row otherwise: that "
                      "document's slug; empty otherwise (the API's superseded_by; the mirror of revised_from)."),
    "superseded_changes": (_TEXT, "", "Each metric that later edition printed otherwise: 'tps 10929.30 -> 8839.4 "
                           "(-19.1 %)', several joined by '; '; empty when no later edition printed it otherwise."),
    "run": (_TEXT, "", "Internal measurements: the public record of the run behind the row (set-up, evidence, samples), "
            "relative to the server (/runs/<id>/record/); empty for a vendor's row."),
    "tps_ci_low": ("number", "transactions per second", "Internal measurements: low end of the 95 % interval of the "
                   "mean TPS over the runs of a series (Student's t over the runs); empty for one run (n = 1: the spread "
                   "between runs is unknown) or a vendor's row."),
    "tps_ci_high": ("number", "transactions per second", "Internal measurements: high end of that interval."),
    "client_bound": ("boolean", "", "Internal measurements: true when the client host was above 90 % CPU for most of a "
                     "step (the result may understate the target), false when not; empty when not measured."),
    "other_load": (_TEXT, "", "Internal measurements: 'acknowledged' when the server saw other load during the run "
                   "(acknowledged when published); empty otherwise."),
    "latency_caveat": (_TEXT, "", "Internal measurements: why the run's latency figures are not to be trusted; empty "
                       "when they are."),
    "repeats_n": ("integer", "runs", "Internal measurements: how many runs the row's figures are the mean of (1: a "
                  "single run); empty for a vendor's row."),
    "repeats_stdev": ("number", "transactions per second", "Their TPS's sample standard deviation; empty otherwise."),
    "client_disturbed": (_TEXT, "", "Internal measurements: 'acknowledged' when the client host was loaded beyond its "
                         "cores as a run of the row started (acknowledged when published); empty otherwise."),
    "tps_cv": ("number", "", "Internal measurements: the coefficient of variation of TPS over the runs (standard "
               "deviation / mean); empty for one run or a vendor's row."),
    "latency_bound_ms": ("number", "ms", "Internal capacity searches: the p95 bound sustained_tps was measured under; "
                         "empty otherwise (vendor whitepapers state no latency)."),
}


def column_schema():
    """The CSV's column dictionary as a Frictionless table schema (JSON-ready)."""
    fields = []
    for name in EXPORT_COLUMNS:
        kind, unit, description = COLUMN_INFO[name]
        field = {"name": name, "type": kind, "description": description}
        if unit:
            field["unit"] = unit
        if name == "origin":
            field["constraints"] = {"enum": ["vendor", "internal"]}
        if kind == "boolean":  # the cells as the CSV writes them (Frictionless' defaults accept more)
            field["trueValues"], field["falseValues"] = ["true"], ["false"]
        fields.append(field)
    return {"fields": fields, "missingValues": [""], "primaryKey": ["id"],
            # pandas.read_csv options giving each column its type: text stays text ('10' is not 10.0, an
            # empty family is ''), whole numbers as nullable Int64, empty numbers as missing.
            "pandas": {"dtype": {name: {"integer": "Int64", "boolean": "boolean"}.get(COLUMN_INFO[name][0], "str")
                                 for name in EXPORT_COLUMNS if COLUMN_INFO[name][0] in ("integer", "string", "boolean")},
                       "parse_dates": ["published"], "keep_default_na": False,
                       "na_values": {name: [""] for name in EXPORT_COLUMNS
                                     if COLUMN_INFO[name][0] in ("integer", "number", "boolean")}}}


def _printed_or_empty(result, metric):
    return _metric_cell(result, METRICS_BY_NAME[metric]) or "-"


def changes_text(changes, older, newer):
    """"tps 10929.30 -> 8839.4 (-19.1 %); qps ...": each metric two editions print otherwise, as each prints it."""
    return "; ".join(f"{metric} {_printed_or_empty(older, metric)} -> {_printed_or_empty(newer, metric)}"
                     + (f" ({pct:+.1f} %)" if pct is not None else "") for metric, _old, _new, pct in changes)


def revision_cells(result):
    """The revised_from and revised_changes cells of a row (its editions.Revision, or none)."""
    revision = getattr(result, "revised_from", None)
    if revision is None:
        return {"revised_from": "", "revised_changes": ""}
    return {"revised_from": revision.document.slug, "revised_changes": changes_text(revision.changes, revision.older, result)}


def superseded_cells(result):
    """The superseded_by and superseded_changes cells of a row (its editions.Superseded, or none)."""
    newer = getattr(result, "superseded", None)
    if newer is None:
        return {"superseded_by": "", "superseded_changes": ""}
    return {"superseded_by": newer.document.slug, "superseded_changes": changes_text(newer.changes, result, newer.newer)}


def result_row(result, columns=None, typed=False):
    """A row's cells as text. `typed`: the CSV's cells (3.0.0, typed_cells); otherwise the cells as the
    document printed them (the Parquet file's source and the deprecated `printed_cells=true` CSV)."""
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
        "id": str(result.pk),
        "url": f"{RESULTS_PATH}{result.pk}/",
        "tps_per_core": "" if result.tps_per_core is None else str(result.tps_per_core),
        "statements_per_transaction": _or_empty(result.table.methodology.statements_per_transaction),
        "origin": result.origin,
        "qps_normalised": _or_empty(result.qps_normalised),
        "memory_ratio_derived": flavor.memory_ratio_derived,
        **revision_cells(result),
        **superseded_cells(result),
        **_measurement_cells(result),
    }
    row.update({m.name: _metric_cell(result, m) for m in METRICS})
    if typed:
        typed_cells(row, result)
    return [row[c] for c in columns or EXPORT_COLUMNS]


# The CSV's cells (API 3.0.0, issue 52.10): a CSV carries no types, so pandas, polars and DuckDB type each column
# from its text. Every column typed `number` is written with a decimal point, so that no reader takes it for a
# whole number (polars typed TPS from the first 100 rows, 494, and failed on 172.88): the decimal columns with
# their two stored decimals (494 printed is 494.00, 8839.4 is 8839.40: the same value, the Parquet's decimal), the
# float columns as stored, with ".0" added to a whole number (12.5, 50.00, 0.0). `version` carries the engine's
# name, as the documents and the site name a version ("PostgreSQL 10", "MySQL 8.0", "SQL Server 2008 R2"): a bare "10" is a
# number to every reader (10.0 in pandas), whatever its quoting. The cells as printed stay in the JSON's `printed`
# and, until its Sunset, in the CSV with `printed_cells=true` (config.deprecation "csv-printed-cells").
_FLOAT_COLUMNS = [name for name, info in COLUMN_INFO.items() if info[0] == "number" and name not in
                  {m.name for m in METRICS if m.kind == "decimal"} | {"tps_per_core", "qps_normalised"}]
_TWO_DECIMAL_COLUMNS = [m.name for m in METRICS if m.kind == "decimal"] + ["tps_per_core", "qps_normalised"]
_STORED_DECIMALS = {m.name for m in METRICS if m.kind == "decimal"}  # cells of a model DecimalField of that name


def version_label(engine_version):
    """'PostgreSQL 10': the engine's name and the version as the document names it; '' when not stated."""
    return f"{engine_version.engine.name} {engine_version.version}" if engine_version.version else ""


def typed_cells(row, result):
    """Turn `row` (result_row's cells as printed) into the CSV's cells, in place."""
    row["version"] = version_label(result.engine_version)
    for name in _TWO_DECIMAL_COLUMNS:
        if row[name]:  # the stored value (the printed one, 494, parsed on import) with its two decimals
            value = getattr(result, name) if name in _STORED_DECIMALS else Decimal(row[name])
            row[name] = f"{value:.2f}"
    for name in _FLOAT_COLUMNS:
        if row[name] and not set(row[name]) & set(".eE"):
            row[name] += ".0"  # a whole number stored in a float (a stdev of 0): 0.0


def _measurement_cells(result):
    """An internal row's context (PublishedResult.measurement), empty cells for a vendor's row."""
    m = result.internal_measurement or Measurement()
    low, high = m.tps_interval
    bound = m.client_bound
    return {"run": result.run_record_url or "", "tps_ci_low": _or_empty(low), "tps_ci_high": _or_empty(high),
            "client_bound": "" if bound is None else str(bound).lower(),
            "other_load": "acknowledged" if m.other_load else "", "latency_caveat": m.latency_caveat or "",
            "repeats_n": _or_empty(result.runs_n), "repeats_stdev": _or_empty(m.repeats_stdev),
            "tps_cv": _or_empty(m.tps_cv), "client_disturbed": "acknowledged" if m.disturbed else "",
            "latency_bound_ms": _or_empty(result.latency_bound_ms)}


def iter_rows(queryset, columns=None, typed=False):
    """Every row of the export (result_row's cells: as printed, or `typed` as the CSV writes them), read CHUNK
    at a time."""
    revised = columns is None or {"revised_from", "revised_changes", "superseded_by", "superseded_changes"} & set(columns)
    chunk = []
    for result in export_queryset(queryset).iterator(chunk_size=CHUNK):
        chunk.append(result)
        if len(chunk) == CHUNK:
            yield from _chunk_rows(chunk, columns, revised, typed)
            chunk = []
    yield from _chunk_rows(chunk, columns, revised, typed)


def _chunk_rows(results, columns, revised, typed):
    if revised and results:
        attach_revisions(results, PublishedResult.objects.all())  # revised_from and superseded
    for result in results:
        yield result_row(result, columns, typed)


def iter_csv_lines(queryset, bom=False, columns=None, printed=False):
    """Yield CSV text line by line (for streaming responses and stdout); `bom`: a UTF-8 byte order
    mark first (spreadsheets then read the Chinese labels right); `columns`: only these, in this order;
    `printed`: the cells as printed (deprecated, `printed_cells=true`) instead of typed_cells'."""
    if bom:
        yield "\ufeff"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns or EXPORT_COLUMNS)
    yield buffer.getvalue()
    for row in iter_rows(queryset, columns, typed=not printed):
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        yield buffer.getvalue()


# --- Parquet: the CSV's rows and columns, typed -----------------------------------------------------
# Each column's Apache Arrow type follows the column dictionary (COLUMN_INFO): integers int64; the printed
# metrics decimal exactly as stored (the model's DecimalField: 494 and 172.88 are both decimal(16, 2), never
# a float nor text); the two computed 2-decimal columns likewise; the run interval and spread float64;
# `published` a date; `client_bound` a boolean; everything else (version included: 10 is not 10.0) text. An
# empty CSV cell ("not given by the document") is null. pandas, polars and DuckDB read it with no options.
PARQUET_MEDIA_TYPE = "application/vnd.apache.parquet"
_METRIC_FIELD = PublishedResult._meta.get_field("tps")  # every decimal metric's field (metrics.metric_field)
DECIMAL_TYPE = pa.decimal128(_METRIC_FIELD.max_digits, _METRIC_FIELD.decimal_places)
_DECIMAL_COLUMNS = {m.name for m in METRICS if m.kind == "decimal"} | {"tps_per_core", "qps_normalised"}
_BOOLEAN_COLUMNS = {name: {"true": True, "false": False} for name, info in COLUMN_INFO.items() if info[0] == "boolean"}


def parquet_type(name):
    """The Arrow type of export column `name`."""
    kind = COLUMN_INFO[name][0]
    if name in _BOOLEAN_COLUMNS:
        return pa.bool_()
    if name in _DECIMAL_COLUMNS:
        return DECIMAL_TYPE
    return {"integer": pa.int64(), "number": pa.float64(), "date": pa.date32()}.get(kind, pa.string())


def parquet_schema(columns=None):
    """The Arrow schema of the columns, with pandas' metadata naming its nullable dtypes for the integer and boolean
    columns (Int64, boolean): pandas.read_parquet then keeps 1500 an integer beside a null, not 1500.0."""
    fields = [pa.field(name, parquet_type(name), nullable=True) for name in columns or EXPORT_COLUMNS]
    nullable = {pa.int64(): ("int64", "Int64"), pa.bool_(): ("bool", "boolean")}
    pandas = {"index_columns": [], "column_indexes": [], "creator": {"library": "perfdash"},
              "columns": [{"name": f.name, "field_name": f.name, "pandas_type": nullable[f.type][0],
                           "numpy_type": nullable[f.type][1], "metadata": None} for f in fields if f.type in nullable]}
    return pa.schema(fields, metadata={b"pandas": json.dumps(pandas).encode()})


def _typed(name, arrow_type, cell):
    """A CSV cell as the value of its Parquet column (None for an empty cell)."""
    if cell == "":
        return None
    if name in _BOOLEAN_COLUMNS:
        return _BOOLEAN_COLUMNS[name][cell]
    if arrow_type == DECIMAL_TYPE:
        return Decimal(cell)
    if arrow_type == pa.int64():
        return int(cell)
    if arrow_type == pa.float64():
        return float(cell)
    if arrow_type == pa.date32():
        return datetime.date.fromisoformat(cell)
    return cell


class _Sink:
    """A write-only file the Parquet writer writes into; `take()` hands on (and forgets) what it holds."""

    closed = False

    def __init__(self):
        self.parts, self.position = [], 0

    def write(self, data):
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self):
        return self.position

    def flush(self):
        pass

    def take(self):
        data, self.parts = b"".join(self.parts), []
        return data


def iter_parquet_bytes(queryset, columns=None):
    """Yield a Parquet file in pieces (one row group per CHUNK rows, for streaming responses): the rows and
    columns of iter_csv_lines, in its order, each column typed by parquet_type."""
    schema = parquet_schema(columns)
    sink = _Sink()
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        rows = []
        for row in iter_rows(queryset, columns):
            rows.append(row)
            if len(rows) == CHUNK:
                writer.write_batch(_batch(schema, rows))
                rows = []
                yield sink.take()
        if rows:
            writer.write_batch(_batch(schema, rows))
    yield sink.take()


def _batch(schema, rows):
    arrays = [pa.array([_typed(field.name, field.type, row[i]) for row in rows], type=field.type)
              for i, field in enumerate(schema)]
    return pa.record_batch(arrays, schema=schema)
