"""The catalogue of published results: who published what, measured how, on which flavour."""

import re
import secrets
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, OrderBy, Q
from django.urls import reverse
from django.utils import timezone
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from .choices import Architecture, Deployment, Origin  # noqa: F401  (the models' vocabularies, named from here too)
from . import webhook_rules
from .links import linked
from .measurement import Measurement
from .metrics import INDEXED_METRICS, METRICS, METRICS_BY_NAME, QPS_NORMALISED_STATEMENTS
from .queries import (DOCUMENT_ORDER, DOCUMENTS_NEWEST_FIRST, DocumentQuerySet, PublishedResultQuerySet,
                      version_order_key)
from .variants import EDITIONS_HOT_ROWS

MEMORY_RATIO_RE = re.compile(r"^1:[1-9][0-9]*$")


def validate_memory_ratio(value):
    if value and not MEMORY_RATIO_RE.match(value):
        raise ValidationError(_("Memory ratio must look like 1:N, got %(value)r."), params={"value": value})


# The vendor under which runs/publish.py files this dashboard's own measurements.
INTERNAL_VENDOR_SLUG = "internal"


class Vendor(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    name_zh = models.CharField(max_length=100, blank=True)
    # Where a result comes from is its document's vendor's origin: the one definition of the rule.
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.VENDOR, editable=False,
                              help_text=_("Set from the slug on every save: 'internal' is this dashboard's own."))

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        # The vendor of published benchmark runs (runs/publish.py) is the internal one; every other
        # vendor publishes documents. Written on every save, whoever saves (importer, publishing, admin).
        self.origin = Origin.INTERNAL if self.slug == INTERNAL_VENDOR_SLUG else Origin.VENDOR
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "slug" in update_fields:
            kwargs["update_fields"] = {*update_fields, "origin"}
        super().save(*args, **kwargs)

    @property
    def is_internal(self):
        return self.origin == Origin.INTERNAL


class Document(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    vendor = models.ForeignKey(Vendor, on_delete=models.PROTECT, related_name="documents")
    title = models.CharField(max_length=200, help_text=_("As printed."))
    title_en = models.CharField(max_length=200, blank=True)
    edition = models.CharField(max_length=20, blank=True)
    published = models.DateField(help_text=_("Publication date printed on the document."))
    language = models.CharField(max_length=20, default="zh-hans")
    source_file = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True, help_text=_("Transcription notes, English."))
    notes_zh = models.TextField(blank=True, help_text=_("The notes in Chinese, for Chinese pages."))
    # Bumped by every write to the document or anything in it (whitepaper/freshness.py): Last-Modified, caches.
    changed_at = models.DateTimeField(auto_now_add=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = list(DOCUMENTS_NEWEST_FIRST)  # newest first: queries.document_newness

    def __str__(self):
        edition = f" ({self.edition})" if self.edition else ""
        return f"{self.vendor.name}: {self.title}{edition}, {self.published:%Y-%m-%d}"

    def get_absolute_url(self):
        return reverse("whitepaper:document", args=[self.slug])


class Methodology(models.Model):
    class Tool(models.TextChoices):
        SYSBENCH = "sysbench", "sysbench"
        PGBENCH = "pgbench", "pgbench"
        HAMMERDB = "hammerdb", "HammerDB"

    slug = models.SlugField(max_length=100, unique=True)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="methodologies")
    name = models.CharField(max_length=200, help_text=_("English."))
    name_zh = models.CharField(max_length=200, blank=True, help_text=_("Chinese rendering of the name."))
    tool = models.CharField(max_length=20, choices=Tool.choices, blank=True, help_text=_("Empty when the document does not say."))
    tool_version = models.CharField(max_length=40, blank=True)
    workload = models.CharField(max_length=200, blank=True)
    workload_zh = models.CharField(max_length=200, blank=True)
    tables = models.PositiveIntegerField(null=True, blank=True)
    rows_per_table = models.PositiveBigIntegerField(null=True, blank=True)
    threads = models.PositiveIntegerField(null=True, blank=True)
    duration_s = models.PositiveIntegerField(null=True, blank=True)
    report_interval_s = models.PositiveIntegerField(null=True, blank=True)
    client = models.CharField(max_length=300, blank=True)
    client_zh = models.CharField(max_length=300, blank=True)
    statements_per_transaction = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text=_("What one transaction counts as in QPS (Huawei 20, Alibaba 18).")
    )
    parameters = models.JSONField(default=dict, blank=True)
    parameters_zh = models.JSONField(
        default=dict, blank=True, help_text=_("Chinese renderings of parameter values that are written in English.")
    )
    description = models.TextField(blank=True, help_text=_("English: environment, steps, SQL mix, metric definitions."))
    description_zh = models.TextField(blank=True, help_text=_("The description in Chinese, for Chinese pages."))
    # Set-up values the transcription inferred rather than read as stated (the 2025 MySQL run's threads and duration,
    # stated only in its cleanup command): field name -> where the value comes from (English; Chinese beside it).
    inferred = models.JSONField(default=dict, blank=True, help_text=_("Inferred values: field -> source, English."))
    inferred_zh = models.JSONField(default=dict, blank=True, help_text=_("The sources in Chinese."))

    class Meta:
        ordering = ["document", "slug"]
        verbose_name_plural = "methodologies"

    def __str__(self):
        return self.name

    def text(self, field):
        """workload, client or description in the active language: (text, written in Chinese). The Chinese text on
        Chinese pages where there is one, else the English transcription (display and runs.reproduce say it)."""
        english, chinese_text = getattr(self, field), getattr(self, f"{field}_zh", "")
        if (translation.get_language() or "").startswith("zh") and chinese_text:
            return chinese_text, True
        return english, False


