"""Read-only serializers of the catalogue. Every number carries its unit in the schema (from
whitepaper.metrics.METRICS); metrics come both as JSON numbers and as printed by the document."""

from urllib.parse import quote, urlencode

from django.utils.functional import cached_property
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.reverse import _reverse, reverse

from ..export import COLUMN_INFO
from ..editions import attach_revisions
from ..measurement import Measurement
from ..metrics import METRICS, METRICS_BY_NAME
from ..models import (Deployment, Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, Origin, PublishedResult,
                      ResultTable, Vendor)
from ..queries import to_param, version_sort_key

ORIGIN_HELP = ("vendor: published by the vendor in a document; internal: measured by this dashboard's benchmark "
               "runs (listed only with include_internal=true).")


def cached_reverse(view_name, kwargs=None, request=None):
    """reverse() once per view name and request, then fill the keys in: a page of 500 results has
    thousands of links, and Django's reverse() is the most expensive part of building them."""
    if request is None:
        return reverse(view_name, kwargs=kwargs)
    kwargs = kwargs or {}
    templates = request.__dict__.setdefault("_link_templates", {})
    key = (view_name, tuple(kwargs))
    template = templates.get(key)
    if template is None:
        # The versioning scheme's reverse, not rest_framework.reverse.reverse: that one copies the request's
        # `?format=json` into every link of the payload.
        scheme = getattr(request, "versioning_scheme", None)
        placeholders = {k: f"~{k}~" for k in kwargs}
        template = templates[key] = (scheme.reverse(view_name, kwargs=placeholders, request=request) if scheme
                                     else _reverse(view_name, kwargs=placeholders, request=request))
    for name, value in kwargs.items():
        template = template.replace(f"~{name}~", quote(str(value), safe=URL_SAFE), 1)
    return template


URL_SAFE = "!$&'()*+,;=:@~"  # what Django's reverse() leaves unquoted in a path segment


def _results_url(request, **params):
    return cached_reverse("result-list", request=request) + "?" + urlencode(params)


class LinkField(serializers.HyperlinkedRelatedField):
    def get_url(self, obj, view_name, request, format):
        return cached_reverse(view_name, {self.lookup_url_kwarg: getattr(obj, self.lookup_field)}, request)


class IdentityLinkField(serializers.HyperlinkedIdentityField):
    def get_url(self, obj, view_name, request, format):
        return cached_reverse(view_name, {self.lookup_url_kwarg: getattr(obj, self.lookup_field)}, request)


# --- Links to objects whose URL needs two keys ---------------------------------------------------

class TwoKeyLinkField(serializers.HyperlinkedRelatedField):
    """A link to an object whose URL needs two keys (engine + version, vendor + family slug).
    Use source="*" for the object itself."""

    default_view_name = None

    def __init__(self, **kwargs):
        kwargs.setdefault("view_name", self.default_view_name)
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def use_pk_only_optimization(self):
        return False

    def get_url(self, obj, view_name, request, format):
        return cached_reverse(view_name, self.url_kwargs(obj), request)


@extend_schema_field(OpenApiTypes.URI)
class VersionLinkField(TwoKeyLinkField):
    default_view_name = "version-detail"

    def url_kwargs(self, obj):
        return {"engine": obj.engine.slug, "version": to_param(obj.version)}


@extend_schema_field(OpenApiTypes.URI)
class FamilyLinkField(TwoKeyLinkField):
    default_view_name = "family-detail"

    def url_kwargs(self, obj):
        return {"vendor": obj.vendor.slug, "slug": obj.slug}


# --- Vocabulary ----------------------------------------------------------------------------------

