"""Spec lookup: the latest published numbers for one flavour (engine, version, family, vCPUs, memory)."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from django.core.exceptions import ValidationError as DjangoValidationError

from config.api import PARAMETER_ERRORS, THROTTLED, error_body
from config.deprecation import mark_deprecated

from ..models import PublishedResult
from ..filters import StrictBooleanField
from ..variants import VARIANT_FIELDS, field_value
from . import serializers as s
from .caching import CatalogueCaching
from .params import APIResultFilter, check_params

SPEC_REQUIRED = ["engine", "version", "family", "vcpus", "memory_gb"]
SPEC_OPTIONAL = ["vendor", "memory_ratio", "deployment", "edition", "flavor", "hot_rows", "document", "methodology"]
SPEC_PARAMS = SPEC_REQUIRED + SPEC_OPTIONAL + ["include_internal"]
LEGACY_300 = "multiple_choices"  # deprecated (config.deprecation: "spec-300"): answer ambiguity with a 300
# What tells two candidates apart, in the order a client should try adding them: the variant's own
# parameters (variants.VARIANT_FIELDS), the hot data (Alibaba's PPAS/PostgreSQL tables print one row per
# amount of hot data, one flavour and document), then the document and methodology (two tables of one document).
DISAMBIGUATORS = {**{name: path for name, path in VARIANT_FIELDS.items() if name in SPEC_OPTIONAL},
                  "hot_rows": "hot_rows", "document": "table__document", "methodology": "table__methodology"}
MAX_CANDIDATES = 50


class SpecAnswerSerializer(serializers.Serializer):
    document = s.DocumentSummarySerializer(help_text="The document the numbers come from (the newest that publishes "
                                           "this flavour).")
    result = s.ResultSerializer()


class AmbiguousSpecSerializer(serializers.Serializer):
    """409: the one error shape, plus what tells the candidates apart and the candidates."""

    detail = serializers.CharField()
    code = serializers.CharField(help_text="ambiguous")
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()),
                                   help_text="Each parameter of disambiguate_by mapped to a message listing the "
                                             "candidates' values for it.")
    disambiguate_by = serializers.ListField(child=serializers.CharField(),
                                            help_text="Parameters whose values differ between the candidates, in the "
                                                      "order to try adding them.")
    suggestions = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Each parameter of disambiguate_by that can tell candidates apart mapped to the values to send "
                  "back (every one is accepted by this endpoint), e.g. {\"vendor\": [\"alibaba\", \"huawei\"]}.")
    candidates = s.ResultSerializer(many=True, help_text="The newest row of each matching variant (at most 50).")


class MultipleChoicesSpecSerializer(AmbiguousSpecSerializer):
    """The deprecated 300 body (multiple_choices=true): the 409's, code `multiple_choices`."""

    code = serializers.CharField(help_text="multiple_choices")


class SpecNotFoundSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField(help_text="not_found")
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()),
                                   help_text="Empty: no parameter is wrong, nothing is published for them.")
    available = serializers.ListField(
        child=inline_serializer("Size", {"vcpus": serializers.IntegerField(), "memory_gb": serializers.IntegerField()}),
        help_text="Sizes published for this engine, version and family (empty if none).")


class SpecLookupSchema(AutoSchema):
    """The spec lookup's parameters are ResultFilter's, described when the schema is built (enums from the catalogue)."""

    def get_override_parameters(self):
        parameters = []
        for name in SPEC_PARAMS:
            flt = APIResultFilter.base_filters[name]
            annotation = getattr(flt, "_spectacular_annotation", None)
            if annotation:
                schema = dict(annotation["field"])
                description = schema.pop("description", "").replace(" Repeat the parameter for several (any of them).", "")
                if schema.get("type") == "array":  # one flavour: a single value here
                    schema = schema["items"]
            else:
                raise AssertionError(name)
            parameters.append(OpenApiParameter(name, type=schema, location=OpenApiParameter.QUERY,
                                               required=name in SPEC_REQUIRED, description=description))
        parameters.append(OpenApiParameter(
            LEGACY_300, bool, deprecated=True, description="Deprecated (Sunset: see the Sunset header and the API "
            "changelog): true answers several matching variants with 300 Multiple Choices, as before 2.0.0, "
            "instead of 409."))
        return parameters


def spec_filterset(params):
    """The lookup's parameters as a validated ResultFilter; a 400 naming every problem otherwise."""
    data = {name: params[name] for name in SPEC_PARAMS if params.get(name)}
    filterset = APIResultFilter(data, queryset=PublishedResult.objects.with_provenance(prefetch=True))
    errors = check_params(params, set(SPEC_PARAMS) | {"format", LEGACY_300}, filterset=filterset,
                          required=SPEC_REQUIRED, repeatable=(), checks=[legacy_300])
    if errors:
        raise ValidationError(errors)
    return data, filterset