class Engine(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=50)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class EngineVersion(models.Model):
    engine = models.ForeignKey(Engine, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=30, blank=True, help_text=_("As the document names it; empty if not stated."))
    # The version as a byte-ordered string (queries.version_order_key, collation "C" on PostgreSQL), set on
    # save: SQL sorts versions as versions (5.7 < 8.0, 9.6 < 10), not as text.
    order_key = models.CharField(max_length=200, default="", editable=False)

    class Meta:
        ordering = ["engine__name", "order_key"]
        constraints = [models.UniqueConstraint(fields=["engine", "version"], name="unique_engine_version")]

    def __str__(self):
        return f"{self.engine.name} {self.version}".strip()

    def save(self, *args, **kwargs):
        self.order_key = version_order_key(self.version)
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "order_key"}
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return reverse("whitepaper:engine-version", args=[self.engine.slug, self.version])


class InstanceFamily(models.Model):
    vendor = models.ForeignKey(Vendor, on_delete=models.PROTECT, related_name="families")
    slug = models.SlugField()
    name = models.CharField(max_length=100)
    name_zh = models.CharField(max_length=100, blank=True)
    arch = models.CharField(max_length=10, choices=Architecture.choices, default=Architecture.X86)

    class Meta:
        ordering = ["vendor__name", "name"]
        verbose_name_plural = "instance families"
        constraints = [models.UniqueConstraint(fields=["vendor", "slug"], name="unique_family_per_vendor")]

    def __str__(self):
        return f"{self.name} ({self.name_zh})" if self.name_zh else self.name


