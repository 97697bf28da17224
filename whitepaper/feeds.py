"""The Atom feed of what is new in the catalogue (/feed/): vendor documents (each edition is one) and published
internal measurements, newest change first. Django's syndication framework writes the Atom; the API root links it.
A document's entry is updated whenever the document or anything in it changes (Document.changed_at); a
measurement's when its row was published or changed (PublishedResult.updated_at)."""

import datetime

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from .internal import DOCUMENT_SLUG as INTERNAL_DOCUMENT_SLUG
from .models import Document, PublishedResult

MAX_ENTRIES = 50
TAG_DATE = "2026"  # the tag URIs' date (RFC 4151): when this dashboard started minting them


def tag_uri(specific):
    """A stable entry id (RFC 4151 tag URI) from what names the entry in the catalogue (slugs and positions), not
    a database key: tag:<FEED_TAG_AUTHORITY>,2026:<specific>."""
    return f"tag:{settings.FEED_TAG_AUTHORITY},{TAG_DATE}:{specific}"


class CatalogueFeed(Feed):
    feed_type = Atom1Feed
    title = "RDS performance whitepapers: new documents and measurements"
    subtitle = ("Vendor documents (whitepapers and their new editions) and this dashboard's published internal "
                "measurements, newest change first.")
    author_name = "RDS performance dashboard"  # RFC 4287: a feed whose entries may lack one names an author

    def item_author_name(self, item):
        return item.vendor.name if isinstance(item, Document) else "RDS performance dashboard (internal measurement)"

    def link(self):
        return reverse("whitepaper:home")

    def items(self):
        # A campaign's edition is a document of its own (its vendor's name says internal); the rows published one by
        # one into "Internal measurements" are entries each.
        documents = (Document.objects.exclude(slug=INTERNAL_DOCUMENT_SLUG).select_related("vendor")
                     .order_by("-changed_at")[:MAX_ENTRIES])
        measurements = (PublishedResult.objects.filter(table__document__slug=INTERNAL_DOCUMENT_SLUG)
                        .select_related("table__document", "flavor", "engine_version__engine")
                        .order_by("-updated_at")[:MAX_ENTRIES])
        entries = [*documents, *measurements]
        return sorted(entries, key=self.item_updateddate, reverse=True)[:MAX_ENTRIES]

    def item_title(self, item):
        if isinstance(item, Document):
            edition = f", edition {item.edition}" if item.edition else ""
            english = f" ({item.title_en})" if item.title_en else ""
            return f"{item.vendor.name}: {item.title}{english}{edition}, {item.published:%Y-%m-%d}"
        tps = f": {item.printed['tps']} TPS" if item.printed.get("tps") else ""
        return (f"Internal measurement: {item.table.label}, {item.engine_version}, "
                f"{item.flavor.vcpus} vCPU / {item.flavor.memory_gb} GB{tps}")

    def item_description(self, item):
        if isinstance(item, Document):
            return f"Published {item.published:%Y-%m-%d}; {item.notes}".strip()
        return "Measured with this dashboard's benchmark runs (origin: internal), not a vendor's number."

    def item_link(self, item):
        if isinstance(item, Document):
            return item.get_absolute_url()
        return f"{item.table.document.get_absolute_url()}#table-{item.table.position}"

    def item_guid(self, item):
        if isinstance(item, Document):
            return tag_uri(f"document:{item.slug}")
        return tag_uri(f"result:{item.table.document.slug}:{item.table.position}:{item.position}")

    item_guid_is_permalink = False

    def item_updateddate(self, item):
        return item.changed_at if isinstance(item, Document) else item.updated_at

    def item_pubdate(self, item):
        """Atom's `published`: a document's publication date (midnight UTC), a measurement's publishing."""
        if isinstance(item, Document):
            return datetime.datetime.combine(item.published, datetime.time(), tzinfo=datetime.UTC)
        return item.updated_at
