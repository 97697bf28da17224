"""Sizing, one definition for the sizing page and `/api/v1/sizing/`: the question and its validation
(`SizingQuestion`, `question`; the page's form adds its menus), and which is the smallest published
flavour whose TPS (or QPS) reaches a target, per vendor, family, memory ratio and deployment
(`queries.smallest_reaching_once`: a flavour several documents print is listed once, the newest
document answering, the others kept on it as `also`).

By default (`latest` absent or true) only each flavour's newest published figure can answer: a figure an
older edition printed and a newer one revised (PostgreSQL 12 dedicated 64 vCPU: 10929.30 TPS in Huawei's
2023 paper, 8839.4 in its 2025 paper) never reaches a target on the old number. The older editions' rows
stay on the answer as `also`, and `revised` names the newest of them that printed another number.
`latest=false` answers from every edition, as the explorer does.

With a latency bound (issue 35.5) the question is "the smallest flavour sustaining N TPS with p95 at or below L ms":
only published capacity searches answer (LATENCY_METRIC, their bound at or below L), internal measurements by
nature; a closed-loop TPS never does, and when no figure states a latency the answer is empty and says so."""

from decimal import Decimal

from django import forms
from django.utils.translation import gettext, pgettext
from django.utils.translation import gettext_lazy as _

from .choices import NOT_STATED_MARK
from .editions import attach_older_editions
from .filters import ResultFilter
from .metrics import METRICS_BY_NAME, SIZING_METRIC_NAMES, metric_label
from .models import Engine, EngineVersion, PublishedResult
from .queries import version_sort_key

# Every metric a document publishes for an engine can be sized for, named as the export's columns (tps, qps,
# tpm, ro_qps, rw_qps): PPAS and Alibaba PostgreSQL print read-only and read-write QPS only.
# Read-only and read-write QPS name their export column too (English pages): readers match them with the CSV.
SIZING_COLUMN_LABELS = {"ro_qps": _("Read-only QPS (ro_qps)"), "rw_qps": _("Read-write QPS (rw_qps)")}
SIZING_METRICS = [(name, SIZING_COLUMN_LABELS.get(name) or metric_label(name)) for name in SIZING_METRIC_NAMES]


class FigureField(forms.DecimalField):
    """A figure as the documents print them (DecimalField(max_digits=16, decimal_places=2)): one too large is
    refused by saying how large it may be, not "no more than 16 digits in total" (1e300 has one digit)."""

    def run_validators(self, value):
        largest = Decimal(10) ** (self.max_digits - self.decimal_places) - Decimal(1).scaleb(-self.decimal_places)
        if value is not None and value.is_finite() and value > largest:
            raise forms.ValidationError(_("Too large: at most %(max)s.") % {"max": f"{largest:,}"}, code="max_value")
        super().run_validators(value)


class SizingQuestion(forms.Form):
    """"Which is the smallest flavour that reaches N TPS (or QPS) for this engine/version?": its fields and the rules
    that check them, one validator for the page (forms.SizingForm adds its menus) and `/api/v1/sizing/`."""

    engine = forms.ChoiceField(label=_("Engine"))
    version = forms.CharField(label=_("Version"), required=False, max_length=30,
                              help_text=_("e.g. 5.7; empty for every version"))
    # Not required: a URL without `metric` asks about TPS, as the select shows.
    metric = forms.ChoiceField(label=_("Metric"), choices=SIZING_METRICS, initial="tps", required=False)
    target = FigureField(label=_("At least"), min_value=0, max_digits=16, decimal_places=2,
                         help_text=_("at or above it for a throughput; at or below it for a latency (lower is better)"))
    # Issue 35.5: with a bound the question is "the smallest flavour sustaining `target` TPS with p95 <= the bound",
    # answered from published capacity searches only (LATENCY_METRIC), never from closed-loop TPS.
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

    def __init__(self, *args, engines=(), editions=None, **kwargs):
        """`editions`: the recorded SQL Server editions to choose from; None: the short form (home page), without
        deployment and edition."""
        super().__init__(*args, **kwargs)
        self.fields["engine"].choices = [(e.slug, e.name) for e in engines]
        asked = METRICS_BY_NAME.get((self.data or {}).get("metric") or "tps")
        if asked is not None and not asked.higher_is_better:  # the answer stays at or below the value: say so
            self.fields["target"].label = _("At most")
        if editions is None:  # the home page's short form: no latency bound either (the sizing page has it)
            del self.fields["deployment"], self.fields["edition"], self.fields["latency_bound_ms"]
        else:
            self.fields["edition"].choices = [("", _("any"))] + [(e, e) for e in editions]

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
            # answer's to say (smallest_flavours), not a form error.
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
                    "known": pgettext("list separator", ", ").join(str(labels[m]) for m in published) or NOT_STATED_MARK})
        return data


