"""Compare, sizing and the best result per flavour under /api/v1/: the pages' questions as JSON. Each
calls the domain function its page calls (whitepaper.compare.comparison, whitepaper.sizing.smallest_flavours,
queries.best_per_variant); this module only validates parameters and shapes the answer."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, inline_serializer
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import COMMON_ERRORS, PARAMETER_ERRORS, THROTTLED
from config.pagination import ASCII_WHOLE_NUMBER

from ..compare import COMPARE_METRICS, MAX_SELECTIONS, METHODOLOGY_DIFFERENCE_FIELDS, SERIES_KEYS
from ..compare_labels import comparison
from ..display import data_size
from ..editions import attach_revisions
from ..filters import ASCII_DECIMAL, StrictBooleanField
from ..metrics import METRICS_BY_NAME, QPS_NORMALISED_STATEMENTS
from ..models import PublishedResult
from ..sizing import LATENCY_METRIC, SIZING_METRICS, asked_metric, latency_note, question, sizing_filter, smallest_flavours
from . import serializers as s
from .caching import CatalogueCaching
from config.pagination import CatalogPagination
from .params import APIResultFilter, ResultOrdering, StrictQueryBackend, check_params

QPS_CAVEAT = ("The compared results count different statements per transaction in their QPS (Huawei counts "
              "BEGIN/COMMIT, 20 per sysbench transaction; Alibaba about 18): compare TPS, or read QPS differences "
              "with that in mind.")
METRIC_UNITS = {"tps_per_core": "transactions per second per vCPU",
                # computed, never printed: QPS x QPS_NORMALISED_STATEMENTS / the methodology's statements per transaction
                "qps_normalised": f"queries per second, normalised to {QPS_NORMALISED_STATEMENTS} statements per transaction",
                **{name: m.unit for name, m in METRICS_BY_NAME.items()}}
DIFFERENCE_FIELDS = METHODOLOGY_DIFFERENCE_FIELDS
SELECTION_KINDS = ["result", "series"]
COMPARISON_MODES = ["flavours", "series"]
DECIMAL = {"max_digits": 20, "decimal_places": 2, "coerce_to_string": False, "allow_null": True}


def _boolean(params, name, errors):
    if params.get(name) == "":
        errors.setdefault(name, ["Expected true or false, got ''."])
        return False
    try:
        return bool(StrictBooleanField(required=False).clean(params.get(name)))
    except DjangoValidationError as exc:
        errors[name] = list(exc.messages)
        return False


def _include_internal_parameter():
    return OpenApiParameter("include_internal", bool, description="true: include this dashboard's own measurements "
                            "(origin 'internal') beside the vendor-published results; default false.")


# --- Compare -------------------------------------------------------------------------------------

class CompareSelectionSerializer(serializers.Serializer):
    sel = serializers.CharField(help_text="The selection as given.")
    kind = serializers.ChoiceField(choices=SELECTION_KINDS, help_text="result: one result id; series: a filter query.")
    label = serializers.CharField(help_text="A readable name (vendor, engine version, family, ratio, ...).")
    results = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of the results it selects "
                                    "(document order).")
    merged = inline_serializer("MergedRows", {
        "rows": serializers.IntegerField(help_text="Rows with a value."),
        "sizes": serializers.IntegerField(help_text="Sizes (vCPUs, memory) they became.")},
        allow_null=True, help_text="Always null since 2.1.0: rows sharing a size are no longer merged into one number; "
                                   "such a size lists them as `cells[].candidates` (kept for older clients).")
    lines = serializers.ListField(child=inline_serializer("CompareLine", {
        "label": serializers.CharField(help_text="What tells this line apart (family, memory ratio, data size, year)."),
        "sel": serializers.CharField(help_text="The selection narrowed to this line (a `sel` value)."),
        "results": serializers.ListField(child=serializers.IntegerField())}), required=False, default=list,
        help_text="Series only: its lines, each one vendor + family + memory ratio (+ data size) of one edition.")


class FlavourRowSerializer(serializers.Serializer):
    selection = serializers.IntegerField(help_text="Index of the selection (from 0).")
    baseline = serializers.BooleanField()
    value = serializers.DecimalField(**DECIMAL, help_text="The metric (its unit: `unit`); null when not published.")
    printed = serializers.CharField(allow_null=True, help_text="The metric as the document prints it.")
    difference_pct = serializers.DecimalField(
        max_digits=12, decimal_places=1, coerce_to_string=False, allow_null=True,
        help_text="(value - baseline) / baseline in %, one decimal; null for the baseline or a missing value.")
    result = s.ResultSerializer()


class CandidateSerializer(serializers.Serializer):
    result = serializers.IntegerField(help_text="The row's id.")
    line = serializers.CharField(help_text="Its line (family, memory ratio, data size, year).")
    sel = serializers.CharField(help_text="The selection narrowed to that line.")
    value = serializers.DecimalField(**DECIMAL)
    printed = serializers.CharField(allow_null=True)


class SizeCellSerializer(serializers.Serializer):
    selection = serializers.IntegerField()
    value = serializers.DecimalField(**DECIMAL, help_text="null where the selection has no row or several (candidates).")
    printed = serializers.CharField(allow_null=True)
    difference_pct = serializers.DecimalField(max_digits=12, decimal_places=1, coerce_to_string=False, allow_null=True)
    result = serializers.IntegerField(allow_null=True, required=False, default=None, help_text="The row's id.")
    candidates = CandidateSerializer(many=True, required=False, default=list, help_text=(
        "Several lines of the selection have this size: each, with the selection narrowed to it; value is null "
        "(nothing is picked)."))
    revised_from = inline_serializer("CompareRevisedFrom", {
        "result": serializers.IntegerField(), "printed": serializers.CharField(allow_null=True),
        "published": serializers.DateField(), "change_pct": serializers.FloatField(allow_null=True)},
        allow_null=True, required=False, default=None, help_text=(
            "The newest older edition that printed another number for this flavour (series show each flavour's "
            "newest figure unless latest=false)."))


class SizeRowSerializer(serializers.Serializer):
    vcpus = serializers.IntegerField()
    memory_gb = serializers.IntegerField()
    cells = SizeCellSerializer(many=True, help_text="One per selection, in the selections' order.")


class MethodologyDifferenceSerializer(serializers.Serializer):
    field = serializers.ChoiceField(choices=DIFFERENCE_FIELDS)
    label = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField(), help_text="The distinct values as stated.")


class CompareCaveatsSerializer(serializers.Serializer):
    qps_definitions_differ = serializers.BooleanField(help_text="The compared methodologies count different "
                                                      "statements per transaction in their QPS.")
    statements_per_transaction = serializers.ListField(child=serializers.IntegerField(),
                                                       help_text="The distinct counts stated (e.g. [18, 20]).")
    qps_note = serializers.CharField(allow_null=True, help_text="What that means, when they differ; null otherwise.")
    methodology_differences = MethodologyDifferenceSerializer(
        many=True, help_text="Fields of the methodologies (tool, tool version, client, tables x rows, threads, "
                             "duration) whose stated values differ.")


class ComparisonSerializer(serializers.Serializer):
    metric = serializers.ChoiceField(choices=[m for m, _label in COMPARE_METRICS])
    unit = serializers.CharField()
    baseline = serializers.IntegerField(help_text="Index of the baseline selection.")
    mode = serializers.ChoiceField(choices=COMPARISON_MODES, help_text="flavours: every selection is one "
                                   "result (`flavours`); series: at least one is a series (`sizes`).")
    selections = CompareSelectionSerializer(many=True)
    flavours = FlavourRowSerializer(many=True, help_text="mode=flavours: one row per selection; empty otherwise.")
    sizes = SizeRowSerializer(many=True, help_text="mode=series: one row per (vCPUs, memory); empty otherwise.")
    caveats = CompareCaveatsSerializer()


def _selection_errors(sel):
    """Problems the page passes over silently (it drops unknown keys): a 400 here."""
    messages = []
    for i, raw in enumerate(sel):
        if ASCII_WHOLE_NUMBER.fullmatch(raw.strip()):
            continue
        keys = set(QueryDict(raw).keys())
        unknown = sorted(keys - set(SERIES_KEYS))
        if unknown:
            messages.append(f"Selection {i} ({raw!r}): unknown key {', '.join(unknown)}; a series takes "
                            f"{', '.join(SERIES_KEYS)}.")
    return messages


class CompareView(CatalogueCaching, APIView):
    """The compare page's answer: 2 to 6 selections, each a result id or a series (a filter query), the
    metric's value per selection and the % difference against the baseline, per flavour or per size."""

    PARAMS = {"sel", "base", "metric", "include_internal", "format"}

    @extend_schema(
        summary="Compare results or series (the compare page's answer)",
        parameters=[
            OpenApiParameter("sel", {"type": "array", "items": {"type": "string"}, "minItems": 2,
                                     "maxItems": MAX_SELECTIONS}, required=True, explode=True, style="form",
                             description="2 to 6 selections, the parameter repeated: a result id (sel=123) or a "
                                         "series as a URL-encoded filter query with the keys "
                                         f"{', '.join(SERIES_KEYS)} (sel=engine%3Dmysql%26version%3D5.7%26family%3Ddedicated)."),
            OpenApiParameter("base", {"type": "integer", "minimum": 0, "maximum": MAX_SELECTIONS - 1},
                             description="Index of the baseline selection (from 0; default 0)."),
            OpenApiParameter("metric", str, enum=[m for m, _label in COMPARE_METRICS],
                             description="The metric compared (default tps; tps_per_core = TPS per vCPU)."),
            _include_internal_parameter(),
        ],
        responses={200: ComparisonSerializer, 400: PARAMETER_ERRORS, 429: THROTTLED},
    )
    def get(self, request):
        params = request.query_params
        errors = check_params(params, self.PARAMS, required=["sel"], repeatable={"sel"})
        sel = [v for v in params.getlist("sel") if v.strip()]
        if "sel" not in errors:
            if not 2 <= len(sel) <= MAX_SELECTIONS:
                errors["sel"] = [f"Give 2 to {MAX_SELECTIONS} selections, got {len(sel)}."]
            elif _selection_errors(sel):
                errors["sel"] = _selection_errors(sel)
        metric = params.get("metric") or "tps"
        if metric not in dict(COMPARE_METRICS):
            errors["metric"] = [f"Unknown metric {metric!r}; choose from {', '.join(dict(COMPARE_METRICS))}."]
        baseline, raw = 0, params.get("base")
        if raw is not None:
            if not ASCII_WHOLE_NUMBER.fullmatch(raw) or not int(raw) < max(len(sel), 1):
                errors["base"] = [f"Expected the index of a selection, 0 to {max(len(sel), 1) - 1}, got {raw!r}."]
            else:
                baseline = int(raw)
        internal = _boolean(params, "include_internal", errors)
        if errors:
            raise ValidationError(errors)
        answer = comparison(sel, baseline, metric, internal)
        failed = [f"Selection {i} ({x['raw']!r}): {x['error']}" for i, x in enumerate(answer["selections"]) if x["error"]]
        if failed:
            raise ValidationError({"sel": failed})
        return Response(self.body(answer, request))

    @staticmethod
    def body(answer, request):
        context = {"request": request}
        table, metric = answer["table"], answer["metric"]
        flavours = []
        sizes = []
        if table["mode"] == "flavours":
            flavours = [{"selection": i, "baseline": row["baseline"], "value": row["value"],
                         "printed": row["shown"] or None, "difference_pct": row["diff"], "result": row["result"]}
                        for i, row in enumerate(table["rows"])]
        else:
            sizes = [{"vcpus": row["vcpus"], "memory_gb": row["memory_gb"],
                      "cells": [{"selection": i, "value": c["value"], "printed": c["shown"] or None,
                                 "difference_pct": c["diff"], "result": c["result"].pk if c["result"] else None,
                                 "candidates": [{"result": k["result"].pk, "line": k["label"], "sel": k["sel"],
                                                 "value": k["value"], "printed": k["shown"] or None}
                                                for k in c.get("candidates", [])],
                                 "revised_from": c["revised"] and {
                                     "result": c["revised"]["result"].pk, "printed": c["revised"]["shown"] or None,
                                     "published": c["revised"]["result"].table.document.published,
                                     "change_pct": c["revised"]["pct"]}}
                                for i, c in enumerate(row["cells"])]}
                     for row in table["rows"]]
        spt = answer["statements_per_transaction"]
        data = {
            "metric": metric, "unit": METRIC_UNITS[metric], "baseline": answer["baseline"], "mode": table["mode"],
            "selections": [{"sel": x["raw"], "kind": "series" if x.get("series") else "result", "label": x["label"],
                            "results": [r.pk for r in x["rows"]],
                            "merged": None, "lines": [{"label": p["label"], "sel": p["sel"], "results": [r.pk for r in p["rows"]]}
                                                      for p in x.get("parts", [])]}
                           for x in answer["selections"]],
            "flavours": flavours, "sizes": sizes,
            "caveats": {"qps_definitions_differ": answer["qps_definitions_differ"], "statements_per_transaction": spt,
                        "qps_note": QPS_CAVEAT if answer["qps_definitions_differ"] else None,
                        "methodology_differences": answer["methodology_differences"]},
        }
        # The rows' older editions in one query (each row's result says `revised_from`), not one per row.
        attach_revisions([r for x in answer["selections"] for r in x["rows"]], PublishedResult.objects.all())
        return ComparisonSerializer(data, context=context).data