def legacy_300(params):
    """Whether the client asked for the deprecated 300 answer (multiple_choices=true)."""
    if params.get(LEGACY_300) == "":
        raise ValidationError({LEGACY_300: ["Expected true or false, got ''."]})
    try:
        return bool(StrictBooleanField(required=False).clean(params.get(LEGACY_300)))
    except DjangoValidationError as exc:
        raise ValidationError({LEGACY_300: list(exc.messages)}) from None


class SpecLookupView(CatalogueCaching, APIView):
    """The latest published numbers for one flavour: engine, version, family, vCPUs and memory.

    200: one answer (the newest document's row). 409 Conflict (code `ambiguous`): several variants
    match (other vendors, memory ratios, deployments, editions, spec codes or methodologies): add one
    of the `disambiguate_by` parameters. 404: nothing published for that flavour. 400: a missing or bad
    parameter. Why 409 and not 300: docs/API-CHANGELOG.md (1.2.0).
    """

    schema = SpecLookupSchema()

    @extend_schema(
        summary="Spec lookup: the latest published numbers for a flavour",
        responses={200: SpecAnswerSerializer, 409: OpenApiResponse(AmbiguousSpecSerializer, description=(
            "Several variants match: add one of disambiguate_by (each listed in `errors` with the candidates' values).")),
            300: OpenApiResponse(MultipleChoicesSpecSerializer, description=(
                "Deprecated, only with multiple_choices=true (Deprecation and Sunset headers): several variants match.")),
            400: PARAMETER_ERRORS, 404: OpenApiResponse(SpecNotFoundSerializer, description="Nothing published."),
            429: THROTTLED},
    )
    def get(self, request):
        data, filterset = spec_filterset(request.query_params)
        matching = filterset.qs
        candidates = list(matching.newest_per_variant(among_these=True).sorted_by(["-published", "table"])
                          [:MAX_CANDIDATES + 1])
        context = {"request": request}
        if not candidates:
            return Response(error_body(self.not_found_text(data), "not_found", available=self.available(data)), status=404)
        if len(candidates) == 1:
            result = candidates[0]
            return Response({"document": s.DocumentSummarySerializer(result.table.document, context=context).data,
                             "result": s.ResultSerializer(result, context=context).data})
        differ = {name: {self.shown(field_value(r, path)) for r in candidates} for name, path in DISAMBIGUATORS.items()
                  if len({field_value(r, path) for r in candidates}) > 1}
        detail = (f"{len(candidates) if len(candidates) <= MAX_CANDIDATES else 'More than ' + str(MAX_CANDIDATES)} "
                  f"published variants match; add one of: {', '.join(differ)}.")
        body = {"disambiguate_by": list(differ),
                "candidates": s.ResultSerializer(candidates[:MAX_CANDIDATES], many=True, context=context).data}
        # Only values the parameter accepts are suggested: a candidate that states no memory ratio (edition,
        # spec code...) is told apart by another parameter, never by a value the API would refuse.
        suggestions = {name: sorted(values - {None}) for name, values in differ.items() if values - {None}}
        errors = {name: ["Several values match: " + ", ".join(values) + "; give one."]
                  for name, values in suggestions.items()}
        body["suggestions"] = suggestions
        if legacy_300(request.query_params):
            return Response(error_body(detail, "multiple_choices", errors, **body), status=300)
        return Response(error_body(detail, "ambiguous", errors, **body), status=409)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if LEGACY_300 in request.query_params:  # every use of the deprecated parameter, whatever the answer
            mark_deprecated(response, "spec-300")
        return response

    @staticmethod
    def shown(value):
        """A candidate's value of a disambiguating parameter as the parameter takes it (None: not stated)."""
        if value is None or value == "":
            return None
        return getattr(value, "slug", None) or str(value)

    @staticmethod
    def not_found_text(data):
        return (f"No published result for {data['engine']} {data['version']} {data['family']} with "
                f"{data['vcpus']} vCPUs and {data['memory_gb']} GB"
                + "".join(f", {k}={data[k]}" for k in SPEC_OPTIONAL if k in data) + ".")

    @staticmethod
    def available(data):
        sizes = APIResultFilter({k: data[k] for k in ("engine", "version", "family", "include_internal") if k in data},
                                queryset=PublishedResult.objects.all())
        return [{"vcpus": v, "memory_gb": m} for v, m in
                sizes.qs.order_by().values_list("flavor__vcpus", "flavor__memory_gb").distinct()
                .order_by("flavor__vcpus", "flavor__memory_gb")[:100]]
