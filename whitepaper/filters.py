"""One FilterSet for published results, shared by the flavour explorer and the API.

Every parameter is validated: a value the catalogue does not know (engine=oracle), a malformed
number (min_tps=abc, vcpus=1.5) or a malformed boolean (latest=maybe) is an error naming the
parameter, never an empty list or a silently ignored filter. An invalid FilterSet filters to nothing
(`.qs` is empty), so a caller that forgets `is_valid()` never gets a wider answer than it asked for.
"""

import re
from decimal import Decimal

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from config.pagination import ASCII_WHOLE_NUMBER

from .metrics import EXPLORER_METRICS, METRICS_BY_NAME
from .models import (MEMORY_RATIO_RE, Deployment, Document, Engine, Flavor, InstanceFamily,
                     Methodology, PublishedResult, Vendor, memory_ratio_q)
from .queries import NOT_STATED, InIdSubquery, from_param

MAX_INTEGER = 2**31 - 1  # PostgreSQL integer
MAX_BIG_INTEGER = 2**63 - 1  # PostgreSQL bigint (row counts: 50亿 = 5,000,000,000)
MAX_DECIMAL = Decimal("1e14")  # DecimalField(max_digits=16, decimal_places=2)
TRUE_VALUES = {"true", "1", "yes", "on"}
FALSE_VALUES = {"false", "0", "no", "off"}


# --- Known values (slugs, versions, ratios) -------------------------------------------------------

class ListWidget(forms.TextInput):
    """Every value of a repeated parameter (`?engine=mysql&engine=postgresql`), empty ones dropped; a
    plain dict (compare's series, sizing) may give one value or a list."""

    def value_from_datadict(self, data, files, name):
        if hasattr(data, "getlist"):
            values = data.getlist(name)
        else:
            value = data.get(name)
            values = list(value) if isinstance(value, (list, tuple)) else [value]
        return [v for v in values if v not in (None, "")]


class KnownValueField(forms.Field):
    """One or several strings (a repeated parameter), each naming something the catalogue has (one
    indexed EXISTS query each). `known=None`: the FilterSet's form checks them (engine and version,
    against one query for both). Cleans to the list of values ([] when absent)."""

    widget = ListWidget
    max_length = 200

    def __init__(self, *args, known=None, what=_("value"), max_length=None, **kwargs):
        kwargs.pop("empty_value", None)
        super().__init__(*args, **kwargs)
        self.known, self.what = known, what

    def to_python(self, value):
        if value in (None, ""):
            return []
        return [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]

    def validate(self, value):
        super().validate(value)
        for item in value:
            MaxLengthValidator(self.max_length)(item)  # Django's own (translated) message
            if "\x00" in item:  # before the lookup: PostgreSQL rejects NUL in text
                raise ValidationError(_("Null characters are not allowed."), code="null_characters_not_allowed")
            if self.known is not None and not self.known(item):
                raise unknown(self.what, item)


def unknown(what, value):
    return ValidationError(_("Unknown %(what)s %(value)r."), code="unknown", params={"what": what, "value": value})