# --- Sizing --------------------------------------------------------------------------------------

class AlsoPrintedSerializer(serializers.Serializer):
    """An older edition of a sizing answer (a result), with the asked metric's value and print."""

    id = serializers.IntegerField()
    url = s.IdentityLinkField(view_name="result-detail", source="*", read_only=True)
    document = serializers.CharField(source="table.document.slug", help_text="Document slug.")
    published = serializers.DateField(source="table.document.published")
    value = serializers.SerializerMethodField()
    printed = serializers.SerializerMethodField()

    @extend_schema_field({"type": "number", "nullable": True})
    def get_value(self, obj):
        value = getattr(obj, self.context["metric"])
        return None if value is None else float(value)

    @extend_schema_field({"type": "string", "nullable": True})
    def get_printed(self, obj):
        return obj.display(self.context["metric"]) or None


class SizingAnswerSerializer(serializers.Serializer):
    value = serializers.DecimalField(**DECIMAL, help_text="The metric of this row (`metric`, in `unit`).")
    printed = serializers.CharField(allow_null=True, help_text="As the document prints it.")
    result = s.ResultSerializer(help_text="The newest document's row for this flavour.")
    also = AlsoPrintedSerializer(many=True, help_text="Older documents (editions) printing the same flavour, each "
                                                      "with its own number, newest first.")
    revised_from = AlsoPrintedSerializer(source="revised", allow_null=True, help_text=(
        "With latest=true (default): the newest older edition that printed another number for this flavour "
        "(the answer's number revised it); null when none did."))
    data_size = serializers.CharField(help_text=(
        "The data size the figure was measured at, as the page states it: the row's hot rows (Alibaba's PostgreSQL "
        "and PPAS tables vary it), else its test rows, else the methodology's tables x rows per table; empty when "
        "the document states none."))
    revised_pct = serializers.FloatField(allow_null=True, required=False, default=None, help_text=(
        "The change from revised_from's number to this answer's, in % (one decimal); null without revised_from."))
    latency_bound_ms = serializers.DecimalField(**DECIMAL, source="result.latency_bound_ms", help_text=(
        "With latency_bound_ms asked: the p95 bound (ms) this row's capacity search sustained `value` under (at or "
        "below the one asked); null otherwise."))


