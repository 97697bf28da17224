"""Forms of the customer pages (the explorer's filters are whitepaper.filters.ResultFilter)."""

from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext

from .display import edition_name


class FigureField(forms.DecimalField):
    """A figure as the documents print them (DecimalField(max_digits=16, decimal_places=2)): one too large is
    refused by saying how large it may be, not "no more than 16 digits in total" (1e300 has one digit)."""

    def run_validators(self, value):
        largest = Decimal(10) ** (self.max_digits - self.decimal_places) - Decimal(1).scaleb(-self.decimal_places)
        if value is not None and value.is_finite() and value > largest:
            raise forms.ValidationError(_("Too large: at most %(max)s.") % {"max": f"{largest:,}"}, code="max_value")
        super().run_validators(value)
from .metrics import QPS_PUBLISHED_LABEL, SIZING_METRIC_NAMES, metric_label
from .models import EngineVersion, PublishedResult
from .queries import version_sort_key

# Every metric a document publishes for an engine can be sized for, named as the export's columns (tps, qps,
# tpm, ro_qps, rw_qps): PPAS and Alibaba PostgreSQL print read-only and read-write QPS only.
# Read-only and read-write QPS name their export column too (English pages): readers match them with the CSV.
SIZING_COLUMN_LABELS = {"ro_qps": _("Read-only QPS (ro_qps)"), "rw_qps": _("Read-write QPS (rw_qps)")}
SIZING_METRICS = [(name, SIZING_COLUMN_LABELS.get(name) or metric_label(name)) for name in SIZING_METRIC_NAMES]
# Compare shows QPS as published beside QPS normalised: the published one says so.
COMPARE_METRICS = [(name, QPS_PUBLISHED_LABEL if name == "qps" else metric_label(name))
                   for name in ("tps", "qps", "qps_normalised", "tps_per_core", "tpm", "ro_qps", "rw_qps")]


class SizingForm(forms.Form):
    """"Which is the smallest flavour that reaches N TPS (or QPS) for this engine/version?\""""

    engine = forms.ChoiceField(label=_("Engine"))
    version = forms.CharField(label=_("Version"), required=False, max_length=30,
                              help_text=_("e.g. 5.7; empty for every version"))
    # Not required: a URL without `metric` asks about TPS, as the select shows.
    metric = forms.ChoiceField(label=_("Metric"), choices=SIZING_METRICS, initial="tps", required=False)
    target = FigureField(label=_("At least"), min_value=0, max_digits=16, decimal_places=2)
    # Issue 35.5: with a bound the question is "the smallest flavour sustaining `target` TPS with p95 <= the bound",
    # answered from published capacity searches only (sizing.LATENCY_METRIC), never from closed-loop TPS.
    latency_bound_ms = forms.DecimalField(label=_("p95 at most (ms)"), required=False, min_value=Decimal("0.01"),
                                          max_value=600_000, max_digits=10, decimal_places=2,
                                          help_text=_("Optional: answered from open-loop capacity searches only"))
    # A vendor or a document alone (issue 49.4): the answers then come from figures measured one way.
    vendor = forms.CharField(label=_("Vendor"), required=False, max_length=50, widget=forms.HiddenInput)
    document = forms.CharField(label=_("Document"), required=False, max_length=80, widget=forms.HiddenInput)
    # SQL Server: its licence edition and HA/single change the answer (Web 27,000 TPS vs Enterprise+Standard 27,500).
    deployment = forms.ChoiceField(label=_("Deployment"), required=False, choices=[
        ("", _("any")), ("ha", _("HA (primary/standby)")), ("single", _("Single instance"))])
    edition = forms.ChoiceField(label=_("Edition"), required=False, help_text=_("SQL Server's licence edition"))
    include_internal = forms.BooleanField(label=_("Include internal measurements"), required=False,
                                          help_text=_("This dashboard's own benchmark runs, besides the vendors' documents"))
    # Absent: true (each flavour's newest figure answers); `latest=false` answers from every edition.
    latest = forms.NullBooleanField(label=_("Newest edition only"), required=False, widget=forms.HiddenInput)

    def __init__(self, *args, engines=(), editions=None, vendors=None, documents=None, **kwargs):
        """`editions`: the recorded SQL Server editions to choose from; None: the short form (home page), without
        deployment and edition."""
        super().__init__(*args, **kwargs)
        self.fields["engine"].choices = [(e.slug, e.name) for e in engines]
        if editions is None:  # the home page's short form: no latency bound either (the sizing page has it)
            del self.fields["deployment"], self.fields["edition"], self.fields["latency_bound_ms"]
        else:
            self.fields["edition"].choices = [("", _("any"))] + [(e, edition_name(e)) for e in editions]
        for name, choices in (("vendor", vendors), ("document", documents)):
            if choices is not None:  # the sizing page: a menu (any unknown value still reaches the filter, which refuses it)
                self.fields[name].widget = forms.Select(choices=[("", _("any"))] + list(choices))

    def clean_metric(self):
        return self.cleaned_data.get("metric") or "tps"

    def clean(self):
        """A version the engine has no published results for is an unknown version, and a metric no
        document publishes for the engine (and version) an unpublished metric, naming those published:
        not "no flavour reaches the target"."""
        data = super().clean()
        engine, version = data.get("engine"), data.get("version")
        if engine and version:
            known = sorted(EngineVersion.objects.filter(engine__slug=engine, results__isnull=False)
                           .values_list("version", flat=True).distinct(), key=version_sort_key)
            if version not in known:
                self.add_error("version", _("Unknown version %(version)s for this engine; published: %(known)s.") % {
                    "version": version, "known": pgettext("list separator", ", ").join(v for v in known if v)})
                return data
        metric = data.get("metric")
        if data.get("latency_bound_ms") is not None:
            # A latency bound sizes for TPS sustained under it: whether any published figure states a latency is the
            # answer's to say (sizing.smallest_flavours), not a form error.
            if self.data.get("metric") not in (None, "", "tps"):
                self.add_error("metric", _("A latency bound sizes for TPS (sustained with p95 at or below the bound); "
                                           "leave the metric at TPS."))
            return data
        if engine and metric:
            published = PublishedResult.objects.visible(bool(data.get("include_internal"))).published_metrics(
                [name for name, _label in SIZING_METRICS], engine=engine, version=version or None)
            if metric not in published:
                labels = dict(SIZING_METRICS)
                self.add_error("metric", _("No document publishes %(metric)s for this engine and version; published: "
                                           "%(known)s.") % {
                    "metric": labels[metric],
                    "known": pgettext("list separator", ", ").join(str(labels[m]) for m in published) or "-"})
        return data
