from django import forms
from django.contrib import admin
from django.db import models

from config.limits import LimitedJSONFormField

from .models import BenchmarkProfile, Run, Sample, Schedule, Target, validate_password
from .schedules import save_schedule


class TargetAdminForm(forms.ModelForm):
    new_password = forms.CharField(required=False, widget=forms.PasswordInput(render_value=False),
                                   validators=[validate_password], help_text="Leave empty to keep the stored password.")

    class Meta:
        model = Target
        exclude = ["password_encrypted"]

    def save(self, commit=True):
        if self.cleaned_data.get("new_password"):
            self.instance.set_password(self.cleaned_data["new_password"])
        return super().save(commit)


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    form = TargetAdminForm
    list_display = ["name", "engine", "host", "port", "database", "user", "server_version", "queue"]
    readonly_fields = ["server_version", "version_checked_at"]


# JSON typed into the admin is held to the API's depth limit (a form error, never a RecursionError).
JSON_LIMITS = {models.JSONField: {"form_class": LimitedJSONFormField}}


@admin.register(BenchmarkProfile)
class BenchmarkProfileAdmin(admin.ModelAdmin):
    formfield_overrides = JSON_LIMITS
    list_display = ["slug", "tool", "engine", "workload", "quick", "threads", "duration_s"]
    list_filter = ["tool", "engine", "quick"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "target", "profile", "state", "requested_by", "created_at"]
    list_filter = ["state", "profile__tool"]
    readonly_fields = [f.name for f in Run._meta.fields]


@admin.register(Sample)
class SampleAdmin(admin.ModelAdmin):
    list_display = ["run", "step", "t", "threads", "tps", "qps", "latency_p95_ms"]


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    """Validated by the model (Schedule.clean) like the page and the API; saving writes the beat entry,
    deleting (one or a selection) removes it (runs.models._drop_beat_entry)."""

    formfield_overrides = JSON_LIMITS
    list_display = ["name", "target", "profile", "cron", "repeats", "enabled", "last_error"]
    list_filter = ["enabled"]
    readonly_fields = ["last_error", "created_by", "created_at"]
    fields = ["name", "target", "profile", "cron", "repeats", "overrides", "enabled", "large_run_confirmed", "last_error", "created_by",
              "created_at"]

    def save_model(self, request, obj, form, change):
        if not obj.pk:
            obj.created_by = request.user
        save_schedule(obj)
