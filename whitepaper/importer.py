"""Whitepaper data files -> catalogue.

`parse_document_file` is pure: it reads one YAML file (format: whitepaper/data/README.md) and returns
validated plain data, or raises DataFileError naming the file, table, row and field. `import_document`
writes one parsed document in one transaction: a second import of the same file changes nothing.
"""

import datetime
import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import yaml
from django.db import transaction
from django.db.models import ProtectedError
from django.urls import reverse

from . import newest, order_key, webhooks
from .freshness import touch
from .measurement import Measurement
from .metrics import METRICS
from .models import (
    MEMORY_RATIO_RE,
    Deployment,
    Document,
    Engine,
    EngineVersion,
    Flavor,
    InstanceFamily,
    Methodology,
    PublishedResult,
    ResultTable,
    Vendor,
)

DATA_DIR = Path(__file__).resolve().parent / "data"
VOCABULARY_FILE = DATA_DIR / "_vocabulary.yaml"

IDENTITY_COLUMNS = ["engine", "version", "family", "memory_ratio", "flavor", "vcpus", "memory_gb", "storage",
                    "deployment", "edition"]
TABLE_LEVEL_KEYS = ["engine", "version", "family", "memory_ratio", "deployment", "edition", "storage"]
KNOWN_COLUMNS = set(IDENTITY_COLUMNS) | {m.name for m in METRICS}
REQUIRED_TABLE_KEYS = ["label", "methodology", "columns", "rows"]
REQUIRED_DOCUMENT_KEYS = ["slug", "vendor", "title", "published"]
ROW_IDENTITY = ["engine", "version", "flavor", "vcpus", "memory_gb", "storage", "family", "memory_ratio",
                "deployment", "edition", "data_rows", "hot_rows"]
CHINESE_MULTIPLIERS = {"亿": 10**8, "万": 10**4}
EDITIONS = {"enterprise", "standard", "web"}
METHODOLOGY_NUMBERS = ["tables", "rows_per_table", "threads", "duration_s", "report_interval_s",
                       "statements_per_transaction"]


class DataFileError(Exception):
    """A data file that cannot be imported. The message names the file, table, row and field."""

    def __init__(self, path, reason, table=None, row=None, field=None):
        self.path, self.reason, self.table, self.row, self.field = path, reason, table, row, field
        where = [str(path)]
        if table is not None:
            where.append(f"table {table!r}")
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {reason}")


@dataclass
class ParsedRow:
    position: int
    values: dict  # identity columns -> str
    metrics: dict  # metric name -> (number, printed)
    iops_depends_on_disk: bool = False
    measurement: dict = field(default_factory=dict)  # an internal edition's row: its series (Measurement JSON)


@dataclass
class ParsedTable:
    position: int
    label: str
    label_printed: bool
    section: str
    methodology: str
    columns: list
    notes: str
    label_en: str = ""
    section_en: str = ""
    notes_zh: str = ""
    heading: str = ""
    heading_en: str = ""
    version_example: bool = False  # the document names its version only as an example (Alibaba's "PPAS 10")
    rows: list = field(default_factory=list)


@dataclass
class ParsedDocument:
    path: Path
    document: dict
    methodologies: list
    tables: list


# --- pure parsing -----------------------------------------------------------------------------


