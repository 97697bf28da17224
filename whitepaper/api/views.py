"""Read endpoints of the catalogue under /api/v1/ (public, throttled for anonymous clients)."""

import django_filters
from django.db.models import F, Prefetch, Window
from django.db.models.functions import Rank
from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from ..export import iter_csv_lines
from ..filters import NOT_STATED, VARIANT_FIELDS, KnownValueFilter, ResultFilter, known_values
from ..metrics import METRIC_NAMES, METRICS_BY_NAME
from ..models import (Deployment, Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, PublishedResult,
                      ResultTable, Vendor)
from . import serializers as s
from .pagination import MAX_PAGE_SIZE, CatalogPagination, positive_int_param
from .renderers import ResultCSVRenderer

ALWAYS_ALLOWED_PARAMS = {"format", "page", "page_size"}

ERROR = inline_serializer("Error", {"detail": serializers.CharField(help_text="What went wrong.")})
PARAMETER_ERRORS = OpenApiResponse(
    inline_serializer("ParameterErrors", {
        "parameter": serializers.ListField(child=serializers.CharField(), required=False,
                                           help_text="Messages about this query parameter (one key per parameter)."),
    }),
    description="A query parameter is unknown, malformed or out of range: the body maps each offending "
                "parameter to its messages, e.g. {\"min_tps\": [\"Enter a number.\"]}.",
)
THROTTLED = OpenApiResponse(
    inline_serializer("Throttled", {
        "detail": serializers.CharField(),
        "retry_after": serializers.IntegerField(help_text="Seconds to wait (also in the Retry-After header)."),
    }),
    description="Too many anonymous requests; retry after Retry-After seconds.",
)
NOT_FOUND = OpenApiResponse(ERROR, description="No such object, or a page past the last one.")
COMMON_ERRORS = {400: PARAMETER_ERRORS, 404: NOT_FOUND, 429: THROTTLED}


# --- Shared behaviour ----------------------------------------------------------------------------

class StrictParamsMixin:
    """Every query parameter is checked before anything runs, and all problems are reported at once:
    a parameter the endpoint does not know (a typo such as min_cpu), a bad filter value, a bad
    ordering field or page size -> one 400 mapping each parameter to its messages."""

    def known_params(self):
        known = set(ALWAYS_ALLOWED_PARAMS)
        filterset_class = getattr(self, "filterset_class", None)
        if filterset_class is not None and self.action == "list":
            known |= set(filterset_class.base_filters)
        if self.action == "list" and ResultOrdering in self.filter_backends:
            known.add(ResultOrdering.param)
        return known

    def parameter_errors(self, request):
        known = self.known_params()
        errors = {name: [f"Unknown parameter; this endpoint accepts: {', '.join(sorted(known))}."]
                  for name in sorted(set(request.query_params) - known)}
        if self.action != "list":
            return errors
        filterset_class = getattr(self, "filterset_class", None)
        if filterset_class is not None:
            filterset = filterset_class(request.query_params, queryset=self.get_queryset(), request=request)
            filterset.literal_flavor_ids = True
            if not filterset.is_valid():
                errors.update({name: [str(m) for m in messages] for name, messages in filterset.errors.items()})
            self.validated_filterset = filterset  # reused by ValidatedFilterBackend (no second validation)
        checks = [lambda: positive_int_param(request, "page"),
                  lambda: positive_int_param(request, "page_size", MAX_PAGE_SIZE)]
        if ResultOrdering in self.filter_backends:
            checks.append(lambda: ResultOrdering().terms(request))
        for check in checks:
            try:
                check()
            except ValidationError as exc:
                errors.update(exc.detail)
        return errors

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if any("\x00" in str(value) for value in kwargs.values()):
            raise NotFound("No such object.")  # PostgreSQL rejects NUL in text: never look it up
        errors = self.parameter_errors(request)
        if errors:
            raise ValidationError(errors)


class ValidatedFilterBackend(DjangoFilterBackend):
    """DjangoFilterBackend reusing the FilterSet the view has already validated."""

    def get_filterset(self, request, queryset, view):
        filterset = getattr(view, "validated_filterset", None)
        if filterset is None:
            return super().get_filterset(request, queryset, view)
        filterset.queryset = queryset
        return filterset


