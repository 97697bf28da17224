from django import forms
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from config.limits import LimitedJSONFormField
from whitepaper import display
from whitepaper.models import INTERNAL_VENDOR_SLUG, Document

from .drivers import RUNNABLE_TOOL_CHOICES, RUNNABLE_TOOLS
from .models import DEFAULT_CAMPAIGN_REPEATS, MAX_REPEATS, MIN_CAMPAIGN_REPEATS, BenchmarkProfile, Schedule, Target, validate_certificate_pem, validate_client_key_pem, validate_password
from .params import BY_NAME, NAMES, PARAMETERS, PROFILE_FIELDS, allowed_for, parse_profile_value, profile_defaults


def flavor_choice_label(flavor):
    """'Huawei Cloud · General-purpose (通用型) · 1:4 · rds.mysql.x1.large.4 · 2 vCPU / 8 GB', in the page's
    language: tells apart the dozens of flavours of one size."""
    parts = [display.vendor_name(flavor.vendor)]
    if flavor.family:
        parts.append(display.family_name(flavor.family))
    if flavor.memory_ratio:
        parts.append(flavor.memory_ratio)
    if flavor.spec_code:
        parts.append(flavor.spec_code)
    parts.append(f"{flavor.vcpus} vCPU / {flavor.memory_gb} GB")
    return " · ".join(parts)


# A PEM certificate chain or key is a few kB; a vendor's CA bundle some tens.
PEM_FILE_MAX_BYTES = 64 * 1024
# Each TLS text field and the file that may stand for it (the vendor's download: ca.pem, client-cert.pem, ...).
PEM_FILES = {"tls_ca": ("tls_ca_file", validate_certificate_pem), "tls_cert": ("tls_cert_file", validate_certificate_pem),
             "tls_key": ("tls_key_file", validate_client_key_pem)}


def pem_file_field(label):
    return forms.FileField(label=label, required=False, widget=forms.FileInput(attrs={"accept": ".pem,.crt,.cer,.key,.txt"}))


