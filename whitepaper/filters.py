"""One FilterSet for published results, shared by the flavour explorer and the API."""

import django_filters
from django.db.models import OuterRef, Subquery

from .models import Deployment, PublishedResult

RANGE_FIELDS = {
    "vcpus": "flavor__vcpus",
    "memory_gb": "flavor__memory_gb",
    "tps": "tps",
    "qps": "qps",
    "max_connections": "max_connections",
}


class ResultFilter(django_filters.FilterSet):
    vendor = django_filters.CharFilter(field_name="table__document__vendor__slug", label="Vendor slug")
    document = django_filters.CharFilter(field_name="table__document__slug", label="Document slug")
    engine = django_filters.CharFilter(field_name="engine_version__engine__slug", label="Engine slug")
    version = django_filters.CharFilter(field_name="engine_version__version", label="Engine version, e.g. 5.7")
    family = django_filters.CharFilter(field_name="flavor__family__slug", label="Instance family slug")
    memory_ratio = django_filters.CharFilter(field_name="flavor__memory_ratio", label="Memory ratio, 1:N")
    deployment = django_filters.ChoiceFilter(choices=Deployment.choices, label="ha or single")
    flavor = django_filters.CharFilter(field_name="flavor__spec_code", label="Spec code")
    latest = django_filters.BooleanFilter(method="filter_latest",
                                          label="Keep only the newest document's row per flavour and version")

    locals().update({
        name: django_filters.NumberFilter(field_name=path, label=f"Exactly this {name}")
        for name, path in RANGE_FIELDS.items()
    })
    locals().update({
        f"min_{name}": django_filters.NumberFilter(field_name=path, lookup_expr="gte", label=f"Minimum {name}")
        for name, path in RANGE_FIELDS.items()
    })
    locals().update({
        f"max_{name}": django_filters.NumberFilter(field_name=path, lookup_expr="lte", label=f"Maximum {name}")
        for name, path in RANGE_FIELDS.items()
    })

    class Meta:
        model = PublishedResult
        fields = []

    def filter_latest(self, queryset, name, value):
        if not value:
            return queryset
        # The newest published row for the same engine version and the same flavour size/family.
        newest = (
            PublishedResult.objects.filter(
                engine_version=OuterRef("engine_version"),
                flavor__vendor=OuterRef("flavor__vendor"),
                flavor__family=OuterRef("flavor__family"),
                flavor__vcpus=OuterRef("flavor__vcpus"),
                flavor__memory_gb=OuterRef("flavor__memory_gb"),
                flavor__spec_code=OuterRef("flavor__spec_code"),
                deployment=OuterRef("deployment"),
                edition=OuterRef("edition"),
            )
            .order_by("-table__document__published", "-table__document__slug", "position")
            .values("table__document_id")[:1]
        )
        return queryset.filter(table__document_id=Subquery(newest))
