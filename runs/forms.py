from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from .models import BenchmarkProfile, Target, validate_password
from .params import PGBENCH_FIELDS, SYSBENCH_FIELDS


class TargetForm(forms.ModelForm):
    password = forms.CharField(label=_("password"), required=False, strip=False,
                               widget=forms.PasswordInput(render_value=False), validators=[validate_password],
                               help_text=_("Stored encrypted. Leave empty to keep the stored password."))

    class Meta:
        model = Target
        fields = ["name", "engine", "host", "port", "database", "user", "password", "family", "vcpus", "memory_gb",
                  "flavor", "queue"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["flavor"].queryset = self.fields["flavor"].queryset.select_related("vendor", "family")

    def save(self, commit=True):
        if self.cleaned_data.get("password"):
            self.instance.set_password(self.cleaned_data["password"])
        return super().save(commit)


OVERRIDE_FIELDS = ["threads", "thread_sweep", "duration_s", "report_interval_s", "warmup_s", "tables",
                   "rows_per_table", "scale", "range", "jobs", "prepared"]


class RunForm(forms.Form):
    """Target, profile, and overrides of the profile's numbers. The overrides are validated by the
    profile (BenchmarkProfile.resolve), the same rules as the API."""

    target = forms.ModelChoiceField(Target.objects.all(), label=_("target"))
    profile = forms.ModelChoiceField(BenchmarkProfile.objects.filter(tool__in=["sysbench", "pgbench"]), label=_("profile"))
    threads = forms.CharField(label=_("threads / clients"), required=False)
    thread_sweep = forms.CharField(label=_("thread sweep"), required=False, help_text=_("e.g. 8, 16, 32, 64, 128"))
    duration_s = forms.CharField(label=_("duration (s)"), required=False)
    report_interval_s = forms.CharField(label=_("report interval (s)"), required=False)
    warmup_s = forms.CharField(label=_("warm-up (s)"), required=False)
    tables = forms.CharField(label=_("tables (sysbench)"), required=False)
    rows_per_table = forms.CharField(label=_("rows per table (sysbench)"), required=False)
    scale = forms.CharField(label=_("scale (pgbench)"), required=False)
    range = forms.CharField(label=_("range (pgbench)"), required=False)
    jobs = forms.CharField(label=_("jobs -j (pgbench)"), required=False)
    prepared = forms.ChoiceField(label=_("prepared statements"), required=False,
                                 choices=[("", _("as the profile")), ("true", _("on")), ("false", _("off"))])
    reproduces = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, engine=None, **kwargs):
        super().__init__(*args, **kwargs)
        if engine:
            self.fields["profile"].queryset = self.fields["profile"].queryset.filter(engine=engine)

    def overrides(self):
        data = self.cleaned_data
        profile = data.get("profile")
        allowed = SYSBENCH_FIELDS if profile and profile.tool == "sysbench" else PGBENCH_FIELDS
        result = {}
        for name in OVERRIDE_FIELDS:
            value = data.get(name)
            if value in (None, ""):
                continue
            if name not in allowed:
                self.add_error(name, _("%(field)s does not apply to a %(tool)s profile.") % {"field": name, "tool": profile.tool})
                continue
            result[name] = value.strip() if isinstance(value, str) else value
        return result

    def clean(self):
        data = super().clean()
        profile, target = data.get("profile"), data.get("target")
        if profile and target and profile.engine != target.engine:
            self.add_error("profile", _("This profile is for %(pe)s; the target is %(te)s.") % {
                "pe": profile.get_engine_display(), "te": target.get_engine_display()})
        if profile and not self.errors:
            overrides = self.overrides()
            try:
                data["params"] = profile.resolve(overrides)
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    self.add_error(field if field in self.fields else None, messages)
            data["overrides"] = overrides
        return data