class TargetForm(forms.ModelForm):
    password = forms.CharField(label=_("password"), required=False, strip=False,
                               widget=forms.PasswordInput(render_value=False), validators=[validate_password],
                               help_text=_("Stored encrypted. Leave empty to keep the stored password."))
    tls_key = forms.CharField(label=_("client key (PEM)"), required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3}),
                              validators=[validate_client_key_pem],
                              help_text=_("Stored encrypted, never shown again. Leave empty to keep the stored key."))
    remove_tls_key = forms.BooleanField(label=_("remove the stored client certificate and key"), required=False)
    tls_ca_file = pem_file_field(_("… or the CA certificate file"))
    tls_cert_file = pem_file_field(_("… or the client certificate file"))
    tls_key_file = pem_file_field(_("… or the client key file"))
    field_order = ["name", "engine", "host", "port", "database", "user", "password", "tls_mode", "tls_ca", "tls_ca_file", "tls_cert",
                   "tls_cert_file", "tls_key", "tls_key_file", "remove_tls_key"]

    class Meta:
        model = Target
        fields = ["name", "engine", "host", "port", "database", "user", "password", "tls_mode", "tls_ca", "tls_cert", "tls_key",
                  "remove_tls_key", "family", "vcpus", "memory_gb", "flavor", "queue"]
        widgets = {"tls_ca": forms.Textarea(attrs={"rows": 3}), "tls_cert": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        flavor = self.fields["flavor"]
        flavor.queryset = (flavor.queryset.exclude(vendor__slug="internal").select_related("vendor", "family")
                           .order_by("vendor__name", "family__name", "memory_ratio", "vcpus", "memory_gb", "spec_code"))
        flavor.label_from_instance = flavor_choice_label
        self.fields["tls_mode"].required = False  # absent (an older client of the form): no TLS, as before

    def clean_tls_mode(self):
        return self.cleaned_data.get("tls_mode") or "disable"

    def clean(self):
        """A file chosen for a TLS field is read as that field's PEM text, validated as pasted text is (the
        upload handlers keep it in memory: runs/views.py)."""
        cleaned = super().clean()
        for name, (file_field, validate) in PEM_FILES.items():
            upload = cleaned.get(file_field)
            if not upload:
                continue
            if upload.size > PEM_FILE_MAX_BYTES:
                self.add_error(file_field, _("The file is %(size)s bytes; a PEM file is at most %(max)s.") % {
                    "size": upload.size, "max": PEM_FILE_MAX_BYTES})
                continue
            try:
                text = upload.read().decode("ascii")
            except UnicodeDecodeError:
                self.add_error(file_field, _("This file is not PEM text (a binary DER file? Convert it with openssl, "
                                             "e.g. openssl x509 -inform der -in ca.der -out ca.pem)."))
                continue
            if (cleaned.get(name) or "").strip() and cleaned[name].strip() != text.strip():
                self.add_error(file_field, _("Give it once: pasted above or as a file, not both."))
                continue
            try:
                validate(text)
            except forms.ValidationError as exc:
                self.add_error(file_field, exc)
                continue
            cleaned[name] = text
        return cleaned

    def _post_clean(self):
        # The key is set before the model's clean() runs, which checks that certificate and key go together.
        if self.cleaned_data.get("remove_tls_key"):
            self.instance.tls_key_encrypted = ""
            self.cleaned_data["tls_cert"] = ""
        elif self.cleaned_data.get("tls_key"):
            self.instance.set_tls_key(self.cleaned_data["tls_key"])
        super()._post_clean()

    def save(self, commit=True):
        if self.cleaned_data.get("password"):
            self.instance.set_password(self.cleaned_data["password"])
        return super().save(commit)


def profile_initial(profile):
    """The override fields filled with the profile's own values, as the form shows them: what you see runs."""
    values = profile_defaults(profile)
    allowed = allowed_for(profile.tool)
    shown = {}
    for parameter in PARAMETERS:
        if parameter.name not in allowed:
            continue
        value = values.get(parameter.name)
        if parameter.kind == "sweep":
            shown[parameter.name] = ", ".join(str(v) for v in value or [])
        elif parameter.kind == "bool":
            shown[parameter.name] = "true" if value else "false"
        else:
            shown[parameter.name] = "" if value is None else value
    return shown


def parameter_field(parameter):
    """The form field of a run parameter: text the launch validates (runs/params.py), so the form and the API
    refuse the same values with the same words."""
    if parameter.kind == "bool":
        return forms.ChoiceField(label=parameter.field_label, required=False, help_text=parameter.help,
                                 choices=[("", _("as the profile")), ("true", _("on")), ("false", _("off"))])
    return forms.CharField(label=parameter.field_label, required=False, help_text=parameter.help)


# One field per run parameter, in the parameters' order (RunForm puts them after target and profile).
RunParameterFields = type("RunParameterFields", (forms.Form,), {p.name: parameter_field(p) for p in PARAMETERS})


class ParameterOverrides:
    """What a form of a profile and its parameter fields launches: the fields that differ from the profile's values
    (RunForm, CampaignForm). `empty_clears_sweep`: the form shows the profile's values, so an emptied thread sweep
    means none; a form whose fields start empty ("as the profile") keeps the profile's sweep."""

    empty_clears_sweep = True

    def overrides(self):
        """The fields that differ from the profile's values (an empty sweep clears the profile's sweep)."""
        data = self.cleaned_data
        profile = data["profile"]
        allowed = allowed_for(profile.tool)
        defaults = profile_initial(profile)
        result = {}
        for name in NAMES:
            value = data.get(name)
            value = value.strip() if isinstance(value, str) else value
            if name not in allowed:
                if value not in (None, ""):
                    self.add_error(name, _("%(field)s does not apply to a %(tool)s profile.") % {"field": name, "tool": profile.tool})
                continue
            if name == "thread_sweep" and name in self.data and (value or self.empty_clears_sweep):
                if value != defaults[name]:
                    result[name] = value
                continue
            if value in (None, "") or str(value) == str(defaults.get(name)):
                continue
            result[name] = value
        return result

    def clean(self):
        data = super().clean()
        if data.get("profile") and not self.errors:
            data["overrides"] = self.overrides()
        return data


class RunForm(ParameterOverrides, RunParameterFields):
    """Target, profile, and the run's parameters, pre-filled with the profile's values. The form only
    translates input: launch_run (services.py) validates the run, with the same rules as the API."""

    field_order = ["target", "profile", *NAMES, "reproduces", "repeats", "confirm"]
    target = forms.ModelChoiceField(Target.objects.usable(), label=_("target"))
    profile = forms.ModelChoiceField(BenchmarkProfile.objects.filter(tool__in=RUNNABLE_TOOLS), label=_("profile"))
    reproduces = forms.IntegerField(required=False, widget=forms.HiddenInput)
    repeats = forms.CharField(label=_("repeats"), required=False, initial=1,
                              widget=forms.NumberInput(attrs={"min": 1, "max": MAX_REPEATS}))
    # Asked for by launch_run when the run is large (runs/footprint.py): the page then shows the estimate beside it.
    confirm = forms.BooleanField(label=_("I have read the estimate: launch this large run"), required=False,
                                 widget=forms.CheckboxInput(attrs={"autofocus": True}))  # the page opens at it

    def __init__(self, *args, engine=None, **kwargs):
        super().__init__(*args, **kwargs)
        # Offered: the chosen target's engine's profiles. Accepted: any (launch_run says what is wrong).
        self.fields["repeats"].help_text = _(
            "Run the same set-up this many times in a row (1 to %(max)s): the run pages show their mean and standard "
            "deviation, and the series judges them as one result.") % {"max": MAX_REPEATS}
        queryset = self.fields["profile"].queryset
        self.profile_choices = queryset.filter(engine=engine) if engine else queryset

    def restrict_targets(self, engine):
        """Reproducing a row: only targets of the row's engine."""
        self.fields["target"].queryset = self.fields["target"].queryset.filter(engine=engine)



class RetractForm(forms.Form):
    reason = forms.CharField(label=_("reason"), max_length=2000, widget=forms.Textarea(attrs={"rows": 3}),
                             help_text=_("Kept on the run and shown on its page."))


class ScheduleForm(forms.ModelForm):
    """Staff schedule a profile on a target: when (cron), how many repeats, and the run's overrides as JSON.
    The rules are the model's (Schedule.clean -> runs.cron.schedule_errors), as for the API and the admin;
    runs.schedules.save_schedule writes the beat entry."""

    class Meta:
        model = Schedule
        fields = ["name", "target", "profile", "cron", "repeats", "overrides", "enabled", "large_run_confirmed"]
        labels = {"overrides": _("overrides (JSON)")}
        help_texts = {"overrides": _('e.g. {"threads": 8, "duration_s": 60}')}
        widgets = {"overrides": forms.Textarea(attrs={"rows": 2})}
        field_classes = {"overrides": LimitedJSONFormField}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].queryset = Target.objects.usable()
        self.fields["profile"].queryset = BenchmarkProfile.objects.filter(tool__in=RUNNABLE_TOOLS)
        self.fields["overrides"].required = False
        self.fields["overrides"].initial = {}
        self.fields["repeats"].required = False

    def clean_repeats(self):
        value = self.cleaned_data.get("repeats")
        return 1 if value is None else value

    def clean_overrides(self):
        value = self.cleaned_data.get("overrides")
        return {} if value in (None, "") else value


