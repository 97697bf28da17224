"""A flavour's sheet, one definition for its page (/flavors/<id>/) and its JSON twin (/api/v1/flavors/<id>/):
every published row of the flavour (each edition and methodology, with each row's revision by a later
edition: editions.revisions) and the rows of the same size (vCPUs and memory) in other families, engines and
vendors, each flavour's newest row per variant. Three queries whatever the number of rows."""

from dataclasses import dataclass

from . import editions
from .metrics import METRIC_NAMES
from .models import PublishedResult


@dataclass
class FlavourSheet:
    flavor: object
    results: list  # every row of the flavour, in document order, each with `revised_from` and `superseded`
    same_size: list  # the newest row per variant of other flavours of this size, smallest family/engine first

    @property
    def metrics(self):
        """The metrics the flavour's rows print (the columns its table needs)."""
        return [m for m in METRIC_NAMES if any(getattr(r, m) is not None for r in self.results)]

    @property
    def revisions(self):
        """The rows a later edition revised, newest first: (row, Revision)."""
        return [(r, r.revised_from) for r in reversed(self.results) if r.revised_from is not None]


def flavour_sheet(flavor, include_internal=False):
    visible = PublishedResult.objects.visible(include_internal)
    results = list(visible.filter(flavor=flavor).with_provenance().document_order())
    # every edition of these rows is among them (one flavour): no other query
    revised, newer = editions.revisions(results, results), editions.superseded(results, results)
    for r in results:
        r.revised_from = revised.get(r.pk)
        r.superseded = newer.get(r.pk)
    same_size = sorted(
        visible.filter(flavor__vcpus=flavor.vcpus, flavor__memory_gb=flavor.memory_gb).exclude(flavor=flavor)
        .newest_per_variant().with_provenance(),
        key=lambda r: (r.engine_version.engine.name, r.engine_version.version, r.table.document.vendor.name,
                       r.flavor.family.name if r.flavor.family else "", r.flavor.spec_code, r.pk))
    return FlavourSheet(flavor, results, same_size)