class VendorSerializer(serializers.HyperlinkedModelSerializer):
    url = IdentityLinkField(view_name="vendor-detail", lookup_field="slug")
    documents = serializers.SerializerMethodField(help_text="Documents of this vendor (API list URL).")
    results = serializers.SerializerMethodField(help_text="Published results of this vendor (API list URL).")
    origin = serializers.ChoiceField(choices=Origin.choices, read_only=True, help_text=ORIGIN_HELP)

    class Meta:
        model = Vendor
        fields = ["url", "slug", "name", "name_zh", "origin", "documents", "results"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_documents(self, obj):
        return cached_reverse("document-list", request=self.context.get("request")) + f"?vendor={obj.slug}"

    @extend_schema_field(OpenApiTypes.URI)
    def get_results(self, obj):
        internal = {"include_internal": "true"} if obj.is_internal else {}
        return _results_url(self.context.get("request"), vendor=obj.slug, **internal)


class VersionSummarySerializer(serializers.ModelSerializer):
    url = VersionLinkField(source="*")

    class Meta:
        model = EngineVersion
        fields = ["url", "version"]


class EngineSerializer(serializers.ModelSerializer):
    url = IdentityLinkField(view_name="engine-detail", lookup_field="slug")
    versions = serializers.SerializerMethodField(help_text="The engine's versions in version order (5.6, 5.7, 8.0; "
                                                 "9.6, 10, 12; 2008 R2, 2012), not as text.")
    results = serializers.SerializerMethodField(help_text="Published results of this engine (API list URL).")

    class Meta:
        model = Engine
        fields = ["url", "slug", "name", "versions", "results"]

    @extend_schema_field(VersionSummarySerializer(many=True))
    def get_versions(self, obj):
        versions = sorted(obj.versions.all(), key=lambda v: version_sort_key(v.version))
        return VersionSummarySerializer(versions, many=True, context=self.context).data

    @extend_schema_field(OpenApiTypes.URI)
    def get_results(self, obj):
        return _results_url(self.context.get("request"), engine=obj.slug)


class EngineVersionSerializer(serializers.ModelSerializer):
    url = VersionLinkField(source="*")
    engine = LinkField(view_name="engine-detail", lookup_field="slug", read_only=True)
    engine_slug = serializers.CharField(source="engine.slug", read_only=True)
    version = serializers.CharField(read_only=True, help_text="As the document names it; empty when not stated "
                                    "(the URL and the `version` filter use '-').")
    results = serializers.SerializerMethodField(help_text="Published results of this engine version (API list URL).")

    class Meta:
        model = EngineVersion
        fields = ["url", "engine", "engine_slug", "version", "results"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_results(self, obj):
        return _results_url(self.context.get("request"), engine=obj.engine.slug, version=to_param(obj.version))


class FamilySerializer(serializers.ModelSerializer):
    url = FamilyLinkField(source="*")
    vendor = LinkField(view_name="vendor-detail", lookup_field="slug", read_only=True)
    vendor_slug = serializers.CharField(source="vendor.slug", read_only=True)
    results = serializers.SerializerMethodField(help_text="Published results on this family (API list URL).")

    class Meta:
        model = InstanceFamily
        fields = ["url", "vendor", "vendor_slug", "slug", "name", "name_zh", "arch", "results"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_results(self, obj):
        return _results_url(self.context.get("request"), vendor=obj.vendor.slug, family=obj.slug)


class FlavorSerializer(serializers.ModelSerializer):
    url = IdentityLinkField(view_name="flavor-detail")
    vendor = LinkField(view_name="vendor-detail", lookup_field="slug", read_only=True)
    family = FamilyLinkField(allow_null=True)
    family_slug = serializers.CharField(source="family.slug", read_only=True, allow_null=True, default=None)
    vcpus = serializers.IntegerField(read_only=True, help_text="vCPUs (cores).")
    memory_gb = serializers.IntegerField(read_only=True, help_text="Memory in GB.")
    storage = serializers.CharField(read_only=True, help_text="Storage as printed in the spec, e.g. 2T; empty if none.")
    memory_ratio = serializers.CharField(read_only=True, help_text="GB per vCPU as the document groups it, 1:N; "
                                         "empty when it does not group by ratio.")
    spec_code = serializers.CharField(read_only=True, help_text="Spec code as printed; empty when the document gives none.")
    html_url = serializers.SerializerMethodField(help_text="The flavour's page (every figure, its revisions, the same "
                                                 "size elsewhere).")

    class Meta:
        model = Flavor
        fields = ["url", "id", "vendor", "family", "family_slug", "spec_code", "vcpus", "memory_gb", "storage",
                  "memory_ratio", "html_url"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, obj):
        request = self.context.get("request")
        url = obj.get_absolute_url()
        return request.build_absolute_uri(url) if request else url


# --- Documents and methodologies -----------------------------------------------------------------

class TableSerializer(serializers.ModelSerializer):
    methodology = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    html_url = serializers.SerializerMethodField(help_text="The table on the document's page.")

    class Meta:
        model = ResultTable
        fields = ["position", "label", "label_printed", "section", "methodology", "columns", "html_url"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, obj):
        request = self.context.get("request")
        url = obj.get_absolute_url()
        return request.build_absolute_uri(url) if request else url


class MethodologySerializer(serializers.ModelSerializer):
    url = IdentityLinkField(view_name="methodology-detail", lookup_field="slug")
    document = LinkField(view_name="document-detail", lookup_field="slug", read_only=True)
    tables = serializers.IntegerField(read_only=True, allow_null=True, help_text="Number of tables in the test database.")
    rows_per_table = serializers.IntegerField(read_only=True, allow_null=True, help_text="Rows per test table.")
    threads = serializers.IntegerField(read_only=True, allow_null=True, help_text="Client threads (connections).")
    duration_s = serializers.IntegerField(read_only=True, allow_null=True, help_text="Test duration, seconds.")
    report_interval_s = serializers.IntegerField(read_only=True, allow_null=True, help_text="Report interval, seconds.")
    statements_per_transaction = serializers.IntegerField(
        read_only=True, allow_null=True,
        help_text="Statements one transaction counts for in QPS (Huawei 20, Alibaba about 18).")
    parameters = serializers.DictField(child=serializers.CharField(), read_only=True,
                                       help_text="Other parameters as stated, name -> text.")
    inferred = serializers.DictField(child=serializers.CharField(), read_only=True, help_text=(
        "Set-up values the transcription inferred rather than read as stated, field name -> where the value comes from "
        "(e.g. threads: from the cleanup command; the run command is missing from the text); {} when every value is "
        "stated."))
    results = serializers.SerializerMethodField(help_text="Results measured this way (API list URL).")

    class Meta:
        model = Methodology
        fields = ["url", "slug", "document", "name", "tool", "tool_version", "workload", "tables", "rows_per_table",
                  "threads", "duration_s", "report_interval_s", "client", "statements_per_transaction", "parameters",
                  "inferred", "description", "results"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_results(self, obj):
        return _results_url(self.context.get("request"), methodology=obj.slug)


class DocumentSerializer(serializers.ModelSerializer):
    url = IdentityLinkField(view_name="document-detail", lookup_field="slug")
    vendor = LinkField(view_name="vendor-detail", lookup_field="slug", read_only=True)
    vendor_slug = serializers.CharField(source="vendor.slug", read_only=True)
    published = serializers.DateField(read_only=True, help_text="Publication date printed on the document (YYYY-MM-DD).")
    methodologies = LinkField(view_name="methodology-detail", lookup_field="slug",
                                                        many=True, read_only=True)
    tables = TableSerializer(many=True, read_only=True)
    html_url = serializers.SerializerMethodField(help_text="The document's page.")
    results = serializers.SerializerMethodField(help_text="The document's results (API list URL).")
    updated_at = serializers.DateTimeField(source="changed_at", read_only=True, help_text=(
        "When the document or anything in it last changed (ISO 8601, UTC): for updated_since."))

    class Meta:
        model = Document
        fields = ["url", "slug", "vendor", "vendor_slug", "title", "title_en", "edition", "published", "language",
                  "source_file", "notes", "methodologies", "tables", "html_url", "results", "updated_at"]

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, obj):
        request = self.context.get("request")
        return request.build_absolute_uri(obj.get_absolute_url()) if request else obj.get_absolute_url()

    @extend_schema_field(OpenApiTypes.URI)
    def get_results(self, obj):
        internal = {"include_internal": "true"} if obj.vendor.is_internal else {}
        return _results_url(self.context.get("request"), document=obj.slug, **internal)


# --- Published results ---------------------------------------------------------------------------

def _metric_help(metric):
    text = f"{metric.label} in {metric.unit}; higher is better."
    if metric.description:
        text += f" {metric.description}"
    return text + " Null when the document gives no number."


def _metric_field(name):
    metric = METRICS_BY_NAME[name]
    if metric.kind == "decimal":
        return serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False, read_only=True,
                                        allow_null=True, help_text=_metric_help(metric))
    return serializers.IntegerField(read_only=True, allow_null=True, help_text=_metric_help(metric))


def _printed_field(name):
    m = METRICS_BY_NAME[name]
    return serializers.CharField(read_only=True, allow_null=True,
                                 help_text=f"{m.label} as printed ({m.unit}); null when not given.")


class PrintedSerializer(serializers.Serializer):
    """Each metric exactly as the document prints it ("843.00", "100亿"); null when it gives no number."""

    vars().update({metric.name: _printed_field(metric.name) for metric in METRICS})  # one field per metric (metrics.METRICS)

    def to_representation(self, instance):
        return {m.name: (instance.display(m.name) or None) for m in METRICS}


class DocumentSummarySerializer(serializers.ModelSerializer):
    url = IdentityLinkField(view_name="document-detail", lookup_field="slug")
    vendor = serializers.CharField(source="vendor.slug", read_only=True, help_text="Vendor slug.")
    published = serializers.DateField(read_only=True, help_text="Publication date (YYYY-MM-DD).")
    origin = serializers.ChoiceField(source="vendor.origin", choices=Origin.choices, read_only=True, help_text=ORIGIN_HELP)

    class Meta:
        model = Document
        fields = ["url", "slug", "origin", "vendor", "title", "title_en", "edition", "published"]


class MethodologySummarySerializer(serializers.ModelSerializer):
    url = IdentityLinkField(view_name="methodology-detail", lookup_field="slug")
    statements_per_transaction = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Statements one transaction counts for in QPS.")

    class Meta:
        model = Methodology
        fields = ["url", "slug", "name", "tool", "statements_per_transaction"]


class TableSummarySerializer(TableSerializer):
    class Meta(TableSerializer.Meta):
        fields = ["position", "label", "label_printed", "section", "html_url"]


class FamilySummarySerializer(serializers.ModelSerializer):
    url = FamilyLinkField(source="*")

    class Meta:
        model = InstanceFamily
        fields = ["url", "slug", "name", "name_zh", "arch"]


class FlavorSummarySerializer(FlavorSerializer):
    family = FamilySummarySerializer(read_only=True, allow_null=True)
    html_url = None

    class Meta(FlavorSerializer.Meta):
        fields = ["url", "id", "family", "spec_code", "vcpus", "memory_gb", "storage", "memory_ratio"]


class NullWhenEmptyCharField(serializers.CharField):
    """Text stored as '' when there is none, answered as null."""

    def to_representation(self, value):
        return None if value in ("", None) else super().to_representation(value)


class NullWhenEmptyChoiceField(serializers.ChoiceField):
    """A choice stored as '' when not stated, answered as null (typed: the enum or null)."""

    def to_representation(self, value):
        return None if value in ("", None) else super().to_representation(value)


class ResultOtherLoadSerializer(serializers.Serializer):
    steps = serializers.ListField(child=serializers.DictField(), help_text=(
        "The steps whose server counted more commits than the tool made (step, threads, server_tps, tool_tps, agreement_pct); "
        "empty for a campaign edition's row, whose `runs` say which of its runs saw other load (their steps on each run's "
        "record)."))
    runs = serializers.ListField(child=serializers.IntegerField(), required=False, help_text=(
        "A campaign edition's row (since 3.5.0): the runs of its series whose server saw other load."))
    acknowledged = serializers.BooleanField(help_text="Always true: a run with other load is published only once acknowledged.")
    acknowledged_by = serializers.CharField(help_text="Who acknowledged it when publishing.")


class ResultRepeatsSerializer(serializers.Serializer):
    runs = serializers.ListField(child=serializers.IntegerField(), help_text="The succeeded runs of the repeat group.")
    n = serializers.IntegerField(help_text="How many runs of the group succeeded.")
    mean = serializers.FloatField(allow_null=True, help_text="Mean TPS of the group's runs.")
    stdev = serializers.FloatField(allow_null=True, help_text="Sample standard deviation of their TPS.")
    ci_low = serializers.FloatField(allow_null=True, help_text="95 % interval of the mean (Student's t over the runs).")
    ci_high = serializers.FloatField(allow_null=True, help_text="High end of that interval.")
    cv = serializers.FloatField(allow_null=True, required=False, help_text="Coefficient of variation of their TPS (standard deviation / mean).")
    method = serializers.CharField(help_text="How the interval is computed.")


def _measurement(result):
    return result.internal_measurement or Measurement()


CHANGED_METRICS = [m.name for m in METRICS]  # one enum in the schema (ChangeMetricEnum) for every change's metric


class ChangeSerializer(serializers.Serializer):
    metric = serializers.ChoiceField(choices=CHANGED_METRICS, help_text="The metric that changed.")
    old = serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False, allow_null=True,
                                   help_text="What the older edition printed; null when it printed none.")
    new = serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False, allow_null=True,
                                   help_text="What this result's document prints; null when it prints none.")
    change_percent = serializers.FloatField(allow_null=True, help_text="(new - old) / old in %, one decimal; "
                                            "null without both numbers.")

    def to_representation(self, instance):
        metric, old, new, pct = instance
        return super().to_representation({"metric": metric, "old": old, "new": new, "change_percent": pct})