class CatalogueViewSet(StrictParamsMixin, viewsets.ReadOnlyModelViewSet):
    pagination_class = CatalogPagination
    filter_backends = [ValidatedFilterBackend]
    lookup_value_regex = "[^/]+"  # any key reaches the view, so an unknown one is a JSON 404


def not_found(request, *args, **kwargs):
    """JSON 404 for any other path under /api/v1/ (instead of Django's HTML page)."""
    return JsonResponse({"detail": f"No API endpoint at {request.path}; see /api/v1/ and /api/v1/docs/."}, status=404)


class VendorParamFilter(django_filters.FilterSet):
    vendor = KnownValueFilter(field_name="vendor__slug", what="vendor", **known_values(Vendor), help_text="Vendor slug.")


# --- Vocabulary ----------------------------------------------------------------------------------

@extend_schema_view(list=extend_schema(summary="Vendors", responses={200: s.VendorSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A vendor", responses={200: s.VendorSerializer, **COMMON_ERRORS}))
class VendorViewSet(CatalogueViewSet):
    queryset = Vendor.objects.order_by("slug")
    serializer_class = s.VendorSerializer
    lookup_field = "slug"


class DocumentFilter(VendorParamFilter):
    class Meta:
        model = Document
        fields = []


@extend_schema_view(list=extend_schema(summary="Documents (whitepapers), newest first",
                                       responses={200: s.DocumentSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A document with its tables",
                                           responses={200: s.DocumentSerializer, **COMMON_ERRORS}))
class DocumentViewSet(CatalogueViewSet):
    queryset = (Document.objects.select_related("vendor").order_by("-published", "slug")
                .prefetch_related("methodologies",
                                  Prefetch("tables", ResultTable.objects.select_related("methodology", "document")
                                           .order_by("position"))))
    serializer_class = s.DocumentSerializer
    filterset_class = DocumentFilter
    lookup_field = "slug"


class MethodologyFilter(django_filters.FilterSet):
    document = KnownValueFilter(field_name="document__slug", what="document", **known_values(Document), help_text="Document slug.")

    class Meta:
        model = Methodology
        fields = []


@extend_schema_view(list=extend_schema(summary="Methodologies (how results were measured)",
                                       responses={200: s.MethodologySerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A methodology",
                                           responses={200: s.MethodologySerializer, **COMMON_ERRORS}))
class MethodologyViewSet(CatalogueViewSet):
    queryset = Methodology.objects.select_related("document").order_by("slug")
    serializer_class = s.MethodologySerializer
    filterset_class = MethodologyFilter
    lookup_field = "slug"


@extend_schema_view(list=extend_schema(summary="Database engines with their versions",
                                       responses={200: s.EngineSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="An engine", responses={200: s.EngineSerializer, **COMMON_ERRORS}))
class EngineViewSet(CatalogueViewSet):
    queryset = Engine.objects.order_by("slug").prefetch_related(
        Prefetch("versions", EngineVersion.objects.select_related("engine").order_by("version")))
    serializer_class = s.EngineSerializer
    lookup_field = "slug"


class VersionFilter(django_filters.FilterSet):
    engine = KnownValueFilter(field_name="engine__slug", what="engine", **known_values(Engine), help_text="Engine slug.")

    class Meta:
        model = EngineVersion
        fields = []


@extend_schema_view(
    list=extend_schema(summary="Engine versions", responses={200: s.EngineVersionSerializer(many=True), **COMMON_ERRORS}),
    retrieve=extend_schema(summary="An engine version", responses={200: s.EngineVersionSerializer, **COMMON_ERRORS},
                           parameters=[OpenApiParameter("engine", str, OpenApiParameter.PATH, description="Engine slug."),
                                       OpenApiParameter("version", str, OpenApiParameter.PATH,
                                                        description="Version as named, '-' when not stated.")]))
class EngineVersionViewSet(CatalogueViewSet):
    queryset = EngineVersion.objects.select_related("engine").order_by("engine__slug", "version")
    serializer_class = s.EngineVersionSerializer
    filterset_class = VersionFilter

    def get_object(self):
        version = self.kwargs["version"]
        return get_object_or_404(self.get_queryset(), engine__slug=self.kwargs["engine"],
                                 version="" if version == NOT_STATED else version)


class FamilyFilter(VendorParamFilter):
    class Meta:
        model = InstanceFamily
        fields = []


@extend_schema_view(
    list=extend_schema(summary="Instance families", responses={200: s.FamilySerializer(many=True), **COMMON_ERRORS}),
    retrieve=extend_schema(summary="An instance family of a vendor", responses={200: s.FamilySerializer, **COMMON_ERRORS},
                           parameters=[OpenApiParameter("vendor", str, OpenApiParameter.PATH, description="Vendor slug."),
                                       OpenApiParameter("slug", str, OpenApiParameter.PATH, description="Family slug.")]))
class FamilyViewSet(CatalogueViewSet):
    queryset = InstanceFamily.objects.select_related("vendor").order_by("vendor__slug", "slug")
    serializer_class = s.FamilySerializer
    filterset_class = FamilyFilter

    def get_object(self):
        return get_object_or_404(self.get_queryset(), vendor__slug=self.kwargs["vendor"], slug=self.kwargs["slug"])


class FlavorFilter(VendorParamFilter):
    family = KnownValueFilter(field_name="family__slug", what="instance family", **known_values(InstanceFamily), help_text="Instance family slug.")
    vcpus = ResultFilter.base_filters["vcpus"].__class__(field_name="vcpus", label="Exactly this many vCPUs")
    memory_gb = ResultFilter.base_filters["memory_gb"].__class__(field_name="memory_gb", label="Exactly this memory (GB)")

    class Meta:
        model = Flavor
        fields = []


@extend_schema_view(list=extend_schema(summary="Flavours (instance sizes)",
                                       responses={200: s.FlavorSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A flavour", responses={200: s.FlavorSerializer, **COMMON_ERRORS}))
class FlavorViewSet(CatalogueViewSet):
    queryset = Flavor.objects.select_related("vendor", "family__vendor").order_by("vendor__slug", "vcpus", "memory_gb", "id")
    serializer_class = s.FlavorSerializer
    filterset_class = FlavorFilter


# --- Published results ---------------------------------------------------------------------------

ORDERING_FIELDS = {
    "id": "id",
    "published": "table__document__published",
    "vcpus": "flavor__vcpus",
    "memory_gb": "flavor__memory_gb",
    **{name: name for name in METRIC_NAMES},
}
ORDERING_UNITS = {"id": "", "published": "document date", "vcpus": "vCPUs", "memory_gb": "GB",
                  **{name: METRICS_BY_NAME[name].unit for name in METRIC_NAMES}}
DEFAULT_RESULT_ORDER = ["table_id", "position"]  # document order; served by the unique (table, position) index


class ResultOrdering(BaseFilterBackend):
    """?ordering=-tps,vcpus: any numeric field, '-' for descending; results without the number last.
    An unknown field is a 400 (DRF's OrderingFilter would ignore it)."""

    param = "ordering"

    def terms(self, request):
        raw = request.query_params.get(self.param, "")
        terms = [t.strip() for t in raw.split(",") if t.strip()]
        unknown = [t for t in terms if t.lstrip("-") not in ORDERING_FIELDS]
        if unknown or (raw and not terms):
            raise ValidationError({self.param: [
                f"Unknown ordering field {', '.join(map(repr, unknown)) or repr(raw)}; "
                f"choose from {', '.join(ORDERING_FIELDS)} (prefix '-' for descending)."]})
        return terms

    def filter_queryset(self, request, queryset, view):
        order = []
        for term in self.terms(request):
            field = F(ORDERING_FIELDS[term.lstrip("-")])
            order.append(field.desc(nulls_last=True) if term.startswith("-") else field.asc(nulls_last=True))
        return queryset.order_by(*order, *(DEFAULT_RESULT_ORDER if not order else ["id"]))

    def get_schema_operation_parameters(self, view):
        choices = [f"{prefix}{name}" for name in ORDERING_FIELDS for prefix in ("", "-")]
        return [{
            "name": self.param, "required": False, "in": "query", "style": "form", "explode": False,
            "description": "Comma-separated sort fields, '-' for descending; results without the number sort last. "
                           "Fields: " + ", ".join(f"{k} ({u})" if u else k for k, u in ORDERING_UNITS.items())
                           + ". Default: document order.",
            "schema": {"type": "array", "items": {"type": "string", "enum": choices}},
        }]


def result_queryset():
    """Results with what the serializer shows, in a fixed number of queries whatever the page size.
    The page query joins only what filters and sorting need (flavour, engine version); the small
    related objects (table, document, vendor, methodology, engine, family) come by prefetch, which keeps
    the page query's plan small and lets it stop early on an index at a million rows."""
    return PublishedResult.objects.select_related("flavor", "engine_version").prefetch_related(
        Prefetch("table", ResultTable.objects.select_related("document__vendor", "methodology")),
        "engine_version__engine", Prefetch("flavor__family", InstanceFamily.objects.select_related("vendor")),
        "flavor__vendor",
    )


CSV_RESPONSE = OpenApiResponse(OpenApiTypes.STR, description="With format=csv (or Accept: text/csv): every matching "
                               "row, not one page, with the columns of `manage.py export_results`.")


@extend_schema_view(
    list=extend_schema(
        summary="Published results (filterable, sortable; JSON pages or the whole set as CSV)",
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"],
                                     description="json (default, paginated) or csv (every matching row, the columns "
                                                 "and row order of `manage.py export_results`).")],
        responses={(200, "application/json"): s.ResultSerializer(many=True), (200, "text/csv"): CSV_RESPONSE,
                   **COMMON_ERRORS}),
    retrieve=extend_schema(summary="A published result with its provenance",
                           responses={200: s.ResultSerializer, **COMMON_ERRORS}),
)
class ResultViewSet(CatalogueViewSet):
    queryset = result_queryset()
    serializer_class = s.ResultSerializer
    filterset_class = ResultFilter
    filter_backends = [ValidatedFilterBackend, ResultOrdering]
    renderer_classes = [JSONRenderer, ResultCSVRenderer]

    def get_renderers(self):
        if self.action != "list":
            return [JSONRenderer()]
        return super().get_renderers()

    def list(self, request, *args, **kwargs):
        if request.accepted_renderer.format == "csv":
            queryset = self.filter_queryset(self.get_queryset())  # validates every parameter first
            if "ordering" not in request.query_params:
                queryset = queryset.order_by()  # export_results' row order (document order)
            response = StreamingHttpResponse(iter_csv_lines(queryset), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = 'attachment; filename="published-results.csv"'
            return response
        return super().list(request, *args, **kwargs)

    def handle_exception(self, exc):
        # Errors are JSON even when CSV was asked for.
        if getattr(self.request, "accepted_renderer", None) is not None and self.request.accepted_renderer.format == "csv":
            self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return super().handle_exception(exc)


# --- Spec lookup ---------------------------------------------------------------------------------

SPEC_REQUIRED = ["engine", "version", "family", "vcpus", "memory_gb"]
SPEC_OPTIONAL = ["vendor", "memory_ratio", "deployment", "edition", "flavor", "document", "methodology"]
# What tells two candidates apart, in the order a client should try adding them.
DISAMBIGUATORS = [("vendor", lambda r: r.table.document.vendor.slug), ("memory_ratio", lambda r: r.flavor.memory_ratio),
                  ("deployment", lambda r: r.deployment), ("edition", lambda r: r.edition),
                  ("flavor", lambda r: r.flavor.spec_code), ("document", lambda r: r.table.document.slug),
                  ("methodology", lambda r: r.table.methodology.slug)]


class SpecAnswerSerializer(serializers.Serializer):
    document = s.DocumentSummarySerializer(help_text="The document the numbers come from (the newest that publishes "
                                           "this flavour).")
    result = s.ResultSerializer()


class AmbiguousSpecSerializer(serializers.Serializer):
    detail = serializers.CharField()
    disambiguate_by = serializers.ListField(child=serializers.CharField(),
                                            help_text="Parameters whose values differ between the candidates.")
    candidates = s.ResultSerializer(many=True, help_text="The newest row of each matching variant.")


class SpecNotFoundSerializer(serializers.Serializer):
    detail = serializers.CharField()
    available = serializers.ListField(
        child=inline_serializer("Size", {"vcpus": serializers.IntegerField(), "memory_gb": serializers.IntegerField()}),
        help_text="Sizes published for this engine, version and family (empty if none).")


class SpecLookupSchema(AutoSchema):
    """The spec lookup's parameters are ResultFilter's, described when the schema is built (enums from the catalogue)."""

    def get_override_parameters(self):
        parameters = []
        for name in SPEC_REQUIRED + SPEC_OPTIONAL:
            flt = ResultFilter.base_filters[name]
            annotation = getattr(flt, "_spectacular_annotation", None)
            if annotation:
                schema = dict(annotation["field"])
                description = schema.pop("description", "")
            else:  # deployment
                schema = {"type": "string", "enum": [c for c, _ in Deployment.choices if c]}
                description = str(flt.extra.get("help_text") or flt.label)
            parameters.append(OpenApiParameter(name, type=schema, location=OpenApiParameter.QUERY,
                                               required=name in SPEC_REQUIRED, description=description))
        return parameters


class SpecLookupView(StrictParamsMixin, APIView):
    """The latest published numbers for one flavour: engine, version, family, vCPUs and memory.

    200: one answer (the newest document's row). 300 Multiple Choices: several variants match (other
    vendors, memory ratios, deployments, editions, spec codes or methodologies): add one of the
    `disambiguate_by` parameters. 404: nothing published for that flavour. 400: a missing or bad parameter.
    """

    action = "spec"
    filter_backends = []
    schema = SpecLookupSchema()

    def known_params(self):
        return set(SPEC_REQUIRED) | set(SPEC_OPTIONAL) | {"format"}

    def parameter_errors(self, request):
        errors = super().parameter_errors(request)
        params = request.query_params
        errors.update({name: ["This parameter is required."] for name in SPEC_REQUIRED if not params.get(name)})
        self.data = {name: params[name] for name in SPEC_REQUIRED + SPEC_OPTIONAL if params.get(name)}
        self.filterset = ResultFilter(self.data, queryset=result_queryset())
        self.filterset.literal_flavor_ids = True
        if not self.filterset.is_valid():
            errors.update({name: [str(m) for m in messages] for name, messages in self.filterset.errors.items()})
        return errors

    @extend_schema(
        summary="Spec lookup: the latest published numbers for a flavour",
        responses={200: SpecAnswerSerializer, 300: OpenApiResponse(AmbiguousSpecSerializer, description=(
            "Several variants match: add one of disambiguate_by.")),
            400: PARAMETER_ERRORS, 404: OpenApiResponse(SpecNotFoundSerializer, description="Nothing published."),
            429: THROTTLED},
    )
    def get(self, request):
        data, filterset = self.data, self.filterset  # validated in initial()
        # The rows of the newest document publishing each variant, ranked over the (small) set of matching rows.
        newest = (filterset.qs.annotate(rank=Window(
            Rank(), partition_by=[F(f) for f in VARIANT_FIELDS],
            order_by=[F("table__document__published").desc(), F("table__document__slug").desc()],
        )).filter(rank=1).order_by("-table__document__published", "table__document__slug", "table__position",
                                   "position"))
        candidates = list(newest[:51])
        context = {"request": request}
        if not candidates:
            return Response({"detail": self.not_found_text(data), "available": self.available(data)}, status=404)
        if len(candidates) == 1:
            result = candidates[0]
            return Response({"document": s.DocumentSummarySerializer(result.table.document, context=context).data,
                             "result": s.ResultSerializer(result, context=context).data})
        differ = [name for name, key in DISAMBIGUATORS if len({key(r) for r in candidates}) > 1]
        return Response({
            "detail": f"{len(candidates)} published variants match; add one of: {', '.join(differ)}.",
            "disambiguate_by": differ,
            "candidates": s.ResultSerializer(candidates[:50], many=True, context=context).data,
        }, status=300)

    @staticmethod
    def not_found_text(data):
        return (f"No published result for {data['engine']} {data['version']} {data['family']} with "
                f"{data['vcpus']} vCPUs and {data['memory_gb']} GB"
                + "".join(f", {k}={data[k]}" for k in SPEC_OPTIONAL if k in data) + ".")

    @staticmethod
    def available(data):
        sizes = ResultFilter({k: data[k] for k in ("engine", "version", "family")}, queryset=PublishedResult.objects.all())
        return [{"vcpus": v, "memory_gb": m} for v, m in
                sizes.qs.order_by().values_list("flavor__vcpus", "flavor__memory_gb").distinct()
                .order_by("flavor__vcpus", "flavor__memory_gb")[:100]]