def question(params):
    """The sizing question as a bound SizingQuestion (engines: those with published results; SQL Server's editions)."""
    engines = list(Engine.objects.filter(versions__results__isnull=False).distinct())
    editions = sorted(PublishedResult.objects.exclude(edition="").order_by().values_list("edition", flat=True).distinct())
    return SizingQuestion(params or None, engines=engines, editions=editions)


def sizing_filter(data):
    """The results a sizing question looks at (engine, version, vendor, document, deployment, edition; vendor-published unless
    `include_internal`), as a ResultFilter (invalid, e.g. an unknown vendor: it filters to nothing)."""
    filter_data = {"engine": data["engine"], "include_internal": data.get("include_internal") or False}
    for key in ("version", "vendor", "document", "deployment", "edition"):
        if data.get(key):
            filter_data[key] = data[key]
    return ResultFilter(filter_data, queryset=PublishedResult.objects.all())


LATENCY_METRIC = "sustained_tps"  # whitepaper.metrics: a capacity search's rate, with its row's latency_bound_ms


def asked_metric(data):
    """The metric a sizing question is answered in (a SizingQuestion's cleaned data): sustained_tps under a latency bound."""
    return LATENCY_METRIC if data.get("latency_bound_ms") is not None else (data.get("metric") or "tps")


def smallest_flavours(data):
    """Per vendor, family, memory ratio and deployment: the smallest flavour whose published
    `data["metric"]` reaches `data["target"]`, smallest first (a SizingQuestion's cleaned data). With
    `data["latency_bound_ms"]`: the smallest flavour whose published capacity search sustained the target with a
    bound at or below it (a bound of 20 ms also meets 50 ms), from those figures only."""
    bound = data.get("latency_bound_ms")
    if bound is not None:
        rows = sizing_filter({**data, "include_internal": True}).qs.filter(latency_bound_ms__lte=bound)
        answers = rows.smallest_reaching_once(LATENCY_METRIC, data["target"])
        for r in answers:
            r.revised = None
        return answers
    metric, results = data["metric"] or "tps", sizing_filter(data).qs
    # a chosen document answers with its own figures, as the explorer shows a chosen document's every row
    if data.get("latest") is False or (data.get("document") and data.get("latest") is None):
        answers = results.smallest_reaching_once(metric, data["target"])
        for r in answers:
            r.revised = None
        return answers
    answers = results.newest_per_variant().smallest_reaching_once(metric, data["target"])
    attach_older_editions(answers, metric, results)
    return answers


def latency_note(data, answers):
    """What a latency-bound answer rests on, or that there is none (the page says the same): '' without a bound."""
    if data.get("latency_bound_ms") is None:
        return ""
    if answers:
        return gettext("Answered from this dashboard's published capacity searches only (internal measurements, open-loop, "
                 "p95 from the scheduled start), never from closed-loop TPS.")
    return gettext("No published figure sustains that rate with p95 ≤ %(bound)s ms for this engine and version. Vendor "
             "whitepapers state no latency with their TPS, so only capacity searches published from this dashboard's "
             "runs can answer; closed-loop TPS is not used.") % {"bound": data["latency_bound_ms"]}