class ProfileForm(forms.ModelForm):
    """A benchmark profile as operators write it (/runs/profiles/). Each parameter is typed text read by the launch's
    own parser (runs.params.parse_value: ASCII digits, the thread sweep as "8, 16, 32"); the model (BenchmarkProfile.clean)
    then holds the profile to a launch's limits and rules, naming the field, as in the admin and the API."""

    tool = forms.ChoiceField(label=capfirst(_("tool")), choices=RUNNABLE_TOOL_CHOICES)

    class Meta:
        model = BenchmarkProfile
        fields = ["slug", "name", "tool", "engine", "workload", "quick", *PROFILE_FIELDS, "description"]
        labels = {"slug": _("Slug"), "description": _("Description")}
        help_texts = {"slug": _("Its name in URLs and the API: lower-case letters, digits and hyphens.")}
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in PROFILE_FIELDS:
            parameter = BY_NAME[name]
            if parameter.kind == "bool":
                continue
            model_field = BenchmarkProfile._meta.get_field(name)
            self.fields[name] = forms.CharField(label=capfirst(parameter.field_label), required=not model_field.null and parameter.kind != "sweep",
                                                help_text=parameter.help or model_field.help_text)
            if self.instance.pk and parameter.kind == "sweep":
                self.initial[name] = ", ".join(str(v) for v in self.instance.thread_sweep or [])

    def clean(self):
        data = super().clean()
        errors = {}
        for name in PROFILE_FIELDS:
            if name in data and BY_NAME[name].kind != "bool":
                data[name] = parse_profile_value(BY_NAME[name], data[name], errors, sweep_text=True,
                                                 optional=BenchmarkProfile._meta.get_field(name).null)
        for name, message in errors.items():
            self.add_error(name, message)
        return data


class CampaignForm(ParameterOverrides, RunParameterFields):
    """A campaign: its name, one profile with its overrides, its targets (a cell each), the runs per cell and an
    optional reference document. Only translates input: launch_campaign (runs/campaigns.py) validates it."""

    field_order = ["name", "profile", "targets", "repeats", "reference", *NAMES, "confirm"]
    name = forms.CharField(label=_("name"), max_length=200)
    profile = forms.ModelChoiceField(BenchmarkProfile.objects.filter(tool__in=RUNNABLE_TOOLS), label=_("profile"))
    targets = forms.ModelMultipleChoiceField(Target.objects.usable(), label=_("targets"), widget=forms.CheckboxSelectMultiple,
                                             help_text=_("Each target is a cell, measured as a series of runs."))
    repeats = forms.CharField(label=_("runs per cell"), required=False, initial=DEFAULT_CAMPAIGN_REPEATS,
                              widget=forms.NumberInput(attrs={"min": MIN_CAMPAIGN_REPEATS, "max": MAX_REPEATS}))
    reference = forms.ModelChoiceField(Document.objects.exclude(vendor__slug=INTERNAL_VENDOR_SLUG).order_by("-published"),
                                       label=_("reference document"), required=False,
                                       help_text=_("A vendor edition whose rows the campaign measures again: its review "
                                                   "page puts their printed figures beside ours."))
    confirm = forms.BooleanField(label=_("I have read the estimate: launch this large campaign"), required=False)
    empty_clears_sweep = False  # its parameter fields start empty: "as the profile"