class KnownValueFilter(django_filters.CharFilter):
    """A filter on one or several values (repeated parameter: any of them), each of which must exist
    (`known(value) -> bool`). The OpenAPI schema declares a plain string with an `example` (the values
    grow with the catalogue: an enum would change the schema on every import and make generated
    clients reject new values); `enum` only for a fixed vocabulary of the code (deployment), `pattern`
    where the form is fixed (memory ratio 1:N)."""

    field_class = KnownValueField
    repeatable = True

    def __init__(self, *args, example=None, enum=None, pattern=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.example, self.enum, self.pattern = example, enum, pattern

    @property
    def _spectacular_annotation(self):  # read by drf-spectacular when it builds the schema
        item = {"type": "string", "minLength": 1, "maxLength": KnownValueField.max_length}
        if self.enum:
            item["enum"] = list(self.enum)
        if self.pattern:
            item["pattern"] = self.pattern
        description = str(self.extra.get("help_text") or self.label) + " Repeat the parameter for several (any of them)."
        field = {"type": "array", "items": item, "description": description}
        if self.example is not None:
            field["example"] = [self.example]
        return {"field": field}

    def filter(self, qs, value):
        if not value:
            return qs
        return qs.filter(**{f"{self.field_name}__in": value})


def known_values(model, field="slug"):
    """`known` for a KnownValueFilter whose values are `model.field`."""
    return {"known": lambda value: model.objects.filter(**{field: value}).exists()}


class NotStatedFilter(KnownValueFilter):
    """A version or family: '-' (queries.NOT_STATED) selects the results whose document names none,
    and is always a valid value (no such result: an empty answer, not an error). `not_stated` is
    the lookup meaning "none stated", relative to the filtered model. The one place filters read '-'."""

    def __init__(self, *args, not_stated, known=None, **kwargs):
        def known_or_not_stated(value):
            return value == NOT_STATED or known(value)

        super().__init__(*args, known=known_or_not_stated if known else None, **kwargs)
        self.not_stated = not_stated

    def lookup(self, value, strip=""):
        """The lookup for `value` ({field: value} or the not-stated lookup), paths without `strip`."""
        if value == NOT_STATED:
            return {k.removeprefix(strip): v for k, v in self.not_stated.items()}
        return {f"{self.field_name.removeprefix(strip)}__{self.lookup_expr}": value}

    def q(self, values, strip=""):
        """Q for any of `values` (each a value or '-'), paths without `strip`."""
        q = Q()
        for value in values:
            q |= Q(**self.lookup(value, strip))
        return q

    def filter(self, qs, value):
        if not value:
            return qs
        return qs.filter(self.q(value))


# --- Numbers and booleans ------------------------------------------------------------------------

class SchemaMixin:
    """The parameter's OpenAPI schema (bounds included, so generated clients and fuzzers send valid values)."""

    schema = {}

    @property
    def _spectacular_annotation(self):
        return {"field": {**self.schema, "description": str(self.extra.get("help_text") or self.label)}}


# Numbers in a query string are written as JSON writes them: ASCII digits, no sign (not even "-0"), no
# spaces, no leading zeros, a decimal point and exponent for decimals. Python's int() and Decimal() also read
# "１６", "١٦", "+16", " 16" and "016" as 16: a URL that names a number one way in the cache and another way in a log.
ASCII_DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def check_ascii_number(value, pattern, message):
    if value not in (None, "") and not pattern.fullmatch(str(value)):
        raise ValidationError(message, code="invalid")


class AsciiIntegerField(forms.IntegerField):
    def to_python(self, value):
        check_ascii_number(value, ASCII_WHOLE_NUMBER, _("Enter a whole number in ASCII digits (0-9), without a sign "
                                                         "or leading zeros."))
        return super().to_python(value)


class IntegerFilter(SchemaMixin, django_filters.NumberFilter):
    field_class = AsciiIntegerField

    def get_max_validator(self):
        return None  # max_value says it (django-filter adds 1e50 besides)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_INTEGER)
        super().__init__(*args, **kwargs)

    schema = {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER}


class BoundedDecimalField(forms.DecimalField):
    def to_python(self, value):
        check_ascii_number(value, ASCII_DECIMAL, _("Enter a number in ASCII digits (0-9), as JSON writes it: "
                                                   "no sign, no leading zeros."))
        return super().to_python(value)

    def validate(self, value):
        super().validate(value)
        # Keep the value something PostgreSQL's numeric can compare (at most 16383 digits after the point:
        # 1E-99999 cannot be represented; any JSON/float number, down to 5e-324, can).
        if value is not None and value != 0 and value.adjusted() < -16000:
            raise ValidationError(_("Too small to be a measurement; use 0."), code="too_small")


class DecimalFilter(SchemaMixin, django_filters.NumberFilter):
    field_class = BoundedDecimalField

    def get_max_validator(self):
        return None  # max_value says it (django-filter adds 1e50 besides: two limits for 1e400)

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

# The numbers the results filter on: name -> (field, unit, kind: "int", "rows" (bigint) or "decimal").
NUMBER_FIELDS = {
    "vcpus": ("flavor__vcpus", "vCPUs", "int"),
    "memory_gb": ("flavor__memory_gb", "GB", "int"),
    **{name: (name, METRICS_BY_NAME[name].unit, METRICS_BY_NAME[name].kind) for name in EXPLORER_METRICS},
}


class BigIntegerFilter(IntegerFilter):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_value", MAX_BIG_INTEGER)
        super().__init__(*args, **kwargs)

    schema = {"type": "integer", "format": "int64", "minimum": 0, "maximum": MAX_BIG_INTEGER}


def number_filter(name, lookup_expr="exact", field_name=None):
    """An exact, minimum (gte) or maximum (lte) filter on a size or a metric of a result, with its
    unit (`field_name`: the path from another model)."""
    path, unit, kind = NUMBER_FIELDS[name]
    what = {"exact": "Exactly this", "gte": "Minimum", "lte": "Maximum"}[lookup_expr]
    filter_class = {"int": IntegerFilter, "rows": BigIntegerFilter, "decimal": DecimalFilter}[kind]
    return filter_class(field_name=field_name or path, lookup_expr=lookup_expr, label=f"{what} {name} ({unit})")


class ResultFilterForm(forms.Form):
    """Checks engine and version together against one query of the catalogue's (engine, version) pairs."""

    def engine_versions(self):
        """(engine slug, version, version id) for every engine (version None for an engine without any)."""
        if not hasattr(self, "_engine_versions"):
            self._engine_versions = list(Engine.objects.order_by().values_list("slug", "versions__version",
                                                                               "versions__id"))
        return self._engine_versions

    def clean_engine(self):
        engines = self.cleaned_data.get("engine") or []
        for engine in engines:
            if not any(slug == engine for slug, _v, _pk in self.engine_versions()):
                raise unknown(_("engine"), engine)
        return engines

    def clean_version(self):
        versions = self.cleaned_data.get("version") or []
        for version in versions:
            stored = from_param(version)  # '-' (not stated) is always valid, like family=-
            if stored and not any(pk is not None and name == stored for _s, name, pk in self.engine_versions()):
                raise unknown(_("version"), version)
        return versions


class ResultFilter(django_filters.FilterSet):
    vendor = KnownValueFilter(
        field_name="table__document__vendor__slug", label="Vendor slug", what=_("vendor"),
        **known_values(Vendor), example="huawei",
        help_text="Vendor slug (see /api/v1/vendors/), e.g. huawei.")
    document = KnownValueFilter(
        field_name="table__document__slug", label="Document slug", what=_("document"),
        **known_values(Document), example="huawei-2023-08-03-rds",
        help_text="Document slug (see /api/v1/documents/), e.g. huawei-2023-08-03-rds.")
    methodology = KnownValueFilter(
        field_name="table__methodology__slug", label="Methodology slug", what=_("methodology"),
        **known_values(Methodology), example="huawei-2023-08-03-rds-sysbench-mysql-c3",
        help_text="Methodology slug (see /api/v1/methodologies/).")
    engine = KnownValueFilter(
        field_name="engine_version__engine__slug", label="Engine slug", what=_("engine"),
        example="mysql",
        help_text="Engine slug (see /api/v1/engines/), e.g. mysql, postgresql, sqlserver, ppas.")
    version = NotStatedFilter(
        field_name="engine_version__version", label="Engine version, e.g. 5.7", what=_("version"),
        not_stated={"engine_version__version": ""}, example="8.0",
        help_text="Engine version as the document names it, e.g. 5.7, 8.0, 12; '-' for not stated.")
    family = NotStatedFilter(
        field_name="flavor__family__slug", label="Instance family slug", what=_("instance family"),
        not_stated={"flavor__family__isnull": True}, **known_values(InstanceFamily), example="dedicated",
        help_text="Instance family slug, e.g. general, dedicated, general-enhanced; '-' for none stated "
                  "(SQL Server).")
    memory_ratio = KnownValueFilter(
        field_name="flavor__memory_ratio", label="Memory ratio, 1:N", what=_("memory ratio"),
        known=lambda v: bool(MEMORY_RATIO_RE.match(v)) and Flavor.objects.filter(memory_ratio=v).exists(),
        example="1:4", pattern=MEMORY_RATIO_RE.pattern,
        help_text="Memory ratio as the document groups it: 1:N = N GB per vCPU.")
    deployment = KnownValueFilter(
        field_name="deployment", label="ha or single", what=_("value"),
        known=lambda v: v in Deployment.values and v != "", enum=[v for v in Deployment.values if v],
        help_text="ha (primary/standby) or single (single instance).")
    edition = KnownValueFilter(
        field_name="edition", label="SQL Server edition", what=_("edition"),
        **known_values(PublishedResult, "edition"), example="enterprise",
        help_text="SQL Server edition(s) as recorded, e.g. enterprise, enterprise+standard.")
    flavor = KnownValueFilter(
        field_name="flavor__spec_code", label="Spec code", what=_("spec code"),
        **known_values(Flavor, "spec_code"), example="mysql.x8.medium.2",
        help_text="Spec code as the document prints it, e.g. mysql.x8.medium.2.")
    vcpus = number_filter("vcpus")
    min_vcpus = number_filter("vcpus", "gte")
    max_vcpus = number_filter("vcpus", "lte")
    memory_gb = number_filter("memory_gb")
    min_memory_gb = number_filter("memory_gb", "gte")
    max_memory_gb = number_filter("memory_gb", "lte")
    # Each metric of the explorer (metrics.METRICS): its value, at least (min_) and at most (max_).
    vars().update({f"{prefix}{name}": number_filter(name, lookup) for name in EXPLORER_METRICS
                   for prefix, lookup in (("", "exact"), ("min_", "gte"), ("max_", "lte"))})
    latest = StrictBooleanFilter(method="filter_latest",
                                 label="Keep only the newest document's row per flavour and version")
    include_internal = StrictBooleanFilter(
        method="filter_include_internal", label="Include internal measurements",
        help_text="true: include this dashboard's own measurements (origin 'internal') beside the "
                  "vendor-published results; default false.")

    class Meta:
        model = PublishedResult
        fields = []
        form = ResultFilterForm

    # memory_ratio also matches flavours whose document states no ratio by the ratio derived from their
    # size (models.memory_ratio_q; the explorer, where such rows are labelled "derived"). The API keeps
    # the documents' ratios only.
    derived_ratios = False
    # Flavour filters as a literal id list (API: best plans at a million rows) or a subquery (no extra query).
    literal_flavor_ids = False

    def filter_queryset(self, queryset):
        if not self.form.is_valid():
            return queryset.none()
        data = dict(self.form.cleaned_data)
        queryset = queryset.visible(include_internal=bool(data.pop("include_internal", None)))
        engines, versions = data.pop("engine", None) or [], data.pop("version", None) or []
        if engines or versions:
            # Engine versions as literal ids (from the pairs validation already loaded): the planner can
            # then walk the (engine_version, tps) index in order and stop after a page at a million rows.
            wanted = {from_param(v) for v in versions}
            ids = [pk for slug, name, pk in self.form.engine_versions()
                   if pk is not None and (not engines or slug in engines) and (not wanted or name in wanted)]
            queryset = queryset.filter(engine_version_id__in=ids)
        # The flavour's attributes (family, size, ratio, spec code) as one set of flavour ids: counting is
        # then an index-only scan of (engine_version, flavor), with no join, at a million rows.
        flavor_filters = {name: data.pop(name) for name in list(data)
                          if data[name] not in (None, "", []) and self.filters[name].field_name.startswith("flavor__")}
        if flavor_filters:
            flavors = Flavor.objects.order_by()
            for name, value in flavor_filters.items():
                flt = self.filters[name]
                if name == "memory_ratio" and self.derived_ratios:
                    flavors = flavors.filter(memory_ratio_q(value))
                elif isinstance(flt, NotStatedFilter):
                    flavors = flavors.filter(flt.q(value, strip="flavor__"))
                elif isinstance(flt, KnownValueFilter):
                    flavors = flavors.filter(**{f"{flt.field_name.removeprefix('flavor__')}__in": value})
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
        return queryset.newest_per_variant() if value else queryset

    def filter_include_internal(self, queryset, name, value):
        return queryset  # applied first in filter_queryset: the default (absent) must exclude them too


def include_internal(params):
    """Whether a page's query string asks for internal measurements (`include_internal=true`)."""
    try:
        return bool(StrictBooleanField().clean(params.get("include_internal")))
    except ValidationError:
        return False


class ExplorerFilter(ResultFilter):
    """The explorer's filters: ResultFilter's, with derived memory ratios matching (`derived_ratios`) and a text
    search by name (`q`: spec code, family, engine, vendor; queries.matching_text)."""

    q = django_filters.CharFilter(method="filter_text", max_length=200, label="Search by name")
    derived_ratios = True

    def filter_text(self, queryset, name, value):
        return queryset.matching_text(value) if value.strip() else queryset
