"""Forms of the customer pages (the explorer's filters are whitepaper.filters.ResultFilter)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from . import display
from .choices import Origin
from .display import edition_name
from .filters import include_internal
from .models import Document, Engine, PublishedResult
from .sizing import SizingQuestion


class SizingForm(SizingQuestion):
    """The sizing question (sizing.SizingQuestion: its fields and rules) as the pages ask it: editions named in the
    reader's language, the vendor and document as menus."""

    def __init__(self, *args, engines=(), editions=None, vendors=None, documents=None, **kwargs):
        super().__init__(*args, engines=engines, editions=editions, **kwargs)
        if editions is not None:
            self.fields["edition"].choices = [("", _("any"))] + [(e, edition_name(e)) for e in editions]
        for name, choices in (("vendor", vendors), ("document", documents)):
            if choices is not None:  # the sizing page: a menu (any unknown value still reaches the filter, which refuses it)
                self.fields[name].widget = forms.Select(choices=[("", _("any"))] + list(choices))


def sizing_form(params):
    """The sizing question as a bound SizingForm (engines: those with published results)."""
    engines = list(Engine.objects.filter(versions__results__isnull=False).distinct())
    editions = sorted(PublishedResult.objects.exclude(edition="").order_by().values_list("edition", flat=True).distinct())
    documents = Document.objects.select_related("vendor").newest_first()
    if not include_internal(params or {}):  # the menus name internal measurements only where the answer may use them
        documents = documents.exclude(vendor__origin=Origin.INTERNAL)
    vendors = {d.vendor.slug: display.vendor_name(d.vendor) for d in documents}
    return SizingForm(params or None, engines=engines, editions=editions, vendors=sorted(vendors.items()),
                      documents=[(d.slug, f"{display.vendor_name(d.vendor)}: {display.document_short_title(d)}")
                                 for d in documents])
