"""Read endpoints of the catalogue under /api/v1/ (public, throttled for anonymous clients). Query
parameters: params.py; the spec lookup: spec.py; project-wide pieces (errors, throttle): config/api.py."""

import copy

from django.db.models import Prefetch
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer

from config.api import COMMON_ERRORS, THROTTLED, ContentCaching
from config.deprecation import mark_deprecated
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.response import Response
from django.urls import reverse
from rest_framework.views import APIView

from ..filters import StrictBooleanField
from ..flavors import flavour_sheet
from ..export import EXPORT_COLUMNS, PARQUET_MEDIA_TYPE, column_schema, iter_csv_lines, iter_parquet_bytes
from ..queries import version_sort_key
from ..models import Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, PublishedResult, ResultTable, Vendor
from . import filters as f
from .caching import CatalogueCaching
from . import serializers as s
from config.pagination import CatalogPagination

from .pagination import ResultPagination
from .params import APIResultFilter, ResultOrdering, StrictQueryBackend
from .renderers import ResultCSVRenderer, ResultParquetRenderer


class CatalogueViewSet(CatalogueCaching, viewsets.ReadOnlyModelViewSet):
    pagination_class = CatalogPagination
    filter_backends = [StrictQueryBackend]
    lookup_value_regex = "[^/\x00]+"  # any key reaches the view (an unknown one is a JSON 404); NUL never does
    result_query = None  # what the request's parameters ask, read once with their check (params.StrictQueryBackend)


# --- Vocabulary ----------------------------------------------------------------------------------

