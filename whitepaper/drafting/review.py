"""Reviewing a draft before it is imported: its rows as (unsaved) catalogue rows, the previous edition of
the same document family, and what changed from it (the one rule: whitepaper/editions.py)."""

from whitepaper import editions
from whitepaper.metrics import METRICS
from whitepaper.models import (
    Document,
    EngineVersion,
    Flavor,
    InstanceFamily,
    PublishedResult,
    ResultTable,
)


def document_family(slug):
    """'huawei-2025-10-21-mysql' -> ('huawei', 'mysql'): the vendor and what the editions are about."""
    parts = slug.split("-")
    return parts[0], "-".join(parts[4:])


def previous_edition(parsed):
    """The newest stored document of the same vendor and family published before the draft."""
    vendor, topic = document_family(parsed.document["slug"])
    candidates = (Document.objects.filter(vendor__slug=vendor, published__lt=parsed.document["published"])
                  .exclude(slug=parsed.document["slug"]).newest_first().select_related("vendor"))
    return next((d for d in candidates if document_family(d.slug) == (vendor, topic)), None)


def draft_results(parsed, vendor):
    """The draft's rows as unsaved results over the stored vocabulary. Rows of an engine version the
    catalogue does not have yet are left out: no edition can be compared with them."""
    versions = {(v.engine.slug, v.version): v for v in EngineVersion.objects.select_related("engine")}
    families = {f.slug: f for f in InstanceFamily.objects.filter(vendor=vendor)}
    document = Document(slug=parsed.document["slug"], vendor=vendor, published=parsed.document["published"],
                        title=parsed.document["title"])
    results = []
    for table in parsed.tables:
        table_obj = ResultTable(document=document, label=table.label, position=table.position)
        for row in table.rows:
            v = row.values
            version = versions.get((v["engine"], v["version"]))
            if version is None:
                continue
            flavor = Flavor(vendor=vendor, family=families.get(v["family"]), spec_code=v["flavor"], vcpus=v["vcpus"],
                            memory_gb=v["memory_gb"], storage=v["storage"], memory_ratio=v["memory_ratio"])
            results.append(PublishedResult(
                table=table_obj, position=row.position, engine_version=version, flavor=flavor,
                deployment=v["deployment"], edition=v["edition"], iops_depends_on_disk=row.iops_depends_on_disk,
                printed={name: printed for name, (_, printed) in row.metrics.items()},
                **{m.name: row.metrics.get(m.name, (None,))[0] for m in METRICS}))
    return results


def edition_diff(parsed):
    """(previous edition or None, editions.diff of its rows and the draft's)."""
    previous = previous_edition(parsed)
    if previous is None:
        return None, []
    old = list(PublishedResult.objects.filter(table__document=previous).with_provenance().document_order())
    return previous, editions.diff(old, draft_results(parsed, previous.vendor))
