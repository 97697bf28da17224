"""The small FilterSets of the vocabulary endpoints (the results use whitepaper.filters.ResultFilter)."""

import django_filters

from ..filters import KnownValueFilter, known_values, number_filter
from ..models import Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, Vendor
from .params import updated_since_filter


class VendorParamFilter(django_filters.FilterSet):
    vendor = KnownValueFilter(field_name="vendor__slug", what="vendor", **known_values(Vendor), example="huawei",
                              help_text="Vendor slug.")


class DocumentFilter(VendorParamFilter):
    # changed_at: bumped by every write to the document or anything in it (whitepaper/freshness.py).
    updated_since = updated_since_filter("changed_at", "documents (or anything in them)")

    class Meta:
        model = Document
        fields = []


class MethodologyFilter(django_filters.FilterSet):
    document = KnownValueFilter(field_name="document__slug", what="document", **known_values(Document),
                                example="huawei-2023-08-03-rds", help_text="Document slug.")

    class Meta:
        model = Methodology
        fields = []


class EngineVersionFilter(django_filters.FilterSet):
    engine = KnownValueFilter(field_name="engine__slug", what="engine", **known_values(Engine), example="mysql",
                            help_text="Engine slug.")

    class Meta:
        model = EngineVersion
        fields = []


class FamilyFilter(VendorParamFilter):
    class Meta:
        model = InstanceFamily
        fields = []


class FlavorFilter(VendorParamFilter):
    family = KnownValueFilter(field_name="family__slug", what="instance family", **known_values(InstanceFamily),
                              example="dedicated", help_text="Instance family slug.")
    vcpus = number_filter("vcpus", field_name="vcpus")
    memory_gb = number_filter("memory_gb", field_name="memory_gb")

    class Meta:
        model = Flavor
        fields = []