@extend_schema_view(list=extend_schema(summary="Vendors", responses={200: s.VendorSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A vendor", responses={200: s.VendorSerializer, **COMMON_ERRORS}))
class VendorViewSet(CatalogueViewSet):
    queryset = Vendor.objects.order_by("slug")
    serializer_class = s.VendorSerializer
    lookup_field = "slug"


@extend_schema_view(list=extend_schema(summary="Documents (whitepapers), newest first",
                                       responses={200: s.DocumentSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A document with its tables",
                                           responses={200: s.DocumentSerializer, **COMMON_ERRORS}))
class DocumentViewSet(CatalogueViewSet):
    queryset = (Document.objects.select_related("vendor").newest_first()
                .prefetch_related("methodologies",
                                  Prefetch("tables", ResultTable.objects.select_related("methodology", "document")
                                           .order_by("position"))))
    serializer_class = s.DocumentSerializer
    filterset_class = f.DocumentFilter
    lookup_field = "slug"


@extend_schema_view(list=extend_schema(summary="Methodologies (how results were measured)",
                                       responses={200: s.MethodologySerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A methodology",
                                           responses={200: s.MethodologySerializer, **COMMON_ERRORS}))
class MethodologyViewSet(CatalogueViewSet):
    queryset = Methodology.objects.select_related("document").order_by("slug")
    serializer_class = s.MethodologySerializer
    filterset_class = f.MethodologyFilter
    lookup_field = "slug"


@extend_schema_view(list=extend_schema(summary="Database engines with their versions",
                                       responses={200: s.EngineSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="An engine", responses={200: s.EngineSerializer, **COMMON_ERRORS}))
class EngineViewSet(CatalogueViewSet):
    queryset = Engine.objects.order_by("slug").prefetch_related(
        Prefetch("versions", EngineVersion.objects.select_related("engine").order_by("version")))
    serializer_class = s.EngineSerializer
    lookup_field = "slug"


@extend_schema_view(
    list=extend_schema(summary="Engine versions", responses={200: s.EngineVersionSerializer(many=True), **COMMON_ERRORS}),
    retrieve=extend_schema(summary="An engine version", responses={200: s.EngineVersionSerializer, **COMMON_ERRORS},
                           parameters=[OpenApiParameter("engine", str, OpenApiParameter.PATH, description="Engine slug."),
                                       OpenApiParameter("version", str, OpenApiParameter.PATH,
                                                        description="Version as named, '-' when not stated.")]))
class EngineVersionViewSet(CatalogueViewSet):
    queryset = EngineVersion.objects.select_related("engine").order_by("engine__slug", "version")
    serializer_class = s.EngineVersionSerializer
    filterset_class = f.EngineVersionFilter

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        if self.action != "list":
            return queryset
        # Versions in version order (9.6 < 10), one rule with the pages: queries.version_sort_key.
        return sorted(queryset, key=lambda v: (v.engine.slug, version_sort_key(v.version)))

    def get_object(self):
        # The URL's <stated:version> converter has already turned '-' into '' (not stated).
        return get_object_or_404(self.filter_queryset(self.get_queryset()), engine__slug=self.kwargs["engine"],
                                 version=self.kwargs["version"])


@extend_schema_view(
    list=extend_schema(summary="Instance families", responses={200: s.FamilySerializer(many=True), **COMMON_ERRORS}),
    retrieve=extend_schema(summary="An instance family of a vendor", responses={200: s.FamilySerializer, **COMMON_ERRORS},
                           parameters=[OpenApiParameter("vendor", str, OpenApiParameter.PATH, description="Vendor slug."),
                                       OpenApiParameter("slug", str, OpenApiParameter.PATH, description="Family slug.")]))
class FamilyViewSet(CatalogueViewSet):
    queryset = InstanceFamily.objects.select_related("vendor").order_by("vendor__slug", "slug")
    serializer_class = s.FamilySerializer
    filterset_class = f.FamilyFilter

    def get_object(self):
        return get_object_or_404(self.filter_queryset(self.get_queryset()), vendor__slug=self.kwargs["vendor"],
                                 slug=self.kwargs["slug"])


@extend_schema_view(list=extend_schema(summary="Flavours (instance sizes)",
                                       responses={200: s.FlavorSerializer(many=True), **COMMON_ERRORS}),
                    retrieve=extend_schema(summary="A flavour with every published figure of it and the same size "
                                                   "elsewhere (its page's content)",
                                           responses={200: s.FlavorDetailSerializer, **COMMON_ERRORS}))
class FlavorViewSet(CatalogueViewSet):
    queryset = Flavor.objects.select_related("vendor", "family__vendor").order_by("vendor__slug", "vcpus", "memory_gb", "id")
    serializer_class = s.FlavorSerializer
    filterset_class = f.FlavorFilter

    def retrieve(self, request, *args, **kwargs):
        flavor = self.get_object()
        # vendor-published rows, as every answer; an internal flavour's own rows are internal measurements
        sheet = flavour_sheet(flavor, include_internal=flavor.vendor.is_internal)
        return Response(s.FlavorDetailSerializer(sheet, context=self.get_serializer_context()).data)


# --- Published results ---------------------------------------------------------------------------

CSV_RESPONSE = OpenApiResponse(OpenApiTypes.STR, description="With format=csv (or Accept: text/csv): every matching "
                               "row, not one page, with the columns of `manage.py export_results` (byte-identical). "
                               "Column dictionary (types, units; a Frictionless table schema): /api/v1/results/columns/, "
                               "also in the Link header (rel=describedby). pandas.read_csv, polars.read_csv and DuckDB's "
                               "read_csv type it with no options (numbers always with their decimals, 494.00; version "
                               "with the engine's name, 'PostgreSQL 10'); the dictionary's `pandas` options add "
                               "nullable integers, booleans and dates.")
PARQUET_DESCRIPTION = ("Every matching row, not one page, with the CSV's columns in its order (`fields` chooses columns) "
                       "as an Apache Parquet file, each column typed: integers int64; the printed metrics (tps, qps, "
                       "tpm, ro_qps, rw_qps) and tps_per_core, qps_normalised decimal(16, 2), exact (494 and 172.88 "
                       "alike); tps_ci_low, tps_ci_high, repeats_stdev float64; published a date; client_bound a "
                       "boolean; the rest text (version too: 10 is not 10.0); null where the CSV cell is empty (not "
                       "given by the document). pandas.read_parquet, polars.read_parquet and DuckDB read it with no "
                       "options. Column dictionary: /api/v1/results/columns/.")
PARQUET_RESPONSE = OpenApiResponse(OpenApiTypes.BINARY, description="With format=parquet (or Accept: "
                                   f"{PARQUET_MEDIA_TYPE}): " + PARQUET_DESCRIPTION)


class CSVOptions(BaseFilterBackend):
    """`bom=true`: the CSV starts with a UTF-8 byte order mark (for spreadsheets)."""

    param = "bom"
    not_for = ("parquet",)  # a binary file: no byte order mark (an unknown parameter there)

    @classmethod
    def check(cls, params):
        try:
            return bool(StrictBooleanField(required=False).clean(params.get(cls.param)))
        except DjangoValidationError as exc:
            raise ValidationError({cls.param: list(exc.messages)}) from None

    def filter_queryset(self, request, queryset, view):
        return queryset

    def get_schema_operation_parameters(self, view):
        return [{"name": self.param, "required": False, "in": "query", "schema": {"type": "boolean"},
                 "description": "With format=csv: start with a UTF-8 byte order mark (spreadsheets); default false."}]


class PrintedCells(CSVOptions):
    """`printed_cells=true` (deprecated in 3.0.0, config.deprecation "csv-printed-cells"): the CSV's cells as 2.x
    wrote them, numbers as the document printed them (494, 8839.4) and `version` bare (10), instead of the typed
    cells every reader types right with no options (whitepaper.export.typed_cells). Answers that use it carry
    Deprecation and Sunset headers."""

    param = "printed_cells"
    not_for = ("parquet", "json")  # only the CSV has cells to print: an unknown parameter elsewhere
    deprecation = "csv-printed-cells"

    def get_schema_operation_parameters(self, view):
        return [{"name": self.param, "required": False, "in": "query", "schema": {"type": "boolean"},
                 "deprecated": True,
                 "description": "Deprecated (Sunset: see the Sunset header and the API changelog, 3.0.0). With "
                                "format=csv: true writes the cells as before 3.0.0, numbers as the document printed "
                                "them (494, 8839.4) and `version` without the engine's name (10, which CSV readers "
                                "type as a number), instead of 494.00, 8839.40 and 'PostgreSQL 10'; default false."}]


class FieldsParam(BaseFilterBackend):
    """`fields=id&fields=tps` (repeated; `id,tps` in one value is the same): only these fields of each
    result (JSON: top-level fields of a result; CSV: these columns, in this order). One vocabulary for
    both (the schema's enum): a CSV column without a JSON field of that name selects nothing in JSON, a
    JSON-only field (printed, document...) is a 400 in CSV; a name given twice counts once."""

    param = "fields"
    repeatable = True

    @classmethod
    def check(cls, params, renderer_format=None):
        values = params.getlist(cls.param) if hasattr(params, "getlist") else [params.get(cls.param, "")]
        values = [v for v in values if v is not None]
        names = list(dict.fromkeys(n.strip() for n in ",".join(values).split(",") if n.strip()))  # repeats once
        known = EXPORT_COLUMNS if renderer_format == "csv" else cls.names()
        unknown = [n for n in names if n not in known]
        if unknown or (values and not names):
            raise ValidationError({cls.param: [
                f"Unknown field {', '.join(map(repr, unknown)) or repr(','.join(values))}; "
                f"choose from {', '.join(known)}."]})
        return names

    @classmethod
    def check_file(cls, params):
        """The columns of a CSV or Parquet file: the export's names only."""
        return cls.check(params, "csv")

    def filter_queryset(self, request, queryset, view):
        return queryset

    @staticmethod
    def names():
        """Every name `fields` accepts (a fixed vocabulary, not data): JSON fields, then CSV-only columns."""
        json_fields = list(s.ResultSerializer.Meta.fields)
        return [*json_fields, *(c for c in EXPORT_COLUMNS if c not in json_fields)]

    def get_schema_operation_parameters(self, view):
        return [{"name": self.param, "required": False, "in": "query", "style": "form", "explode": True,
                 "schema": {"type": "array", "items": {"type": "string", "enum": self.names()}},
                 "description": "Only these fields, the parameter repeated for several (fields=id&fields=tps): "
                                "a result's top-level fields in JSON, the columns (in this order) in CSV; a CSV "
                                "column without a JSON field of that name selects nothing in JSON, a JSON-only "
                                "field is a 400 in CSV."}]


class ColumnsView(ContentCaching, APIView):
    """The CSV's column dictionary: a Frictionless table schema (name, type, unit, description per
    column, in the CSV's order), plus the pandas options that read it with the right types."""

    @extend_schema(summary="The CSV's column dictionary (Frictionless table schema)",
                   responses={200: OpenApiTypes.OBJECT, 429: THROTTLED})
    def get(self, request):
        return Response(column_schema())


def partial_results_schema(result, generator, request, public):
    """The list of /results/ answers `PaginatedResultList` (every field of a result, required) or, with
    `fields=`, `PaginatedPartialResultList` (the same fields, none required): anyOf the two, the full
    page first, so a generated client reads a default page with its full types."""
    schemas = result.get("components", {}).get("schemas", {})
    page = schemas.get("PaginatedResultList")
    operation = result.get("paths", {}).get("/api/v1/results/", {}).get("get")
    if page is None or operation is None:
        return result
    partial = copy.deepcopy(schemas["Result"])
    partial.pop("required", None)
    partial["description"] = "A result with the fields named by `fields=` only (any may be absent)."
    schemas["PartialResult"] = partial
    schemas["PaginatedPartialResultList"] = partial_page = copy.deepcopy(page)
    partial_page["properties"]["results"]["items"] = {"$ref": "#/components/schemas/PartialResult"}
    for status, response in operation["responses"].items():  # errors are JSON even when CSV was asked for
        if status != "200":
            response.get("content", {}).pop("text/csv", None)
            response.get("content", {}).pop(PARQUET_MEDIA_TYPE, None)
    content = operation["responses"]["200"]["content"]
    content["application/json"]["schema"] = {"anyOf": [{"$ref": "#/components/schemas/PaginatedResultList"},
                                                       {"$ref": "#/components/schemas/PaginatedPartialResultList"}]}
    return result


@extend_schema_view(
    list=extend_schema(
        summary="Published results (filterable, sortable; JSON pages or the whole set as CSV or Parquet)",
        description="Vendor-published results; include_internal=true adds this dashboard's own measurements "
                    "(each result says its `origin`).",
        parameters=[OpenApiParameter("format", str, enum=["json", "csv", "parquet"],
                                     description="json (default, paginated), csv (every matching row, the columns "
                                                 "and row order of `manage.py export_results`) or parquet (the same "
                                                 "rows and columns, typed).")],
        responses={(200, "application/json"): s.ResultSerializer(many=True), (200, "text/csv"): CSV_RESPONSE,
                   (200, PARQUET_MEDIA_TYPE): PARQUET_RESPONSE, **COMMON_ERRORS}),
    retrieve=extend_schema(summary="A published result with its provenance and origin",
                           responses={200: s.ResultSerializer, **COMMON_ERRORS}),
)
class ResultViewSet(CatalogueViewSet):
    # The page query joins only flavour and engine version; the rest comes by prefetch (a small plan that
    # stops early on an index at a million rows), in a fixed number of queries whatever the page size.
    queryset = PublishedResult.objects.with_provenance(prefetch=True)
    serializer_class = s.ResultSerializer
    pagination_class = ResultPagination
    filterset_class = APIResultFilter
    filter_backends = [StrictQueryBackend, ResultOrdering, CSVOptions, PrintedCells, FieldsParam]
    renderer_classes = [JSONRenderer, ResultCSVRenderer, ResultParquetRenderer]
    FILE_RENDERERS = {"csv": ResultCSVRenderer, "parquet": ResultParquetRenderer}  # action: its one renderer

    def get_renderers(self):
        if self.action in self.FILE_RENDERERS:
            return [self.FILE_RENDERERS[self.action]()]
        if self.action != "list":
            return [JSONRenderer()]
        return super().get_renderers()

    def perform_content_negotiation(self, request, force=False):
        if self.action in self.FILE_RENDERERS:  # /results/csv/ is CSV whatever Accept says (its errors are JSON)
            renderer = self.FILE_RENDERERS[self.action]
            return renderer(), renderer.media_type
        return super().perform_content_negotiation(request, force)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if PrintedCells.param in request.query_params:  # every use of the deprecated parameter, whatever the answer
            mark_deprecated(response, PrintedCells.deprecation)
        return response

    def list(self, request, *args, **kwargs):
        if request.accepted_renderer.format == "csv":
            return self.csv_response(request)
        if request.accepted_renderer.format == "parquet":
            return self.parquet_response(request)
        return super().list(request, *args, **kwargs)

    @extend_schema(
        summary="Published results as CSV: every matching row (what format=csv on the list answers)",
        description="The filters, ordering and `fields` of /results/ (no pages: every matching row). Its own "
                    "operation so that generated clients read the answer as text: only the 200 is CSV, errors "
                    "are JSON.", filters=True,
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description=(
            "Every matching row with the columns of `manage.py export_results` (byte-identical; `fields` chooses "
            "columns), UTF-8. Column dictionary: /api/v1/results/columns/, also in the Link header (rel=describedby).")),
            (400, "application/json"): COMMON_ERRORS[400], (429, "application/json"): THROTTLED})
    @action(detail=False, url_path="csv", url_name="csv")
    def csv(self, request):
        return self.csv_response(request)

    def csv_response(self, request):
        queryset = self.filter_queryset(self.get_queryset())  # validates every parameter first
        query = self.result_query
        response = StreamingHttpResponse(iter_csv_lines(queryset, bom=query.bom, columns=query.fields or None,
                                                        printed=query.printed_cells),
                                         content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="published-results.csv"'
        response["Link"] = f'<{request.build_absolute_uri(reverse("v1:results-columns"))}>; rel="describedby"'
        return response

    @extend_schema(
        summary="Published results as Parquet: every matching row, typed (what format=parquet on the list answers)",
        description="The filters, ordering and `fields` of /results/ (no pages: every matching row). Its own "
                    "operation so that generated clients read the answer as a file: only the 200 is Parquet, "
                    "errors are JSON.", filters=True,
        responses={(200, PARQUET_MEDIA_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description=PARQUET_DESCRIPTION),
                   (400, "application/json"): COMMON_ERRORS[400], (429, "application/json"): THROTTLED})
    @action(detail=False, url_path="parquet", url_name="parquet")
    def parquet(self, request):
        return self.parquet_response(request)

    def parquet_response(self, request):
        queryset = self.filter_queryset(self.get_queryset())  # validates every parameter first
        response = StreamingHttpResponse(iter_parquet_bytes(queryset, columns=self.result_query.fields or None),
                                         content_type=PARQUET_MEDIA_TYPE)
        response["Content-Disposition"] = 'attachment; filename="published-results.parquet"'
        response["Link"] = f'<{request.build_absolute_uri(reverse("v1:results-columns"))}>; rel="describedby"'
        return response

    def get_serializer(self, *args, **kwargs):
        serializer = super().get_serializer(*args, **kwargs)
        if self.action == "list":
            names = self.result_query.fields if self.result_query is not None else []  # (none: the schema's)
            if names:
                fields = getattr(serializer, "child", serializer).fields
                for name in list(fields):
                    if name not in names:
                        fields.pop(name)
        return serializer

    def handle_exception(self, exc):
        # Errors are JSON even when CSV or Parquet was asked for.
        if getattr(self.request, "accepted_renderer", None) is not None and self.request.accepted_renderer.format in self.FILE_RENDERERS:
            self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return super().handle_exception(exc)
