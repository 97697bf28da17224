"""The catalogue's one typed write of this dashboard's own measurements (runs -> catalogue, issue 51.4): an
internal row described (InternalResult) and written (publish_internal_result), and its retraction
(retract_internal_result). runs/publish.py builds an InternalResult from a run; its context is a
whitepaper.measurement.Measurement."""

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Max

from .measurement import Measurement
from .models import (
    INTERNAL_VENDOR_SLUG,
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

DOCUMENT_SLUG = "internal-measurements"
INTERNAL_FAMILY = {"slug": "internal-target", "name": "Internal target (declared size)", "name_zh": "内部测试实例（声明规格）"}

@dataclass(frozen=True)
class InternalMethodology:
    """The methodology of one set-up (its slug carries the set-up's key: rows of exactly that set-up share it)."""

    slug: str
    name: str
    tool: str
    tool_version: str
    workload: str
    threads: int | None
    duration_s: int | None
    report_interval_s: int | None
    tables: int | None
    rows_per_table: int | None
    client: str
    statements_per_transaction: int | None
    parameters: dict
    description: str


@dataclass(frozen=True)
class DeclaredSize:
    """A target's declared size, published under an internal flavour of it (never a vendor's family by name)."""

    vcpus: int
    memory_gb: int


@dataclass(frozen=True)
class InternalResult:
    """One row of the "Internal measurements" document: its set-up, table, engine version, flavour (the catalogue's,
    by id, or a declared size), figures (metric name -> Decimal or None), latency bound and Measurement."""

    methodology: InternalMethodology
    table_label: str
    engine: str
    version: str
    figures: dict[str, Decimal | None]
    measurement: Measurement
    flavor_id: int | None = None
    size: DeclaredSize | None = None
    latency_bound_ms: Decimal | None = None


@transaction.atomic
def publish_internal_result(spec):
    """Write `spec` (an InternalResult) as a PublishedResult, creating the internal vendor, document, methodology,
    table, engine version and flavour it needs, and return it."""
    vendor, _created = Vendor.objects.get_or_create(
        slug=INTERNAL_VENDOR_SLUG, defaults={"name": "Internal measurements", "name_zh": "内部测量"})
    document, _created = Document.objects.get_or_create(
        slug=DOCUMENT_SLUG,
        defaults={"vendor": vendor, "title": "内部测量", "title_en": "Internal measurements",
                  "published": datetime.date.today(), "language": "en",
                  "notes": "Results measured with this dashboard's benchmark runs; each row links to its run."},
    )
    m = spec.methodology
    methodology, _created = Methodology.objects.get_or_create(
        slug=m.slug,
        defaults={"document": document, "name": m.name, "tool": m.tool, "tool_version": m.tool_version,
                  "workload": m.workload, "tables": m.tables, "rows_per_table": m.rows_per_table, "threads": m.threads,
                  "duration_s": m.duration_s, "report_interval_s": m.report_interval_s, "client": m.client,
                  "statements_per_transaction": m.statements_per_transaction, "parameters": m.parameters,
                  "description": m.description},
    )
    figures = spec.figures
    table, _created = ResultTable.objects.get_or_create(
        document=document, methodology=methodology,
        defaults={"label": spec.table_label, "columns": ["flavor", "vcpus", "memory_gb", *figures],
                  "position": (document.tables.aggregate(m=Max("position"))["m"] or 0) + 1,
                  "section": "Benchmark runs"},
    )
    engine = Engine.objects.get(slug=spec.engine)
    engine_version, _created = EngineVersion.objects.get_or_create(engine=engine, version=spec.version)
    flavor_id = spec.flavor_id or _internal_flavor(vendor, spec.size).pk
    return PublishedResult.objects.create(
        table=table, position=(table.results.aggregate(m=Max("position"))["m"] or 0) + 1,
        engine_version=engine_version, flavor_id=flavor_id, deployment="", **figures,
        latency_bound_ms=spec.latency_bound_ms,
        printed={k: f"{v}" for k, v in figures.items() if v is not None},
        measurement=spec.measurement.to_json(),
    )


@transaction.atomic
def retract_internal_result(result_id):
    """Take an internal row out of the catalogue; its last row gone, the table and its set-up's methodology go too
    (the document shows no empty block)."""
    result = PublishedResult.objects.select_related("table__methodology").get(pk=result_id)
    table = result.table
    result.delete()  # whitepaper.freshness bumps the catalogue stamp: pages and ETags change at once
    if not table.results.exists():
        methodology = table.methodology
        table.delete()
        if methodology.slug.startswith("internal-") and not methodology.result_tables.exists():
            methodology.delete()


@transaction.atomic
def retract_internal_document(document_id):
    """Take a whole document of internal measurements (a campaign's edition) out of the catalogue: its rows, tables,
    methodologies and the document itself (a vendor's document is never removed here). False if it is gone."""
    document = Document.objects.filter(pk=document_id, vendor__slug=INTERNAL_VENDOR_SLUG).first()
    if document is None:
        return False
    PublishedResult.objects.filter(table__document=document).delete()  # freshness bumps the catalogue stamp
    ResultTable.objects.filter(document=document).delete()
    Methodology.objects.filter(document=document).delete()
    document.delete()
    return True


def declared_ratio(vcpus, memory_gb):
    """A declared size's CPU:memory ratio as the documents group it ("1:4"), or "" when memory is no whole multiple of
    the vCPUs (one rule for an internal flavour and a campaign's tables)."""
    return f"1:{memory_gb // vcpus}" if vcpus and memory_gb and memory_gb % vcpus == 0 and memory_gb >= vcpus else ""


def _internal_flavor(vendor, size):
    family, _created = InstanceFamily.objects.get_or_create(vendor=vendor, slug=INTERNAL_FAMILY["slug"], defaults={
        "name": INTERNAL_FAMILY["name"], "name_zh": INTERNAL_FAMILY["name_zh"]})
    vcpus, memory = size.vcpus, size.memory_gb
    ratio = declared_ratio(vcpus, memory)
    flavor, _created = Flavor.objects.get_or_create(vendor=vendor, family=family, spec_code="", vcpus=vcpus,
                                                    memory_gb=memory, storage="", memory_ratio=ratio)
    return flavor