LOWER_IS_BETTER = [m.name for m in METRICS_BY_NAME.values() if not m.higher_is_better]
# The sizing target's meaning per metric, from the declarations (metrics.METRICS): its unit, and whether the answer
# reaches it (at or above) or stays within it (at or below, where lower is better).
TARGET_DESCRIPTION = "The value asked, in the metric's unit (the answer's `unit`): " + "; ".join(
    f"{name}: {METRICS_BY_NAME[name].unit}, "
    f"{'at or above' if METRICS_BY_NAME[name].higher_is_better else 'at or below'}" for name, _label in SIZING_METRICS) + "."


class SizingSerializer(serializers.Serializer):
    engine = serializers.CharField()
    version = serializers.CharField(allow_null=True, help_text="null: every version.")
    vendor = serializers.CharField(allow_null=True, help_text="null: every vendor.")
    metric = serializers.ChoiceField(choices=[*[m for m, _label in SIZING_METRICS], LATENCY_METRIC], help_text=(
        "The metric answered: the one asked, or sustained_tps (TPS sustained with p95 at or below a bound, open-loop) "
        "when latency_bound_ms is given."))
    latency_bound_ms = serializers.DecimalField(**DECIMAL, help_text=(
        "The p95 bound asked (ms); null: no latency bound (closed-loop figures answer as published)."))
    note = serializers.CharField(allow_blank=True, help_text=(
        "With latency_bound_ms: where the answer comes from (published capacity searches only, never closed-loop "
        "TPS) and, when there is no answer, that no published figure sustains the target under the bound (vendor "
        "whitepapers state no latency); empty otherwise."))
    unit = serializers.CharField()
    target = serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False,
                                      help_text=TARGET_DESCRIPTION)
    latest = serializers.BooleanField(help_text="true: each flavour's newest published figure answers (default); "
                                                "false: every edition's figure may answer.")
    answers = SizingAnswerSerializer(many=True, help_text="Per vendor, engine version, family, memory ratio, "
                                     "deployment and edition: the smallest flavour reaching the target, smallest first.")