class OtherEditionSerializer(serializers.Serializer):
    """Another edition of the row (its document, date, row in the API) and what it printed otherwise; `row` names the
    instance's attribute that holds that edition's row."""

    row = None

    def to_representation(self, instance):
        request = self.context.get("request")
        return {"document": instance.document.slug, "published": instance.document.published.isoformat(),
                "result": cached_reverse("result-detail", {"pk": getattr(instance, self.row).pk}, request),
                "changes": self.fields["changes"].to_representation(instance.changes)}


class RevisionSerializer(OtherEditionSerializer):
    """An older edition printed this row's numbers otherwise (whitepaper.editions.revisions)."""

    row = "older"
    document = serializers.CharField(help_text="The older edition's document slug.")
    published = serializers.DateField(help_text="The older edition's date.")
    result = serializers.URLField(help_text="The older edition's row in the API.")
    changes = ChangeSerializer(many=True, help_text="Each metric the two editions print differently.")


class SupersededChangeSerializer(ChangeSerializer):
    old = serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False, allow_null=True,
                                   help_text="What this result's document prints; null when it prints none.")
    new = serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False, allow_null=True,
                                   help_text="What the later edition prints; null when it prints none.")


class SupersededSerializer(OtherEditionSerializer):
    """The vendor's newest later edition printed this row's numbers otherwise (whitepaper.editions.superseded)."""

    row = "newer"
    document = serializers.CharField(help_text="The later edition's document slug.")
    published = serializers.DateField(help_text="The later edition's date.")
    result = serializers.URLField(help_text="The later edition's row in the API.")
    changes = SupersededChangeSerializer(many=True, help_text="Each metric the two editions print differently.")


