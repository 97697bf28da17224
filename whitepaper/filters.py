"""One FilterSet for published results, shared by the flavour explorer and the API.

Every parameter is validated: a value the catalogue does not know (engine=oracle), a malformed
number (min_tps=abc, vcpus=1.5) or a malformed boolean (latest=maybe) is an error naming the
parameter, never an empty list or a silently ignored filter. An invalid FilterSet filters to nothing
(`.qs` is empty), so a caller that forgets `is_valid()` never gets a wider answer than it asked for.
"""

from decimal import Decimal

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db import DatabaseError
from django.db.models import BooleanField, Expression, F, OuterRef, Subquery
from django.utils.translation import gettext_lazy as _

from .metrics import METRICS_BY_NAME
from .models import (MEMORY_RATIO_RE, Deployment, Document, Engine, EngineVersion, Flavor, InstanceFamily,
                     Methodology, PublishedResult, Vendor)

RANGE_FIELDS = {
    "vcpus": "flavor__vcpus",
    "memory_gb": "flavor__memory_gb",
    "tps": "tps",
    "qps": "qps",
    "max_connections": "max_connections",
}
INTEGER_FIELDS = {"vcpus", "memory_gb", "max_connections"}
RANGE_UNITS = {"vcpus": "vCPUs", "memory_gb": "GB", **{name: METRICS_BY_NAME[name].unit for name in ("tps", "qps", "max_connections")}}
MAX_INTEGER = 2**31 - 1  # PostgreSQL integer
MAX_DECIMAL = Decimal("1e14")  # DecimalField(max_digits=16, decimal_places=2)
NOT_STATED = "-"  # version=- / family=- select results whose document names no version / family
TRUE_VALUES = {"true", "1", "yes", "on"}
FALSE_VALUES = {"false", "0", "no", "off"}


# --- Known values (slugs, versions, ratios) -------------------------------------------------------

class KnownValueField(forms.CharField):
    """A string that must name something the catalogue has (one indexed EXISTS query)."""

    def __init__(self, *args, known=None, what=_("value"), **kwargs):
        kwargs.setdefault("max_length", 200)
        super().__init__(*args, **kwargs)
        self.known, self.what = known, what

    def validate(self, value):
        super().validate(value)
        if value in self.empty_values:
            return
        if "\x00" in value:  # before the lookup: PostgreSQL rejects NUL in text
            raise ValidationError(_("Null characters are not allowed."), code="null_characters_not_allowed")
        if not self.known(value):
            raise ValidationError(_("Unknown %(what)s %(value)r."), code="unknown",
                                  params={"what": self.what, "value": value})


class KnownValueFilter(django_filters.CharFilter):
    """CharFilter whose value must exist (`known(value) -> bool`); `values()` lists the known values for
    the OpenAPI schema (an enum, so a client and a fuzzer know what is accepted)."""

    field_class = KnownValueField

    def __init__(self, *args, values=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.values = values

    @property
    def _spectacular_annotation(self):  # read by drf-spectacular when it builds the schema
        field = {"type": "string", "description": str(self.extra.get("help_text") or self.label)}
        try:
            field["enum"] = sorted(set(self.values()))
        except DatabaseError:  # no catalogue tables yet (`manage.py check` before `migrate`): no enum
            pass
        return {"field": field}


def known_values(model, field="slug"):
    """`known` and `values` for a KnownValueFilter whose values are `model.field`."""
    return {"known": lambda value: model.objects.filter(**{field: value}).exists(),
            "values": lambda: model.objects.exclude(**{field: ""}).values_list(field, flat=True).distinct()}


class VersionFilter(KnownValueFilter):
    def filter(self, qs, value):
        return super().filter(qs, "" if value == NOT_STATED else value)


class FamilyFilter(KnownValueFilter):
    def filter(self, qs, value):
        if value == NOT_STATED:
            return qs.filter(flavor__family__isnull=True)
        return super().filter(qs, value)


def _known_family(value):
    if value == NOT_STATED:
        return Flavor.objects.filter(family__isnull=True).exists()
    return InstanceFamily.objects.filter(slug=value).exists()


def _family_values():
    values = list(InstanceFamily.objects.values_list("slug", flat=True))
    return values + [NOT_STATED] if Flavor.objects.filter(family__isnull=True).exists() else values


def _known_version(value):
    return EngineVersion.objects.filter(version="" if value == NOT_STATED else value).exists()


def _version_values():
    return [v or NOT_STATED for v in EngineVersion.objects.values_list("version", flat=True).distinct()]


class InIdSubquery(Expression):
    """`column IN (subquery)`, written `column = ANY(ARRAY(subquery))` on PostgreSQL: evaluated once
    and matched in the index scan (an IN would become a join)."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, column, queryset):
        super().__init__()
        self.column, self.subquery = F(column), Subquery(queryset)

    def get_source_expressions(self):
        return [self.column, self.subquery]

    def set_source_expressions(self, expressions):
        self.column, self.subquery = expressions

    def as_sql(self, compiler, connection):
        column_sql, column_params = compiler.compile(self.column)
        subquery_sql, subquery_params = compiler.compile(self.subquery)
        template = "%s = ANY(ARRAY%s)" if connection.vendor == "postgresql" else "%s IN %s"
        return template % (column_sql, subquery_sql), (*column_params, *subquery_params)


# --- Numbers and booleans ------------------------------------------------------------------------

class SchemaMixin:
    """The parameter's OpenAPI schema (bounds included, so generated clients and fuzzers send valid values)."""

    schema = {}

    @property
    def _spectacular_annotation(self):
        return {"field": {**self.schema, "description": str(self.extra.get("help_text") or self.label)}}


class IntegerFilter(SchemaMixin, django_filters.NumberFilter):
    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_INTEGER)
        super().__init__(*args, **kwargs)

    schema = {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER}