def load_yaml(path):
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFileError(path, f"cannot read file ({exc.strerror or exc})") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, f"wrong encoding: the file must be UTF-8 (byte {exc.start} is not)") from exc
    try:
        # BaseLoader keeps every scalar a string, so numbers keep the form the document prints.
        data = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError as exc:
        raise DataFileError(path, f"not valid YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise DataFileError(path, "the file must be a YAML mapping with document, methodologies and tables")
    return data


def parse_number(text, kind):
    """'843.00' -> Decimal('843.00'); '12.5亿' -> 1250000000; raises ValueError with a reason."""
    text = text.strip().replace(",", "")
    multiplier = 1
    if kind == "rows" and text and text[-1] in CHINESE_MULTIPLIERS:
        multiplier = CHINESE_MULTIPLIERS[text[-1]]
        text = text[:-1]
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not number.is_finite():
        raise ValueError(f"not a number: {text!r}")
    if number < 0:
        raise ValueError(f"negative number: {text!r}")
    number *= multiplier
    if kind in ("int", "rows"):
        if number != number.to_integral_value():
            raise ValueError(f"not a whole number: {text!r}")
        return int(number)
    if number.as_tuple().exponent < -2:
        raise ValueError(f"more than 2 decimals: {text!r}")
    return number


def _text(path, value, what, table=None, row=None):
    if isinstance(value, (dict, list)):
        raise DataFileError(path, f"expected text, got a {type(value).__name__}", table, row, what)
    return (value or "").strip()


def _parse_methodology(path, raw):
    if not isinstance(raw, dict):
        raise DataFileError(path, "each methodology must be a mapping", field="methodologies")
    slug = _text(path, raw.get("slug"), "slug")
    if not slug:
        raise DataFileError(path, "missing methodology slug", field="methodologies.slug")
    tool = _text(path, raw.get("tool"), "tool")
    if tool and tool not in Methodology.Tool.values:
        raise DataFileError(path, f"unknown tool {tool!r} (one of {', '.join(Methodology.Tool.values)})",
                            field=f"methodology {slug}: tool")
    parsed = {"slug": slug, "tool": tool, "parameters": raw.get("parameters") or {},
              "parameters_zh": raw.get("parameters_zh") or {}}
    for key in ["name", "name_zh", "tool_version", "workload", "workload_zh", "client", "client_zh", "description",
                "description_zh"]:
        parsed[key] = _text(path, raw.get(key), f"methodology {slug}: {key}")
    parsed["name"] = parsed["name"] or slug
    for key in METHODOLOGY_NUMBERS:
        value = _text(path, raw.get(key), key)
        try:
            parsed[key] = parse_number(value, "int") if value else None
        except ValueError as exc:
            raise DataFileError(path, str(exc), field=f"methodology {slug}: {key}") from None
    if not isinstance(parsed["parameters"], dict):
        raise DataFileError(path, "parameters must be a mapping", field=f"methodology {slug}: parameters")
    if not isinstance(parsed["parameters_zh"], dict):
        raise DataFileError(path, "parameters_zh must be a mapping", field=f"methodology {slug}: parameters_zh")
    unknown = sorted(set(parsed["parameters_zh"]) - set(parsed["parameters"]))
    if unknown:  # a Chinese rendering of a value the methodology does not have: a typo in its name
        raise DataFileError(path, f"parameters_zh names parameters that parameters does not have: {', '.join(unknown)}",
                            field=f"methodology {slug}: parameters_zh")
    # Values the transcription inferred (field -> where from): each names a field this methodology states a value of.
    for key in ("inferred", "inferred_zh"):
        parsed[key] = raw.get(key) or {}
        if not isinstance(parsed[key], dict) or not all(isinstance(v, str) and v.strip() for v in parsed[key].values()):
            raise DataFileError(path, f"{key} must map field names to where the value comes from",
                                field=f"methodology {slug}: {key}")
        without = sorted(k for k in parsed[key] if parsed.get(k) in (None, "") and k not in parsed["parameters"])
        if without:
            raise DataFileError(path, f"{key} names fields without a value: {', '.join(without)}",
                                field=f"methodology {slug}: {key}")
    if set(parsed["inferred_zh"]) - set(parsed["inferred"]):
        raise DataFileError(path, "inferred_zh names fields that inferred does not", field=f"methodology {slug}: inferred_zh")
    return parsed


def _parse_row(path, label, position, cells, columns, defaults):
    if not isinstance(cells, list):
        raise DataFileError(path, "a row must be a list of cells", label, position)
    if len(cells) != len(columns):
        raise DataFileError(path, f"{len(cells)} cells for {len(columns)} columns ({', '.join(columns)})",
                            label, position)
    by_column = dict(zip(columns, cells))
    values = {key: _text(path, by_column.get(key, defaults.get(key)), key, label, position)
              for key in IDENTITY_COLUMNS}
    for key in ["engine", "vcpus", "memory_gb"]:
        if not values[key]:
            raise DataFileError(path, "missing value", label, position, key)
    for key in ["vcpus", "memory_gb"]:
        try:
            values[key] = parse_number(values[key], "int")
        except ValueError as exc:
            raise DataFileError(path, str(exc), label, position, key) from None
    if values["vcpus"] == 0:
        raise DataFileError(path, "vCPUs must be at least 1", label, position, "vcpus")
    if values["memory_ratio"] and not MEMORY_RATIO_RE.match(values["memory_ratio"]):
        raise DataFileError(path, f"memory ratio must look like 1:N, got {values['memory_ratio']!r}",
                            label, position, "memory_ratio")
    if values["deployment"] not in ("", *Deployment.values):
        raise DataFileError(path, f"deployment must be ha, single or empty, got {values['deployment']!r}",
                            label, position, "deployment")
    unknown_editions = set(filter(None, values["edition"].split("+"))) - EDITIONS
    if unknown_editions:
        raise DataFileError(path, f"unknown edition {', '.join(sorted(unknown_editions))!r} "
                            f"(use {', '.join(sorted(EDITIONS))}, joined by +)", label, position, "edition")
    metrics, on_disk = {}, False
    for metric in METRICS:
        printed = _text(path, by_column.get(metric.name), metric.name, label, position)
        if metric.name == "iops" and printed == "disk":
            on_disk = True
            continue
        if not printed:
            continue
        try:
            metrics[metric.name] = (parse_number(printed, metric.kind), printed)
        except ValueError as exc:
            raise DataFileError(path, str(exc), label, position, metric.name) from None
    return ParsedRow(position, values, metrics, on_disk)


MEASUREMENT_NUMBERS = ("stdev", "cv", "tps_ci_low", "tps_ci_high")


def _measured(text, may_be_negative=False):
    """A measured figure as the drafting wrote it (a float's digits, not a printed cell): finite, and not negative but
    for an interval's low end (few runs far apart put the t interval's low end below zero: kept as computed)."""
    value = float(str(text))
    if not math.isfinite(value) or (value < 0 and not may_be_negative):
        raise ValueError(f"not a measured figure: {text!r}")
    return value


MEASUREMENT_FLAGS = ("client_bound", "client_bound_cause", "other_load_runs", "other_load_acknowledged_by",
                     "latency_caveat")
CLIENT_BOUND_CAUSES = ("shared_host", "client_cpu")


def _parse_measurement(path, label, position, raw):
    """An internal edition's row's series (whitepaper/data/README.md, `measurements`): its runs' TPS as measured,
    n, the standard deviation, the coefficient of variation and the 95 % interval of the mean, as the drafting
    computed them (runs/stats.py), and the interval's method, with the runs' flags (client-bound and why, the runs
    whose server saw other load and who acknowledged it, a latency caveat); stored as the row's Measurement."""
    where = "measurements"
    if not isinstance(raw, dict) or set(raw) - {"n", "tps_runs", "method", *MEASUREMENT_NUMBERS, *MEASUREMENT_FLAGS}:
        raise DataFileError(path, "a measurement is a mapping of n, tps_runs, stdev, cv, tps_ci_low, tps_ci_high, method "
                            "and the flags " + ", ".join(MEASUREMENT_FLAGS), label, position, where)
    try:
        n = parse_number(_text(path, raw.get("n"), "n", label, position), "int")
        runs = [_measured(v) for v in raw.get("tps_runs") or []]
        numbers = {k: _measured(raw[k], may_be_negative=k == "tps_ci_low") if raw.get(k) not in (None, "") else None
                   for k in MEASUREMENT_NUMBERS}
    except (ValueError, TypeError) as exc:
        raise DataFileError(path, str(exc), label, position, where) from None
    if n < 1 or len(runs) != n:
        raise DataFileError(path, f"n ({n}) must be at least 1 and count tps_runs ({len(runs)})", label, position, where)
    method = _text(path, raw.get("method"), "method", label, position)
    low, high = numbers["tps_ci_low"], numbers["tps_ci_high"]
    repeats = {"runs": [], "tps": runs, "n": n, "mean": round(sum(runs) / n, 2), "stdev": numbers["stdev"],
               "cv": numbers["cv"], "ci_low": low, "ci_high": high, "method": method}
    tps_ci = {"low": low, "high": high, "n": n, "cv": numbers["cv"], "method": method} if low is not None else None
    return Measurement(n=n, tps_ci=tps_ci, repeats=repeats, **_measurement_flags(path, label, position, raw)).to_json()


def _measurement_flags(path, label, position, raw):
    """A measurement's flags, each checked: a row whose runs saw other load on the server is imported only with who
    acknowledged it, as a run is published only acknowledged (runs/publish.py)."""
    def text(key):
        return _text(path, raw.get(key), f"measurements.{key}", label, position)

    bound = text("client_bound")
    if bound not in ("", "true", "false"):
        raise DataFileError(path, f"client_bound is true, false or empty, not {bound!r}", label, position,
                            "measurements.client_bound")
    cause = text("client_bound_cause")
    if cause and (bound != "true" or cause not in CLIENT_BOUND_CAUSES):
        raise DataFileError(path, f"client_bound_cause is one of {', '.join(CLIENT_BOUND_CAUSES)}, for a client-bound "
                            f"row only, not {cause!r}", label, position, "measurements.client_bound_cause")
    other, who = raw.get("other_load_runs") or [], text("other_load_acknowledged_by")
    if not isinstance(other, list) or not all(str(v).isdigit() for v in other):
        raise DataFileError(path, "other_load_runs is a list of run numbers", label, position, "measurements.other_load_runs")
    if other and not who:
        raise DataFileError(path, "the server saw other load during these runs: other_load_acknowledged_by must say who "
                            "acknowledged it", label, position, "measurements.other_load_acknowledged_by")
    return {"client_bound": {"true": True, "false": False}.get(bound), "client_bound_cause": cause or None,
            "other_load": {"steps": [], "runs": [int(v) for v in other], "acknowledged": True, "acknowledged_by": who}
            if other else None,
            "latency_caveat": text("latency_caveat")}


def _parse_table(path, position, raw, methodology_slugs):
    if not isinstance(raw, dict):
        raise DataFileError(path, "each table must be a mapping", field="tables")
    label = _text(path, raw.get("label"), "label")
    for key in REQUIRED_TABLE_KEYS:
        if raw.get(key) in (None, ""):
            raise DataFileError(path, "missing", label or f"#{position}", field=key)
    columns = raw["columns"]
    if not isinstance(columns, list) or not columns:
        raise DataFileError(path, "columns must be a non-empty list", label, field="columns")
    unknown = [c for c in columns if c not in KNOWN_COLUMNS]
    if unknown:
        raise DataFileError(path, f"unknown column {unknown[0]!r}", label, field="columns")
    if len(set(columns)) != len(columns):
        raise DataFileError(path, "a column is listed twice", label, field="columns")
    methodology = _text(path, raw.get("methodology"), "methodology", label)
    if methodology not in methodology_slugs:
        raise DataFileError(path, f"unknown methodology {methodology!r}", label, field="methodology")
    if not isinstance(raw["rows"], list):
        raise DataFileError(path, "rows must be a list", label, field="rows")
    defaults = {key: raw.get(key) for key in TABLE_LEVEL_KEYS}
    table = ParsedTable(position, label, _text(path, raw.get("label_printed"), "label_printed", label) != "false",
                        _text(path, raw.get("section"), "section", label), methodology, columns,
                        _text(path, raw.get("notes"), "notes", label),
                        _text(path, raw.get("label_en"), "label_en", label),
                        _text(path, raw.get("section_en"), "section_en", label),
                        _text(path, raw.get("notes_zh"), "notes_zh", label),
                        _text(path, raw.get("heading"), "heading", label),
                        _text(path, raw.get("heading_en"), "heading_en", label),
                        _text(path, raw.get("version_example"), "version_example", label) == "true")
    measurements = raw.get("measurements")
    if measurements is not None and (not isinstance(measurements, list) or len(measurements) != len(raw["rows"])):
        raise DataFileError(path, "measurements must be a list with one entry per row", label, field="measurements")
    seen = {}
    for row_position, cells in enumerate(raw["rows"], start=1):
        row = _parse_row(path, label, row_position, cells, columns, defaults)
        if measurements is not None:
            row.measurement = _parse_measurement(path, label, row_position, measurements[row_position - 1])
        key = tuple(row.values.get(k, row.metrics.get(k, (None,))[0]) for k in ROW_IDENTITY)
        if key in seen:
            raise DataFileError(path, f"duplicate row: same flavour and conditions as row {seen[key]}",
                                label, row_position)
        seen[key] = row_position
        table.rows.append(row)
    return table


def parse_document_file(path):
    path = Path(path)
    data = load_yaml(path)
    for key in ["document", "methodologies", "tables"]:
        if key not in data:
            raise DataFileError(path, "missing section", field=key)
    document = data["document"]
    if not isinstance(document, dict):
        raise DataFileError(path, "document must be a mapping", field="document")
    for key in REQUIRED_DOCUMENT_KEYS:
        if not _text(path, document.get(key), f"document.{key}"):
            raise DataFileError(path, "missing", field=f"document.{key}")
    try:
        published = datetime.date.fromisoformat(document["published"])
    except ValueError:
        raise DataFileError(path, f"not a YYYY-MM-DD date: {document['published']!r}",
                            field="document.published") from None
    doc = {key: _text(path, document.get(key), f"document.{key}")
           for key in ["slug", "vendor", "title", "title_en", "edition", "language", "source_file", "notes", "notes_zh"]}
    doc["published"] = published
    doc["language"] = doc["language"] or "zh-hans"
    if not isinstance(data["methodologies"], list) or not isinstance(data["tables"], list):
        raise DataFileError(path, "methodologies and tables must be lists", field="methodologies/tables")
    methodologies = [_parse_methodology(path, m) for m in data["methodologies"]]
    slugs = [m["slug"] for m in methodologies]
    if len(set(slugs)) != len(slugs):
        raise DataFileError(path, "a methodology slug is used twice", field="methodologies.slug")
    tables = [_parse_table(path, i, t, set(slugs)) for i, t in enumerate(data["tables"], start=1)]
    labels = [t.label for t in tables]
    duplicate = next((label for label in labels if labels.count(label) > 1), None)
    if duplicate:
        raise DataFileError(path, "two tables have the same label", duplicate, field="label")
    return ParsedDocument(path, doc, methodologies, tables)


def bundled_files():
    return sorted(p for p in DATA_DIR.glob("*.yaml") if not p.name.startswith("_"))


# --- writing to the database ------------------------------------------------------------------


@dataclass
class ImportReport:
    document: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0

    @property
    def changed(self):
        return bool(self.created or self.updated or self.deleted)

    def __str__(self):
        return (f"{self.document}: {self.created} created, {self.updated} updated, "
                f"{self.unchanged} unchanged, {self.deleted} deleted")


def _sync(report, model, lookup, values):
    """get-or-create `model` by `lookup`, updating `values` only when they differ."""
    obj = model.objects.filter(**lookup).first()
    if obj is None:
        report.created += 1
        return model.objects.create(**lookup, **values)
    changed = [k for k, v in values.items() if getattr(obj, k) != v]
    if changed:
        for k in changed:
            setattr(obj, k, values[k])
        obj.save(update_fields=changed)
        report.updated += 1
    else:
        report.unchanged += 1
    return obj


def sync_vocabulary(path=VOCABULARY_FILE):
    data = load_yaml(path)
    report = ImportReport(str(path))
    for v in data.get("vendors", []):
        _sync(report, Vendor, {"slug": v["slug"]}, {"name": v["name"], "name_zh": v.get("name_zh", "")})
    for e in data.get("engines", []):
        _sync(report, Engine, {"slug": e["slug"]}, {"name": e["name"]})
    vendors = {v.slug: v for v in Vendor.objects.all()}
    for f in data.get("families", []):
        if f["vendor"] not in vendors:
            raise DataFileError(path, f"unknown vendor {f['vendor']!r}", field="families.vendor")
        _sync(report, InstanceFamily, {"vendor": vendors[f["vendor"]], "slug": f["slug"]},
              {"name": f["name"], "name_zh": f.get("name_zh", ""), "arch": f.get("arch", "x86")})
    return report


def _resolve(parsed, path):
    """Look up the vocabulary the document names; unknown names are errors, not new rows."""
    try:
        vendor = Vendor.objects.get(slug=parsed.document["vendor"])
    except Vendor.DoesNotExist:
        raise DataFileError(path, f"unknown vendor {parsed.document['vendor']!r}", field="document.vendor") from None
    engines = {e.slug: e for e in Engine.objects.all()}
    families = {f.slug: f for f in InstanceFamily.objects.filter(vendor=vendor)}
    for table in parsed.tables:
        for row in table.rows:
            if row.values["engine"] not in engines:
                raise DataFileError(path, f"unknown engine {row.values['engine']!r}", table.label, row.position,
                                    "engine")
            if row.values["family"] and row.values["family"] not in families:
                raise DataFileError(path, f"unknown family {row.values['family']!r} for vendor {vendor.slug}",
                                    table.label, row.position, "family")
    return vendor, engines, families


@transaction.atomic
def import_document(parsed):
    """Write one parsed document; everything or nothing."""
    with newest.batch():  # is_newest: one refresh for the document, in its transaction
        report = _import_document(parsed)
    if report.changed:  # news for webhooks (sent once this transaction commits); a re-import changing nothing is none
        webhooks.emit("document.imported", lambda: document_event(report))
    return report


def document_event(report):
    document = Document.objects.select_related("vendor").get(slug=report.document)
    """A document.imported payload's data: the document, what the import changed, where to read it."""
    return {"document": document.slug, "vendor": document.vendor.slug, "title": document.title,
            "published": document.published.isoformat(), "created": report.created, "updated": report.updated,
            "deleted": report.deleted, "url": webhooks.absolute(reverse("v1:document-detail", args=[document.slug])),
            "html_url": webhooks.absolute(document.get_absolute_url())}


def _import_document(parsed):
    path = parsed.path
    vendor, engines, families = _resolve(parsed, path)
    report = ImportReport(parsed.document["slug"])
    doc_values = {k: v for k, v in parsed.document.items() if k not in ("slug", "vendor")}
    document = _sync(report, Document, {"slug": parsed.document["slug"]}, {"vendor": vendor, **doc_values})

    methodologies = {}
    for m in parsed.methodologies:
        other = Methodology.objects.filter(slug=m["slug"]).exclude(document=document).first()
        if other:
            raise DataFileError(path, f"methodology slug {m['slug']!r} already belongs to {other.document.slug}",
                                field="methodologies.slug")
        values = {k: v for k, v in m.items() if k != "slug"}
        methodologies[m["slug"]] = _sync(report, Methodology, {"slug": m["slug"]}, {"document": document, **values})

    kept_tables, kept_results = [], []
    # Free positions and labels first so reordered tables never collide with the unique constraints.
    for table in parsed.tables:
        existing = ResultTable.objects.filter(document=document, label=table.label).first()
        clash = ResultTable.objects.filter(document=document, position=table.position).exclude(label=table.label)
        if clash.exists():
            clash.update(position=10**6 + table.position)
        values = {"position": table.position, "label_printed": table.label_printed, "section": table.section,
                  "methodology": methodologies[table.methodology], "columns": table.columns, "notes": table.notes,
                  "label_en": table.label_en, "section_en": table.section_en, "notes_zh": table.notes_zh,
                  "heading": table.heading, "heading_en": table.heading_en, "version_example": table.version_example}
        if existing is None:
            report.created += 1
            table_obj = ResultTable.objects.create(document=document, label=table.label, **values)
        else:
            table_obj = _sync(report, ResultTable, {"pk": existing.pk}, values)
        kept_tables.append(table_obj.pk)
        for row in table.rows:
            kept_results.append(_import_row(report, vendor, engines, families, table_obj, row).pk)

    stale_results = PublishedResult.objects.filter(table__document=document).exclude(pk__in=kept_results)
    stale_tables = ResultTable.objects.filter(document=document).exclude(pk__in=kept_tables)
    stale_methodologies = Methodology.objects.filter(document=document).exclude(slug__in=methodologies)
    for stale in (stale_results, stale_tables, stale_methodologies):
        report.deleted += stale.count()
        stale.delete()
    if report.changed:  # saves and deletes bump it themselves; this covers the bulk position moves above
        touch(Document.objects.filter(pk=document.pk))
        order_key.refresh(PublishedResult.objects.filter(table__document=document))  # and the moves' order keys
    return report


def _import_row(report, vendor, engines, families, table_obj, row):
    v = row.values
    version, _ = EngineVersion.objects.get_or_create(engine=engines[v["engine"]], version=v["version"])
    flavor, _ = Flavor.objects.get_or_create(
        vendor=vendor, family=families.get(v["family"]) if v["family"] else None, spec_code=v["flavor"],
        vcpus=v["vcpus"], memory_gb=v["memory_gb"], storage=v["storage"], memory_ratio=v["memory_ratio"],
    )
    values = {
        "engine_version": version, "flavor": flavor, "deployment": v["deployment"], "edition": v["edition"],
        "iops_depends_on_disk": row.iops_depends_on_disk, "measurement": row.measurement,
        "printed": {name: printed for name, (_, printed) in row.metrics.items()},
        **{m.name: row.metrics.get(m.name, (None,))[0] for m in METRICS},
    }
    existing = PublishedResult.objects.filter(table=table_obj, position=row.position).first()
    if existing is None:
        report.created += 1
        return PublishedResult.objects.create(table=table_obj, position=row.position, **values)
    return _sync(report, PublishedResult, {"pk": existing.pk}, values)


def import_files(paths):
    """Parse and check every file first, then import each document in its own transaction: a bad file
    found before writing stops the whole command with nothing changed."""
    parsed = [parse_document_file(p) for p in paths]
    for document in parsed:
        _resolve(document, document.path)
    reports = [import_document(p) for p in parsed]
    prune_unused_vocabulary()
    return reports


def prune_unused_vocabulary():
    """Drop engine versions and flavours no result uses any more (an edit renamed them); keep any that
    something else (a benchmark target, say) still refers to."""
    for model in (EngineVersion, Flavor):
        for obj in model.objects.filter(results__isnull=True):
            try:
                with transaction.atomic():
                    obj.delete()
            except ProtectedError:
                pass


# --- what an import would change (dry run): reads only ------------------------------------------


@dataclass
class ImportPlan:
    """What importing one parsed document would change, as lines a person reads before importing."""

    document: str
    is_new: bool = False
    document_changes: list = field(default_factory=list)  # [(field, old, new)]
    tables: dict = field(default_factory=lambda: {"created": [], "changed": [], "deleted": []})
    rows: dict = field(default_factory=lambda: {"created": [], "changed": [], "deleted": []})  # [(table, pos, text)]
    unchanged_rows: int = 0

    @property
    def changed(self):
        return self.is_new or bool(self.document_changes) or any(self.tables.values()) or any(self.rows.values())

    def summary(self):
        return "\n".join(self.lines()[: 3 + len(self.document_changes)])

    def details(self):
        return "\n".join(self.lines()[3 + len(self.document_changes):])

    def lines(self):
        head = "new document" if self.is_new else ("changed" if self.changed else "unchanged")
        out = [f"{self.document}: {head}"]
        out += [f"  document {name}: {old!r} -> {new!r}" for name, old, new in self.document_changes]
        out.append("  tables: " + ", ".join(f"{len(v)} {k}" for k, v in self.tables.items()))
        out.append("  rows: " + ", ".join(f"{len(v)} {k}" for k, v in self.rows.items())
                   + f", {self.unchanged_rows} unchanged")
        for kind, sign in (("created", "+"), ("changed", "~"), ("deleted", "-")):
            out += [f"  {sign} table {label!r}" for label in self.tables[kind]]
        for kind, sign in (("created", "+"), ("changed", "~"), ("deleted", "-")):
            out += [f"  {sign} {label!r} row {position}: {text}" for label, position, text in self.rows[kind]]
        return out

    def __str__(self):
        return "\n".join(self.lines())


def _row_facts(values, printed, on_disk):
    """A row's identity and printed numbers as (name, value) pairs, for comparing and showing."""
    facts = [(k, str(values.get(k, "") or "")) for k in IDENTITY_COLUMNS]
    facts += [(m.name, printed.get(m.name, "")) for m in METRICS if m.name != "iops"]
    facts.append(("iops", "disk" if on_disk else printed.get("iops", "")))
    return facts


def _stored_row_facts(result):
    flavor = result.flavor
    values = {"engine": result.engine_version.engine.slug, "version": result.engine_version.version,
              "family": flavor.family.slug if flavor.family else "", "memory_ratio": flavor.memory_ratio,
              "flavor": flavor.spec_code, "vcpus": flavor.vcpus, "memory_gb": flavor.memory_gb,
              "storage": flavor.storage, "deployment": result.deployment, "edition": result.edition}
    return _row_facts(values, result.printed or {}, result.iops_depends_on_disk)


def _show(facts):
    return ", ".join(f"{k} {v}" for k, v in facts if v)


def plan_document(parsed):
    """What `import_document(parsed)` would change; writes nothing."""
    _resolve(parsed, parsed.path)
    plan = ImportPlan(parsed.document["slug"])
    document = Document.objects.filter(slug=parsed.document["slug"]).select_related("vendor").first()
    if document is None:
        plan.is_new = True
    else:
        new_values = {k: v for k, v in parsed.document.items() if k != "slug"}
        new_values["vendor"] = parsed.document["vendor"]
        for name, new in new_values.items():
            old = document.vendor.slug if name == "vendor" else getattr(document, name)
            if old != new:
                plan.document_changes.append((name, str(old), str(new)))
    for m in parsed.methodologies:  # the import's own refusal, before anything is written
        other = Methodology.objects.filter(slug=m["slug"]).exclude(document=document).first()
        if other:
            raise DataFileError(parsed.path, f"methodology slug {m['slug']!r} already belongs to "
                                f"{other.document.slug}", field="methodologies.slug")
    stored_tables = {} if document is None else {t.label: t for t in document.tables.select_related("methodology")}
    stored_rows = {}
    if document is not None:
        results = (PublishedResult.objects.filter(table__document=document)
                   .select_related("table", "engine_version__engine", "flavor__family"))
        for result in results:
            stored_rows[(result.table.label, result.position)] = result
    table_fields = ["position", "label_printed", "section", "columns", "notes", "label_en", "section_en",
                    "notes_zh", "heading", "heading_en", "version_example"]
    for table in parsed.tables:
        stored = stored_tables.get(table.label)
        if stored is None:
            plan.tables["created"].append(table.label)
        elif any(getattr(stored, f) != getattr(table, f) for f in table_fields) or \
                stored.methodology.slug != table.methodology:
            plan.tables["changed"].append(table.label)
        for row in table.rows:
            facts = _row_facts(row.values, {k: p for k, (_, p) in row.metrics.items()}, row.iops_depends_on_disk)
            old = stored_rows.pop((table.label, row.position), None)
            if old is None:
                plan.rows["created"].append((table.label, row.position, _show(facts)))
                continue
            old_facts = dict(_stored_row_facts(old))
            changes = [f"{k} {old_facts[k] or '(none)'} -> {v or '(none)'}" for k, v in facts if old_facts[k] != v]
            if changes:
                plan.rows["changed"].append((table.label, row.position, "; ".join(changes)))
            else:
                plan.unchanged_rows += 1
    plan.tables["deleted"] = [label for label in stored_tables if label not in {t.label for t in parsed.tables}]
    for (label, position), result in sorted(stored_rows.items()):
        plan.rows["deleted"].append((label, position, _show(_stored_row_facts(result))))
    return plan


def plan_files(paths):
    """The dry run of `import_files(paths)`: every file parsed and checked, nothing written."""
    return [plan_document(parse_document_file(p)) for p in paths]