class ResultListSerializer(serializers.ListSerializer):
    """Reads every listed result's older editions in one query (editions.attach_revisions), not one per row."""

    def to_representation(self, data):
        results = list(data.all() if hasattr(data, "all") else data)
        if "revised_from" in self.child.fields:
            attach_revisions(results, PublishedResult.objects.all())
        elif "superseded_by" in self.child.fields:
            attach_revisions(results, PublishedResult.objects.all())  # revised_from and superseded: one query
        return super().to_representation(results)


class ResultSerializer(serializers.ModelSerializer):
    """One published row, with where it comes from (document, table, section, methodology)."""

    url = IdentityLinkField(view_name="result-detail", help_text="This result in the API.")
    id = serializers.IntegerField(read_only=True, help_text="Stable id of this result.")
    vendor = serializers.CharField(source="table.document.vendor.slug", read_only=True, help_text="Vendor slug.")
    engine = serializers.CharField(source="engine_version.engine.slug", read_only=True, help_text="Engine slug.")
    version = serializers.CharField(source="engine_version.version", read_only=True,
                                    help_text="Engine version as the document names it; empty when not stated.")
    version_url = VersionLinkField(source="engine_version", help_text="The engine version in the API.")
    flavor = FlavorSummarySerializer(read_only=True)
    deployment = NullWhenEmptyChoiceField(
        choices=[d for d in Deployment.values if d], read_only=True, allow_null=True,
        help_text="ha (primary/standby) or single (single instance); null when the document does not say.")
    edition = serializers.CharField(read_only=True, help_text="SQL Server edition(s), joined by +; empty otherwise.")
    iops_depends_on_disk = serializers.BooleanField(
        read_only=True, help_text="True where the document says IOPS depends on the EVS disk and gives no number.")
    tps_per_core = serializers.DecimalField(max_digits=16, decimal_places=2, coerce_to_string=False, read_only=True,
                                            allow_null=True, help_text="TPS per vCPU (transactions per second per vCPU).")
    # The CSV's computed columns, with the column dictionary's words (export.COLUMN_INFO: one definition).
    qps_normalised = serializers.DecimalField(max_digits=20, decimal_places=2, coerce_to_string=False, read_only=True,
                                              allow_null=True, help_text=COLUMN_INFO["qps_normalised"][2].replace(
                                                  "empty without both", "null without both"))
    memory_ratio_derived = NullWhenEmptyCharField(source="flavor.memory_ratio_derived", read_only=True, allow_null=True,
                                                 help_text=COLUMN_INFO["memory_ratio_derived"][2].replace(
                                                     "empty where", "null where"))
    updated_at = serializers.DateTimeField(read_only=True, help_text=(
        "When this row last changed (created, or another number saved; ISO 8601, UTC): for updated_since."))
    printed = PrintedSerializer(source="*", read_only=True)
    revised_from = serializers.SerializerMethodField(
        help_text="Where an older edition of the vendor's numbers printed this row (the same flavour, engine version, "
                  "deployment, edition and data size) with other numbers: that edition and each change; null otherwise.")
    superseded_by = serializers.SerializerMethodField(
        help_text="Where the vendor's newest later edition printed this row (the same flavour, engine version, "
                  "deployment, edition and data size) with other numbers: that edition and each change; null otherwise "
                  "(the mirror of revised_from, on the older row).")
    document = DocumentSummarySerializer(source="table.document", read_only=True)
    table = TableSummarySerializer(read_only=True)
    methodology = MethodologySummarySerializer(source="table.methodology", read_only=True)
    position = serializers.IntegerField(read_only=True, help_text="Row order within its table, from 1.")
    origin = serializers.ChoiceField(choices=Origin.choices, read_only=True, help_text=ORIGIN_HELP)
    vars().update({metric.name: _metric_field(metric.name) for metric in METRICS})  # one field per metric (metrics.METRICS)
    latency_bound_ms = serializers.DecimalField(max_digits=10, decimal_places=2, coerce_to_string=False, read_only=True,
                                                allow_null=True, help_text=(
        "Internal capacity searches: the p95 bound in ms that sustained_tps was measured under (open-loop); null on "
        "every other row (vendor whitepapers state no latency)."))
    # An internal measurement's context (runs/publish.py measurement_of); null/empty for a vendor's row.
    run = serializers.SerializerMethodField(help_text=(
        "Internal measurements: the public record of the run behind the row (set-up, evidence, samples chart); "
        "null for a vendor's row."))
    tps_ci_low = serializers.SerializerMethodField(help_text=(
        "Internal measurements: low end of the 95 % interval of the mean TPS over the runs of a series (Student's t over "
        "the runs); null for one run (n = 1: the spread between runs is unknown) or a vendor's row."))
    tps_ci_high = serializers.SerializerMethodField(help_text="High end of that interval.")
    client_bound = serializers.SerializerMethodField(help_text=(
        "Internal measurements: the client host was above 90 % CPU for most of a step (the result may understate the "
        "target); null when not measured or a vendor's row."))
    other_load = serializers.SerializerMethodField(help_text=(
        "Internal measurements: the server saw other load during the run (acknowledged when published); null otherwise."))
    latency_caveat = serializers.SerializerMethodField(help_text=(
        "Internal measurements: why the run's latency figures are not to be trusted; empty when they are."))
    repeats = serializers.SerializerMethodField(help_text=(
        "Internal measurements from a repeat group: the group's runs, mean, standard deviation, interval and coefficient "
        "of variation; null otherwise."))
    client_disturbed = serializers.SerializerMethodField(help_text=(
        "Internal measurements: the runs of the row whose client host was loaded beyond its cores as they started, and who "
        "acknowledged it when publishing (runs, acknowledged, acknowledged_by); null otherwise."))
    runs_n = serializers.SerializerMethodField(help_text=(
        "Internal measurements: how many runs the row's figures are the mean of (1: a single run, no interval); null for "
        "a vendor's row."))
    tps_cv = serializers.SerializerMethodField(help_text=(
        "Internal measurements: the coefficient of variation of TPS over the runs; null for one run or a vendor's row."))

    class Meta:
        model = PublishedResult
        fields = ["url", "id", "origin", "vendor", "engine", "version", "version_url", "flavor", "deployment", "edition",
                  *[m.name for m in METRICS], "latency_bound_ms", "iops_depends_on_disk", "tps_per_core", "qps_normalised",
                  "memory_ratio_derived", "updated_at", "printed", "revised_from", "superseded_by",
                  "document", "table", "position", "methodology",
                  "run", "tps_ci_low", "tps_ci_high", "client_bound", "other_load", "latency_caveat", "repeats", "runs_n", "tps_cv",
                  "client_disturbed"]
        list_serializer_class = ResultListSerializer

    @extend_schema_field(RevisionSerializer(allow_null=True))
    def get_revised_from(self, obj):
        attach_revisions([obj], PublishedResult.objects.all())  # a no-op when the list already read them
        return None if obj.revised_from is None else self.revision_serializer.to_representation(obj.revised_from)

    @extend_schema_field(SupersededSerializer(allow_null=True))
    def get_superseded_by(self, obj):
        attach_revisions([obj], PublishedResult.objects.all())  # sets superseded too; a no-op when the list read them
        return None if obj.superseded is None else self.superseded_serializer.to_representation(obj.superseded)

    @cached_property
    def superseded_serializer(self):
        return SupersededSerializer(context=self.context)

    @cached_property
    def revision_serializer(self):
        """One for every row of a list, as a ListSerializer keeps one child: a serializer built per row (its fields
        copied and bound) cost more than the row's other fields at a million rows, where most rows name one."""
        return RevisionSerializer(context=self.context)

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_run(self, obj):
        url = obj.run_record_url
        request = self.context.get("request")
        return request.build_absolute_uri(url) if url and request else url

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_tps_ci_low(self, obj):
        return obj.tps_interval[0]

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_tps_ci_high(self, obj):
        return obj.tps_interval[1]

    @extend_schema_field(inline_serializer("ClientDisturbed", {
        "runs": serializers.ListField(child=serializers.IntegerField(), help_text="The row's runs that started on a busy client."),
        "acknowledged": serializers.BooleanField(help_text="Always true: a disturbed run is published only when acknowledged."),
        "acknowledged_by": serializers.CharField(help_text="Who acknowledged it (username).")}, allow_null=True))
    def get_client_disturbed(self, obj):
        return _measurement(obj).disturbed

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_runs_n(self, obj):
        return obj.runs_n

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_tps_cv(self, obj):
        return obj.tps_cv

    @extend_schema_field(serializers.BooleanField(allow_null=True))
    def get_client_bound(self, obj):
        return _measurement(obj).client_bound

    @extend_schema_field(ResultOtherLoadSerializer(allow_null=True))
    def get_other_load(self, obj):
        return _measurement(obj).other_load

    @extend_schema_field(serializers.CharField())
    def get_latency_caveat(self, obj):
        return _measurement(obj).latency_caveat or ""

    @extend_schema_field(ResultRepeatsSerializer(allow_null=True))
    def get_repeats(self, obj):
        return _measurement(obj).repeats


class FlavorDetailSerializer(FlavorSerializer):
    """A flavour with every published row of it and the same size elsewhere (whitepaper.flavors.flavour_sheet:
    the flavour page's content). `instance`: a FlavourSheet."""

    results = ResultSerializer(many=True, read_only=True, help_text=(
        "Every published row of this flavour (each edition and methodology), in document order, each with its "
        "revised_from."))
    same_size = ResultSerializer(many=True, read_only=True, help_text=(
        "The newest row per variant of the other flavours with these vCPUs and memory (other families, engines, "
        "vendors)."))

    class Meta(FlavorSerializer.Meta):
        fields = [*FlavorSerializer.Meta.fields, "results", "same_size"]

    def to_representation(self, sheet):
        answer = super().to_representation(sheet.flavor)
        answer["results"] = ResultSerializer(sheet.results, many=True, context=self.context).data
        answer["same_size"] = ResultSerializer(sheet.same_size, many=True, context=self.context).data
        return answer