class Flavor(models.Model):
    vendor = models.ForeignKey(Vendor, on_delete=models.PROTECT, related_name="flavors")
    family = models.ForeignKey(InstanceFamily, on_delete=models.PROTECT, null=True, blank=True, related_name="flavors")
    spec_code = models.CharField(max_length=60, blank=True, db_index=True)
    vcpus = models.PositiveIntegerField()
    memory_gb = models.PositiveIntegerField()
    storage = models.CharField(max_length=20, blank=True, help_text=_("As printed in the spec, e.g. 2T."))
    memory_ratio = models.CharField(max_length=10, blank=True, validators=[validate_memory_ratio],
                                    help_text=_("GB per vCPU as the document groups it, 1:N."))

    class Meta:
        ordering = ["vendor__name", "vcpus", "memory_gb", "spec_code"]
        _identity = ["vendor", "spec_code", "vcpus", "memory_gb", "storage", "memory_ratio"]
        constraints = [
            models.UniqueConstraint(fields=["family", *_identity], condition=Q(family__isnull=False),
                                    name="unique_flavor_in_family"),
            models.UniqueConstraint(fields=_identity, condition=Q(family__isnull=True),
                                    name="unique_flavor_without_family"),
            models.CheckConstraint(condition=Q(vcpus__gt=0), name="flavor_vcpus_positive"),
            models.CheckConstraint(condition=Q(memory_ratio="") | Q(memory_ratio__regex=r"^1:[1-9][0-9]*$"),
                                   name="flavor_memory_ratio_form"),
        ]

    @property
    def ratio_is_derived(self):
        return not self.memory_ratio

    @property
    def ratio(self):
        """The memory ratio as the document groups it, else derived from vCPUs and memory (ratio_is_derived)."""
        return self.memory_ratio or derived_memory_ratio(self.vcpus, self.memory_gb)

    @property
    def memory_ratio_derived(self):
        """The ratio derived from the size where the document groups the flavour by none, else '' (the export's
        column of that name, and the API's field)."""
        return self.ratio if self.ratio_is_derived else ""

    def get_absolute_url(self):
        return reverse("whitepaper:flavor", args=[self.pk])

    @property
    def readable_url(self):
        """The flavour's page by name (issue 49.9): /flavors/alibaba/rds.mysql.c1.xlarge/ by its spec code, else
        /flavors/huawei/dedicated/64vcpu-256gb/ by family and size (Flavor.address_lookup reads it back)."""
        if self.spec_code:
            return reverse("whitepaper:flavor-by-code", args=[self.vendor.slug, self.spec_code])
        return reverse("whitepaper:flavor-by-size",
                       args=[self.vendor.slug, self.family.slug if self.family else "", self.vcpus, self.memory_gb])

    @staticmethod
    def address_lookup(vendor, spec_code=None, family=None, vcpus=None, memory_gb=None):
        """The filter of the flavour a readable address names (readable_url): its vendor and spec code, or its
        vendor, family ('' for none) and size among the flavours without a spec code."""
        if spec_code is not None:
            return {"vendor__slug": vendor, "spec_code": spec_code}
        lookup = {"vendor__slug": vendor, "spec_code": "", "vcpus": vcpus, "memory_gb": memory_gb}
        return {**lookup, "family__slug": family} if family else {**lookup, "family__isnull": True}

    def __str__(self):
        size = f"{self.vcpus} vCPU / {self.memory_gb} GB"
        return f"{self.spec_code} ({size})" if self.spec_code else size


def derived_memory_ratio(vcpus, memory_gb):
    """GB per vCPU as 1:N, computed from the size: the ratio of a flavour whose document groups by none
    (Alibaba's). One decimal when it is not whole (30 vCPUs, 220 GB: 1:7.3)."""
    n = Decimal(memory_gb) / Decimal(vcpus)
    return f"1:{n.quantize(Decimal('1')) if n == n.to_integral_value() else n.quantize(Decimal('0.1'))}"


def memory_ratio_q(ratios):
    """Flavours of these ratios: the document's own ratio, or the derived one where the document states
    none (derived_memory_ratio, as a query: memory = N x vCPUs)."""
    q = Q(memory_ratio__in=ratios)
    for ratio in ratios:
        n = ratio.split(":", 1)[1]
        if n.isdigit():
            q |= Q(memory_ratio="", memory_gb=F("vcpus") * int(n))
    return q


class NullsLastIndex(models.Index):
    """An index whose DESC columns keep NULLs last, as the API sorts. SQLite (the laptop default) cannot
    say NULLS LAST in an index, and its DESC already puts NULLs last, so there it is a plain DESC."""

    def create_sql(self, model, schema_editor, using="", **kwargs):
        index = self
        if not schema_editor.connection.vendor == "postgresql":
            index = self.clone()
            index.expressions = tuple(
                OrderBy(e.expression, descending=e.descending) if isinstance(e, OrderBy) else e
                for e in self.expressions
            )
        return models.Index.create_sql(index, model, schema_editor, using=using, **kwargs)


def _metric_field(name):
    metric = METRICS_BY_NAME[name]
    help_text = f"{metric.unit}; {'higher' if metric.higher_is_better else 'lower'} is better"
    if metric.kind == "int":
        field = models.PositiveIntegerField
    elif metric.kind == "rows":
        field = models.PositiveBigIntegerField
    else:
        return models.DecimalField(metric.label, max_digits=16, decimal_places=2, null=True, blank=True,
                                   help_text=help_text)
    return field(metric.label, null=True, blank=True, help_text=help_text)