class BoundedDecimalField(forms.DecimalField):
    def validate(self, value):
        super().validate(value)
        # Keep the value something PostgreSQL's numeric can compare (1E-99999 cannot be represented).
        if value is not None and value != 0 and value.adjusted() < -300:
            raise ValidationError(_("Too small to be a measurement; use 0."), code="too_small")


class DecimalFilter(SchemaMixin, django_filters.NumberFilter):
    field_class = BoundedDecimalField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_DECIMAL)
        super().__init__(*args, **kwargs)

    schema = {"type": "number", "minimum": 0, "maximum": float(MAX_DECIMAL)}


class StrictBooleanWidget(forms.CheckboxInput):
    """Renders as a checkbox (the explorer) but hands the raw text to the field, so 'maybe' is an error."""

    def __init__(self, attrs=None):
        super().__init__(attrs, check_test=lambda v: str(v).lower() in TRUE_VALUES or v is True)

    def value_from_datadict(self, data, files, name):
        return data.get(name)


class StrictBooleanField(forms.Field):
    widget = StrictBooleanWidget

    def to_python(self, value):
        if value in (None, "") or isinstance(value, bool):
            return value if isinstance(value, bool) else None
        text = str(value).strip().lower()
        if text in TRUE_VALUES:
            return True
        if text in FALSE_VALUES:
            return False
        raise ValidationError(_("Expected true or false, got %(value)r."), code="invalid", params={"value": value})


class StrictBooleanFilter(SchemaMixin, django_filters.BooleanFilter):
    field_class = StrictBooleanField
    schema = {"type": "boolean"}


# --- The FilterSet -------------------------------------------------------------------------------