class SizingView(CatalogueCaching, APIView):
    """The sizing page's answer: the smallest published flavour reaching a TPS or QPS target, per
    vendor, family, memory ratio and deployment."""

    PARAMS = {"engine", "version", "vendor", "deployment", "edition", "metric", "target", "include_internal", "latest",
              "latency_bound_ms", "format"}

    @extend_schema(
        summary="The smallest flavour reaching a target (the sizing page's answer)",
        parameters=[
            OpenApiParameter("engine", str, required=True, description="Engine slug, e.g. mysql."),
            OpenApiParameter("version", str, description="Engine version, e.g. 8.0; absent: every version."),
            OpenApiParameter("vendor", str, description="Vendor slug, e.g. huawei; absent: every vendor."),
            OpenApiParameter("deployment", str, enum=["ha", "single"], description="ha or single; absent: both."),
            OpenApiParameter("edition", str, description="SQL Server edition as recorded, e.g. web, enterprise+standard; "
                                                         "absent: every edition."),
            OpenApiParameter("metric", str, enum=[m for m, _label in SIZING_METRICS], description=(
                f"{', '.join(m for m, _label in SIZING_METRICS)} (the export's columns; default tps); a metric no "
                "document publishes for the engine and version is a 400 naming the published ones.")),
            OpenApiParameter("target", {"type": "number", "minimum": 0, "maximum": 99999999999999.99}, required=True,
                             description=TARGET_DESCRIPTION),
            _include_internal_parameter(),
            OpenApiParameter("latest", bool, description=(
                "true (default): each flavour's newest published figure answers, an older edition's other number is "
                "named in revised_from; false: every edition's figure may answer.")),
            OpenApiParameter("latency_bound_ms", {"type": "number", "minimum": 0.01, "maximum": 600000}, description=(
                "A p95 bound in ms: the smallest flavour sustaining `target` TPS with p95 at or below it, answered from "
                "published capacity searches only (internal measurements, open-loop; metric sustained_tps), never from "
                "closed-loop TPS; no such figure: no answers and a `note` saying so. metric, if given, must be tps.")),
        ],
        responses={200: SizingSerializer, 400: PARAMETER_ERRORS, 429: THROTTLED},
    )
    def get(self, request):
        params = request.query_params
        errors = check_params(params, self.PARAMS, required=["engine", "target"])
        _boolean(params, "include_internal", errors)  # the form's checkbox would read "perhaps" as true
        _boolean(params, "latest", errors)
        if params.get("target") and not ASCII_DECIMAL.fullmatch(params["target"]) and "target" not in errors:
            errors["target"] = ["Enter a number in ASCII digits (0-9), as JSON writes it: no sign, no leading zeros."]
        form = question({k: params.get(k) for k in self.PARAMS - {"format"} if params.get(k) is not None})
        if not form.is_valid():
            for name, messages in form.errors.get_json_data().items():
                errors.setdefault(name, [m["message"] for m in messages])
            errors.pop("__all__", None)
        elif any(params.get(k) and k not in errors for k in ("vendor", "edition")):
            filterset = sizing_filter(form.cleaned_data)
            if not filterset.is_valid():
                errors.update({k: [str(m) for m in v] for k, v in filterset.errors.items()})
        if errors:
            raise ValidationError(errors)
        data = form.cleaned_data
        metric = asked_metric(data)
        answers = [{"value": getattr(r, metric), "printed": r.display(metric) or None, "result": r, "also": r.also,
                    "revised": r.revised, "revised_pct": getattr(r, "revised_pct", None), "data_size": data_size(r)}
                   for r in smallest_flavours(data)]
        attach_revisions([a["result"] for a in answers], PublishedResult.objects.all())  # one query, not one per answer
        return Response(SizingSerializer({
            "engine": data["engine"], "version": data.get("version") or None, "vendor": data.get("vendor") or None,
            "metric": metric, "unit": METRIC_UNITS[metric], "target": data["target"], "answers": answers,
            "latency_bound_ms": data.get("latency_bound_ms"), "note": latency_note(data, answers),
            "latest": data.get("latest") is not False,
        }, context={"request": request, "metric": metric}).data)