class ResultTable(models.Model):
    """One table of a document, as printed: its label, section and the columns it shows."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="tables")
    position = models.PositiveIntegerField(help_text=_("Order in the document, from 1."))
    label = models.CharField(max_length=200, help_text=_("As printed, e.g. 表 1-1 CPU:内存=1:2."))
    label_printed = models.BooleanField(default=True, help_text=_("False when the document prints no label."))
    section = models.CharField(max_length=200, blank=True, help_text=_("The heading it sits under, as printed."))
    # English renderings of the printed (Chinese) label and section, for English pages; the printed
    # text stays the citation, shown beside them.
    label_en = models.CharField(max_length=200, blank=True)
    section_en = models.CharField(max_length=200, blank=True)
    # The heading above the section that names the engine and version ("1.2 RDS for MySQL 5.6 测试数据"),
    # as printed; empty when the section names them itself.
    heading = models.CharField(max_length=200, blank=True, help_text=_("The engine heading above the section, as printed."))
    heading_en = models.CharField(max_length=200, blank=True)
    version_example = models.BooleanField(default=False, help_text=_(
        "The document names the engine version only as an example (Alibaba 2019: \"PPAS 10\", \"PostgreSQL 10.0\" "
        "when changing parameters), not as the version tested."))
    methodology = models.ForeignKey(Methodology, on_delete=models.PROTECT, related_name="result_tables")
    columns = models.JSONField(default=list, help_text=_("Column names in the document's order."))
    notes = models.TextField(blank=True, help_text=_("Transcription notes, English."))
    notes_zh = models.TextField(blank=True, help_text=_("The notes in Chinese, for Chinese pages."))

    class Meta:
        ordering = ["document", "position"]
        constraints = [
            models.UniqueConstraint(fields=["document", "position"], name="unique_table_position"),
            models.UniqueConstraint(fields=["document", "label"], name="unique_table_label"),
        ]

    def __str__(self):
        return f"{self.document.slug}: {self.label}"

    @property
    def anchor(self):
        return f"table-{self.position}"

    def get_absolute_url(self):
        return f"{self.document.get_absolute_url()}#{self.anchor}"


class PublishedResult(models.Model):
    """One row of a published table: a flavour's numbers under one methodology."""

    objects = PublishedResultQuerySet.as_manager()

    table = models.ForeignKey(ResultTable, on_delete=models.CASCADE, related_name="results")
    position = models.PositiveIntegerField(help_text=_("Row order within the table, from 1."))
    engine_version = models.ForeignKey(EngineVersion, on_delete=models.PROTECT, related_name="results")
    flavor = models.ForeignKey(Flavor, on_delete=models.PROTECT, related_name="results")
    deployment = models.CharField(max_length=10, choices=Deployment.choices, blank=True)
    edition = models.CharField(max_length=60, blank=True, help_text=_("SQL Server edition(s), joined by +."))
    iops_depends_on_disk = models.BooleanField(
        default=False, help_text=_("The document says IOPS depends on the EVS disk and gives no number.")
    )
    # Whether this row is its variant's newest edition (queries.newest_rank), kept by whitepaper/newest.py
    # on every catalogue write: the explorer's default "newest edition only" is then an indexed filter.
    is_newest = models.BooleanField(default=False, db_default=False, editable=False)
    # Where the row stands in document order (queries.DOCUMENT_ORDER), kept by whitepaper/order_key.py.
    document_order_key = models.CharField(max_length=300, default="", db_default="", editable=False)
    # Each metric exactly as the document prints it ("843.00", "100亿"), for display and export.
    printed = models.JSONField(default=dict, blank=True)
    # An internal measurement's context, kept with the row when it is published (runs/publish.py
    # measurement_of): the run behind it, its flags, its TPS interval, a repeat group's spread. Empty for a
    # vendor's row. Read through internal_measurement (whitepaper.measurement.Measurement), never by its keys.
    measurement = models.JSONField(default=dict, blank=True, db_default={})
    # When the row itself last changed (created, or saved with another number): the API's updated_since. Bulk
    # recomputations of the derived columns above (is_newest, document_order_key) are not changes of the row.
    updated_at = models.DateTimeField(default=timezone.now, db_index=True, editable=False)

    # One column per metric, declared once in metrics.METRICS (a class body's namespace takes them by name).
    vars().update({metric.name: _metric_field(metric.name) for metric in METRICS})
    # The p95 bound sustained_tps was measured under (runs/capacity.py); null on every other row.
    latency_bound_ms = models.DecimalField(_("p95 bound (ms)"), max_digits=10, decimal_places=2, null=True, blank=True,
                                           help_text=_("The p95 bound of sustained_tps, in ms; empty on other rows."))

    class Meta:
        ordering = DOCUMENT_ORDER
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="unique_result_position"),
            *[
                models.CheckConstraint(condition=Q(**{f"{m.name}__gte": 0}) | Q(**{f"{m.name}__isnull": True}),
                                       name=f"result_{m.name}_non_negative")
                for m in METRICS if m.kind == "decimal"
            ],
        ]
        indexes = [
            # Counting a filtered list is an index-only scan: engine version and flavour ids, and the table
            # that tells a vendor's row from an internal measurement (queries.visible).
            models.Index(fields=["engine_version", "flavor", "table"], name="result_version_flavor_table"),
            # Ranges of TPS / QPS (the filters), and the ascending sorts (the id breaks ties: see below).
            models.Index(fields=["tps", "id"], name="result_tps"),
            models.Index(fields=["qps", "id"], name="result_qps"),
            # API at a million rows: a page of one engine version by TPS stops after a page (benchmarks/api_scale.py).
            NullsLastIndex(F("engine_version"), F("tps").desc(nulls_last=True), F("id"), name="result_version_tps_desc"),
            # Engine-wide and unfiltered lists by TPS (several engine versions): the cursor's page walks this
            # index and stops after a page whatever the number of rows.
            NullsLastIndex(F("tps").desc(nulls_last=True), F("id"), name="result_tps_desc"),
            # "Newest edition only" (latest=true, the explorer's default) per engine version.
            models.Index(fields=["engine_version"], name="result_newest_version", condition=Q(is_newest=True)),
            # Document order (the default everywhere): a page at any depth walks this index, and the offset
            # is counted in it alone (table: the vendor/internal filter, queries.visible; an index-only scan).
            models.Index(fields=["document_order_key", "id"], include=["table"], name="result_document_order"),
            # A row's older editions, newest first (editions.revision_candidates): a walk back from its document
            # that stops at the first older edition printing it otherwise, however many editions print the flavour.
            # (Hot rows as an index expression: an equality the walk starts at; NULL as -1, never a row count.)
            models.Index(F("engine_version"), F("flavor"), EDITIONS_HOT_ROWS, F("document_order_key"), name="result_editions"),
            # The explorer's sorts on a column of the row (queries.SORTS; either direction, missing values last, the id
            # breaking ties): a page, the first or the one after a cursor, walks the index and stops after a page
            # (EXPLAIN ANALYZE at 10^5 rows: 30-100 ms for page 1 and 0.3-0.8 s for the next one without it, 1-3 ms
            # with it). TPS and QPS have theirs above. Sorts on the flavour, engine, vendor, document or table sort by
            # another table's columns: no index of this table serves them.
            NullsLastIndex(F("qps").desc(nulls_last=True), F("id"), name="result_qps_desc"),
            *[index for name in INDEXED_METRICS  # metrics.METRICS: each metric's pair, but TPS's and QPS's above
              for index in (models.Index(F(name), F("id"), name=f"result_{name}_asc"),
                            NullsLastIndex(F(name).desc(nulls_last=True), F("id"), name=f"result_{name}_desc"))],
            models.Index(F("deployment"), F("edition"), F("id"), name="result_deployment_asc"),
            NullsLastIndex(F("deployment").desc(nulls_last=True), F("edition").desc(nulls_last=True), F("id"),
                           name="result_deployment_desc"),
            # The edition filter checks that a value exists (most results have none).
            models.Index(fields=["edition"], name="result_edition", condition=~Q(edition="")),
        ]

    @classmethod
    def from_db(cls, db, field_names, values, **kwargs):
        instance = super().from_db(db, field_names, values, **kwargs)
        # whitepaper/newest.py: a saved row moved to another engine version refreshes the old one too.
        instance._loaded_engine_version_id = instance.__dict__.get("engine_version_id")
        return instance

    def save(self, *args, **kwargs):
        self.updated_at = timezone.now()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "updated_at"}
        super().save(*args, **kwargs)

    def __str__(self):
        return f"{self.table} #{self.position}"

    @property
    def document(self):
        return self.table.document

    @property
    def methodology(self):
        return self.table.methodology

    @property
    def origin(self):
        """Origin.VENDOR or Origin.INTERNAL: its document's vendor's (Vendor.origin)."""
        return self.table.document.vendor.origin

    @property
    def is_internal(self):
        return self.origin == Origin.INTERNAL

    def display(self, metric_name):
        """The metric as printed, '' when the document gives no number."""
        if metric_name in self.printed:
            return self.printed[metric_name]
        value = getattr(self, metric_name)
        return "" if value is None else str(value)

    @property
    def internal_measurement(self):
        """The internal row's context read (whitepaper.measurement.Measurement), None for a vendor's row."""
        return Measurement.from_json(self.measurement)

    @property
    def tps_interval(self):
        """(low, high) of the internal measurement's 95 % TPS interval over its series' runs, or (None, None): a
        vendor's row, or one run (n = 1: the spread between runs is unknown)."""
        m = self.internal_measurement
        return m.tps_interval if m else (None, None)

    @property
    def runs_n(self):
        """How many runs an internal row's figures are the mean of (1: a single run); None for a vendor's row."""
        m = self.internal_measurement
        return m.runs_n if m else None

    @property
    def tps_cv(self):
        """The coefficient of variation of TPS over an internal row's runs; None with one run or for a vendor's row."""
        m = self.internal_measurement
        return m.tps_cv if m else None

    @property
    def run_record_url(self):
        """The public record of the run behind an internal row (set-up, evidence, samples), or None."""
        m = self.internal_measurement
        return linked("run_record", m.run) if m and m.run else None

    @property
    def reproduce_url(self):
        """Where an operator runs this row's methodology against a target of theirs (staff's "reproduce"), or None."""
        page = linked("reproduce")
        return f"{page}?reproduce={self.pk}" if page else None

    @property
    def qps_definition(self):
        """Statements per transaction this row's QPS counts (its methodology's), None when not stated."""
        return self.table.methodology.statements_per_transaction if self.qps is not None else None

    @property
    def qps_normalised(self):
        """QPS on one definition (metrics.QPS_NORMALISED_STATEMENTS per transaction); None without QPS or
        without a stated definition. Computed, never a printed number: labelled wherever shown."""
        if self.qps_definition is None:
            return None
        return (self.qps * QPS_NORMALISED_STATEMENTS / Decimal(self.qps_definition)).quantize(Decimal("0.01"))

    @property
    def tps_per_core(self):
        if self.tps is None:
            return None
        return (self.tps / Decimal(self.flavor.vcpus)).quantize(Decimal("0.01"))