class ResultFilter(django_filters.FilterSet):
    vendor = KnownValueFilter(
        field_name="table__document__vendor__slug", label="Vendor slug", what=_("vendor"),
        **known_values(Vendor),
        help_text="Vendor slug (see /api/v1/vendors/), e.g. huawei.")
    document = KnownValueFilter(
        field_name="table__document__slug", label="Document slug", what=_("document"),
        **known_values(Document),
        help_text="Document slug (see /api/v1/documents/).")
    methodology = KnownValueFilter(
        field_name="table__methodology__slug", label="Methodology slug", what=_("methodology"),
        **known_values(Methodology),
        help_text="Methodology slug (see /api/v1/methodologies/).")
    engine = KnownValueFilter(
        field_name="engine_version__engine__slug", label="Engine slug", what=_("engine"),
        **known_values(Engine),
        help_text="Engine slug: mysql, postgresql, sqlserver, ppas.")
    version = VersionFilter(
        field_name="engine_version__version", label="Engine version, e.g. 5.7", what=_("version"),
        known=_known_version, values=_version_values,
        help_text="Engine version as the document names it, e.g. 5.7, 8.0, 12; '-' for not stated.")
    family = FamilyFilter(
        field_name="flavor__family__slug", label="Instance family slug", what=_("instance family"),
        known=_known_family, values=_family_values,
        help_text="Instance family slug, e.g. general, dedicated, general-enhanced; '-' for none stated "
                  "(SQL Server).")
    memory_ratio = KnownValueFilter(
        field_name="flavor__memory_ratio", label="Memory ratio, 1:N", what=_("memory ratio"),
        known=lambda v: bool(MEMORY_RATIO_RE.match(v)) and Flavor.objects.filter(memory_ratio=v).exists(),
        values=lambda: Flavor.objects.exclude(memory_ratio="").values_list("memory_ratio", flat=True).distinct(),
        help_text="Memory ratio as the document groups it: 1:N = N GB per vCPU.")
    deployment = django_filters.ChoiceFilter(choices=Deployment.choices, label="ha or single",
                                             help_text="ha (primary/standby) or single (single instance).")
    edition = KnownValueFilter(
        field_name="edition", label="SQL Server edition", what=_("edition"),
        **known_values(PublishedResult, "edition"),
        help_text="SQL Server edition(s) as recorded, e.g. enterprise, enterprise+standard.")
    flavor = KnownValueFilter(
        field_name="flavor__spec_code", label="Spec code", what=_("spec code"),
        **known_values(Flavor, "spec_code"),
        help_text="Spec code as the document prints it, e.g. rds.mysql.s2.large.")
    latest = StrictBooleanFilter(method="filter_latest",
                                 label="Keep only the newest document's row per flavour and version")

    locals().update({
        name: (IntegerFilter if name in INTEGER_FIELDS else DecimalFilter)(
            field_name=path, label=f"Exactly this {name} ({RANGE_UNITS[name]})")
        for name, path in RANGE_FIELDS.items()
    })
    locals().update({
        f"min_{name}": (IntegerFilter if name in INTEGER_FIELDS else DecimalFilter)(
            field_name=path, lookup_expr="gte", label=f"Minimum {name} ({RANGE_UNITS[name]})")
        for name, path in RANGE_FIELDS.items()
    })
    locals().update({
        f"max_{name}": (IntegerFilter if name in INTEGER_FIELDS else DecimalFilter)(
            field_name=path, lookup_expr="lte", label=f"Maximum {name} ({RANGE_UNITS[name]})")
        for name, path in RANGE_FIELDS.items()
    })

    class Meta:
        model = PublishedResult
        fields = []

    # Flavour filters as a literal id list (API: best plans at a million rows) or a subquery (no extra query).
    literal_flavor_ids = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # engine and version are validated against one small query, reused to filter by id.
        self._engine_versions = None
        self.filters["engine"].extra["known"] = lambda v: any(slug == v for slug, _, _ in self.engine_versions())
        self.filters["version"].extra["known"] = lambda v: any(
            pk is not None and name == ("" if v == NOT_STATED else v) for _, name, pk in self.engine_versions())
        for name in ("engine", "version"):
            self.filters[name].__dict__.pop("_field", None)

    def engine_versions(self):
        """(engine slug, version, version id) for every engine (version None for an engine without any)."""
        if self._engine_versions is None:
            self._engine_versions = list(Engine.objects.order_by().values_list("slug", "versions__version", "versions__id"))
        return self._engine_versions

    def filter_queryset(self, queryset):
        if not self.form.is_valid():
            return queryset.none()
        data = dict(self.form.cleaned_data)
        engine, version = data.pop("engine", None) or None, data.pop("version", None) or None
        if engine or version:
            # Engine versions as literal ids (from the pairs validation already loaded): the planner can
            # then walk the (engine_version, tps) index in order and stop after a page at a million rows.
            wanted = None if version is None else ("" if version == NOT_STATED else version)
            ids = [pk for slug, name, pk in self.engine_versions()
                   if pk is not None and (not engine or slug == engine) and (wanted is None or name == wanted)]
            queryset = queryset.filter(engine_version_id__in=ids)
        # The flavour's attributes (family, size, ratio, spec code) as one set of flavour ids: counting is
        # then an index-only scan of (engine_version, flavor), with no join, at a million rows.
        flavor_filters = {name: data.pop(name) for name in list(data)
                          if data[name] not in (None, "") and self.filters[name].field_name.startswith("flavor__")}
        if flavor_filters:
            flavors = Flavor.objects.order_by()
            for name, value in flavor_filters.items():
                flt = self.filters[name]
                if name == "family" and value == NOT_STATED:
                    flavors = flavors.filter(family__isnull=True)
                else:
                    field = flt.field_name.removeprefix("flavor__")
                    flavors = flavors.filter(**{f"{field}__{flt.lookup_expr}": value})
            if self.literal_flavor_ids:  # one more (small) query; the planner then sees how few they are
                queryset = queryset.filter(flavor_id__in=list(flavors.values_list("id", flat=True)))
            else:
                queryset = queryset.filter(InIdSubquery("flavor_id", flavors.values("id")))
        for name, value in data.items():
            queryset = self.filters[name].filter(queryset, value)
        return queryset

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


# The parameters a variant of a flavour is told apart by (spec lookup and `latest`).
VARIANT_FIELDS = ["engine_version", "flavor__vendor", "flavor__family", "flavor__vcpus", "flavor__memory_gb",
                  "flavor__spec_code", "deployment", "edition"]
