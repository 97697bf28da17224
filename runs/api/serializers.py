import re

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from ..models import BenchmarkProfile, Run, Sample, ServerSample, Target
from ..params import LIMITS, MAX_SWEEP


class TargetSerializer(serializers.ModelSerializer):
    """Targets as the API shows them: never the password, only whether one is stored."""

    has_password = serializers.BooleanField(read_only=True)

    class Meta:
        model = Target
        fields = ["id", "name", "engine", "host", "port", "database", "user", "has_password", "server_version",
                  "family", "vcpus", "memory_gb", "queue"]


class ProfileSerializer(serializers.ModelSerializer):
    runnable = serializers.BooleanField(read_only=True)

    class Meta:
        model = BenchmarkProfile
        fields = ["id", "slug", "name", "tool", "engine", "workload", "quick", "runnable", "tables", "rows_per_table",
                  "scale", "range", "threads", "jobs", "thread_sweep", "duration_s", "report_interval_s", "warmup_s", "prepared"]


def _override_fields():
    fields = {name: serializers.IntegerField(min_value=lo, max_value=hi, required=False) for name, (lo, hi) in LIMITS.items()}
    fields["jobs"] = serializers.IntegerField(min_value=LIMITS["jobs"][0], max_value=LIMITS["jobs"][1], required=False,
                                              allow_null=True, help_text="pgbench -j (at most the clients).")
    fields["thread_sweep"] = serializers.ListField(
        child=serializers.IntegerField(min_value=LIMITS["threads"][0], max_value=LIMITS["threads"][1]), max_length=MAX_SWEEP,
        required=False, help_text="Thread counts, each once; one run step per count.")
    fields["prepared"] = serializers.BooleanField(required=False, help_text="Prepared statements.")
    return fields


@extend_schema_field(inline_serializer("RunOverrides", _override_fields()))
class OverridesField(serializers.JSONField):
    """The profile's parameters to change; validated by runs.params (400 naming each bad field). sysbench
    takes tables and rows_per_table, pgbench scale, range and jobs; report_interval_s <= duration_s."""


class SlugField(serializers.SlugRelatedField):
    """A slug: anything that cannot be one (a NUL byte, which PostgreSQL refuses in a query) is simply
    not found, a 400 like any unknown slug."""

    def to_internal_value(self, data):
        if not isinstance(data, str) or not re.fullmatch(r"[-a-zA-Z0-9_]{1,100}", data):
            self.fail("does_not_exist", slug_name=self.slug_field, value=str(data)[:100].replace("\x00", ""))
        return super().to_internal_value(data)


class RunSerializer(serializers.ModelSerializer):
    target = serializers.PrimaryKeyRelatedField(queryset=Target.objects.all(), help_text="The target's id.")
    profile = SlugField(slug_field="slug", queryset=BenchmarkProfile.objects.all(),
                                           help_text="The profile's slug, e.g. sysbench-oltp-rw-mysql-quick.")
    overrides = OverridesField(required=False, default=dict,
                               help_text="threads, thread_sweep, duration_s, report_interval_s, warmup_s, tables, "
                                         "rows_per_table, scale, range, jobs, prepared")
    requested_by = serializers.CharField(source="requested_by.get_username", read_only=True, default=None, allow_null=True)
    reproduces = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True,
                                                    help_text="The published result this run reproduces, if any.")
    published_result = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True,
                                                          help_text="The catalogue row this run was published as, if any.")
    url = serializers.CharField(source="get_absolute_url", read_only=True)
    progress_percent = serializers.SerializerMethodField()
    eta_seconds = serializers.SerializerMethodField()
    waiting_for = serializers.SerializerMethodField(help_text="A queued run: the run of the same target it waits for (null otherwise).")
    client_bound = serializers.BooleanField(read_only=True, allow_null=True, help_text=(
        "true: the client host was above 90 % CPU for most of a step, so the result may understate the target; "
        "null until a step has been measured."))
    latency = serializers.SerializerMethodField(help_text=(
        "The run's latency in ms: p50_ms, p95_ms, p99_ms, max_ms, count, method, histogram [[bucket ms, count]]."))
    insight = serializers.JSONField(read_only=True, help_text=(
        "Per step: latency (ms), server (server-side TPS, agreement_pct with the tool's TPS in %, buffer_hit_pct, "
        "running_avg), client (cpu_avg_pct, busy_fraction, bound)."))
    client_info = serializers.JSONField(read_only=True, help_text="The client host: cores, memory_mb, os, kernel, tool_build.")
    regression = serializers.BooleanField(read_only=True, allow_null=True, help_text=(
        "true: TPS more than the threshold (%) below the median of the series' last runs and below their noise band; "
        "null: not judged (too few earlier runs of the same target, profile and parameters)."))
    trend = serializers.JSONField(read_only=True, help_text=(
        "The judgement: earlier_runs (ids), median, mean, stdev, band [low, high] (TPS), change_pct (%), threshold_pct, window."))

    class Meta:
        model = Run
        fields = ["id", "url", "target", "profile", "overrides", "params", "state", "reason", "cancel_requested",
                  "requested_by", "created_at", "started_at", "finished_at", "worker", "client_host", "client_cores",
                  "tool_version", "server_version", "step", "step_count", "progress_percent", "eta_seconds",
                  "command_line", "summary", "reproduces", "published_result", "waiting_for", "retracted_at",
                  "retraction_reason", "client_bound", "latency", "insight", "client_info", "server_settings_hash",
                  "regression", "trend"]
        read_only_fields = [f for f in fields if f not in ("target", "profile", "overrides")]

    def get_progress_percent(self, run) -> int | None:
        return run.progress()[0]

    def get_eta_seconds(self, run) -> int | None:
        """Seconds left; for a queued run, counted from when the runs ahead of it on the target end."""
        return run.progress()[1]

    def get_latency(self, run) -> dict:
        return (run.insight or {}).get("latency") or {}

    def get_waiting_for(self, run) -> int | None:
        blocker = run.waiting_for
        return blocker.pk if blocker else None



class SampleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Sample
        fields = ["id", "step", "warmup", "t", "threads", "tps", "qps", "reads", "writes", "other", "latency_p95_ms",
                  "latency_avg_ms", "errors_per_s", "reconnects_per_s", "received_at"]


class ServerSampleSerializer(serializers.ModelSerializer):
    class Meta:
        model = ServerSample
        fields = ["id", "step", "warmup", "t", "sampled_at", "server_tps", "rollbacks_per_s", "queries_per_s", "running",
                  "lock_waiting", "lock_waits_per_s", "buffer_hit_pct", "client_cpu_pct"]