# --- Webhooks (whitepaper/webhooks.py: events, URL rule, signing, delivery) ------------------------------------

class Webhook(models.Model):
    """A receiver registered by staff (the admin) for some events; every payload is signed with its secret."""

    name = models.CharField(max_length=100)
    url = models.URLField("URL", max_length=500, validators=[webhook_rules.check_url], help_text=_("http or https, no user name or password in it; a private "
                                                      "address only where WEBHOOK_ALLOW_PRIVATE_ADDRESSES allows it."))
    events = models.JSONField(default=list, validators=[webhook_rules.check_events],
                              help_text=_("The events sent to it, a list: document.imported, run.finished, run.published, regression.found."))
    secret = models.CharField(max_length=128, editable=False,
                              help_text=_("HMAC-SHA256 key of the X-Perfdash-Signature header."))
    active = models.BooleanField(default=True)
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)
    disabled_reason = models.TextField(blank=True, editable=False)
    disabled_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        if not self.secret:
            self.secret = secrets.token_hex(32)
        super().save(*args, **kwargs)


class WebhookDelivery(models.Model):
    """One event sent (or being sent) to one webhook: the delivery log."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        SUCCEEDED = "succeeded", _("succeeded")
        FAILED = "failed", _("failed")
        # The hook was disabled when the event happened (or before it was sent): kept, for staff to redeliver.
        UNDELIVERED = "undelivered", _("undelivered")

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=50)
    payload = models.JSONField()
    status = models.CharField(max_length=11, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = _("webhook deliveries")

    def __str__(self):
        return f"{self.event} -> {self.webhook} ({self.status})"