# --- Best result per flavour ---------------------------------------------------------------------

BEST_BY = ["newest", *[m.name for m in METRICS_BY_NAME.values() if m.kind != "rows"]]


class BestBy(BaseFilterBackend):
    """`by=newest` (default): per flavour, the newest document's row; `by=<metric>`: the row with the
    best value of that metric across documents (Metric.higher_is_better; rows without it last; ties: the newer
    document)."""

    param = "by"

    @classmethod
    def check(cls, params):
        value = params.get(cls.param) or "newest"
        if value not in BEST_BY:
            raise ValidationError({cls.param: [f"Unknown value {value!r}; choose from {', '.join(BEST_BY)}."]})
        return value

    def filter_queryset(self, request, queryset, view):
        by = self.check(request.query_params)
        return queryset.best_per_variant(None if by == "newest" else by)

    def get_schema_operation_parameters(self, view):
        return [{"name": self.param, "required": False, "in": "query",
                 "schema": {"type": "string", "enum": BEST_BY, "default": "newest"},
                 "description": "newest (default): per flavour, the row of the newest document publishing it; a "
                                "metric: the row with the best value of it across documents, the highest, the lowest "
                                f"for {', '.join(LOWER_IS_BETTER) or 'none today'} (rows without it last; ties: the newer "
                                "document)."}]


class BestResultSerializer(s.ResultSerializer):
    variant_rows = serializers.IntegerField(read_only=True, help_text="How many of the filtered rows publish this "
                                            "flavour (its editions across documents, this one included).")

    class Meta(s.ResultSerializer.Meta):
        fields = [*s.ResultSerializer.Meta.fields, "variant_rows"]


@extend_schema(summary="The best result per flavour across documents (default: the newest document's)",
               description="One row per flavour (vendor, engine version, family, memory ratio, deployment, edition, "
                           "size, spec code) among the rows the filters keep, chosen by `by`. Filters and ordering "
                           "are those of /results/.",
               responses={200: BestResultSerializer(many=True), **COMMON_ERRORS})
class BestResultsView(CatalogueCaching, generics.ListAPIView):
    action = "list"
    queryset = PublishedResult.objects.with_provenance(prefetch=True)
    serializer_class = BestResultSerializer
    filterset_class = APIResultFilter
    filter_backends = [StrictQueryBackend, BestBy, ResultOrdering]
    pagination_class = CatalogPagination
