import functools
import re

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from config.api import RejectsUnknownFields
from config.limits import LimitedJSONField

from ..campaigns import state_of_cells
from ..campaigns import cells as campaign_cells
from ..models import (
    MAX_REPEATS,
    BenchmarkProfile,
    Campaign,
    CampaignCell,
    RepeatGroup,
    Run,
    RunClient,
    RunState,
    Sample,
    Schedule,
    ServerSample,
    Target,
)
from ..params import BY_NAME, LIMITS, MAX_SWEEP, PARAMETERS, PROFILE_FIELDS, ascii_int, parse_profile_value
from ..params import NAMES as PARAMETER_NAMES
from ..record import other_load_record
from ..reproduce import reproduced_result


class TargetSerializer(serializers.ModelSerializer):
    """Targets as the API shows them: never the password, only whether one is stored."""

    has_password = serializers.BooleanField(read_only=True)
    has_tls_key = serializers.BooleanField(read_only=True, help_text="A client key is stored (encrypted; never shown).")
    has_tls_ca = serializers.SerializerMethodField(help_text="A CA certificate is stored.")

    class Meta:
        model = Target
        fields = ["id", "name", "engine", "host", "port", "database", "user", "has_password", "tls_mode", "has_tls_ca",
                  "has_tls_key", "server_version",
                  "family", "vcpus", "memory_gb", "queue", "archived_at"]

    def get_has_tls_ca(self, target) -> bool:
        return bool(target.tls_ca)


class ParameterValue(serializers.Field):
    """A profile's parameter as sent: runs.params.parse_profile_value, then BenchmarkProfile.clean, judge it, so the
    API refuses what the page and the admin refuse, in the same words (DRF's own integer field reads "２" as 2)."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


@functools.cache
def _profile_field_class(name):
    """The field class of one of a profile's parameters; its schema is the override's (limits from runs/params.py)."""
    schema = _override_field(BY_NAME[name])
    schema.allow_null = BenchmarkProfile._meta.get_field(name).null
    return extend_schema_field(schema)(type(f"Profile_{name}", (ParameterValue,), {}))


def _profile_field(name):
    model_field = BenchmarkProfile._meta.get_field(name)
    return _profile_field_class(name)(required=False, allow_null=model_field.null, help_text=str(model_field.help_text) or None)


class ProfileSerializer(serializers.ModelSerializer):
    """A benchmark profile. Operators create and change profiles; one that follows a published methodology
    (`methodology` set) only staff change. The rules are the model's (BenchmarkProfile.clean: the workload, each
    parameter within a launch's limits, the rules between them); a 400 names each bad field."""

    runnable = serializers.BooleanField(read_only=True)
    methodology = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True, help_text=(
        "The published methodology this profile follows (its slug), or null. Such a profile only staff change or "
        "delete; copy it to a new profile to change its numbers."))

    class Meta:
        model = BenchmarkProfile
        fields = ["id", "slug", "name", "tool", "engine", "workload", "quick", "description", "methodology", "runnable",
                  *PROFILE_FIELDS]  # the parameters last, in runs.params' order
        extra_kwargs = {"description": {"help_text": "What the profile is for, in the operator's words (may be empty)."}}

    def get_fields(self):
        fields = super().get_fields()
        for name in PROFILE_FIELDS:
            fields[name] = _profile_field(name)
        return fields

    def validate(self, attrs):
        profile = BenchmarkProfile(**{f.attname: getattr(self.instance, f.attname)
                                      for f in BenchmarkProfile._meta.concrete_fields}) if self.instance else BenchmarkProfile()
        for name, value in attrs.items():
            setattr(profile, name, value)
        errors = {}
        for name in PROFILE_FIELDS:  # as sent, before the model's fields coerce them (int("２") is 2)
            if name in attrs:
                attrs[name] = parse_profile_value(BY_NAME[name], attrs[name], errors,
                                                  optional=BenchmarkProfile._meta.get_field(name).null)
                setattr(profile, name, attrs[name])
        if errors:
            raise serializers.ValidationError(errors)
        try:
            profile.full_clean(validate_unique=False)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        return attrs


def _override_field(parameter):
    """The schema of one override (runs/params.py defines it; runs.params validates the values)."""
    if parameter.kind == "sweep":
        lo, hi = LIMITS["threads"]
        return serializers.ListField(child=serializers.IntegerField(min_value=lo, max_value=hi), max_length=MAX_SWEEP,
                                     required=False, help_text=parameter.api_help)
    if parameter.kind == "bool":
        return serializers.BooleanField(required=False, help_text=parameter.api_help)
    lo, hi = parameter.limits
    if parameter.kind == "number":
        return serializers.FloatField(min_value=lo, max_value=hi, required=False, allow_null=parameter.empty_means_default,
                                      help_text=parameter.api_help or None)
    return serializers.IntegerField(min_value=lo, max_value=hi, required=False, allow_null=parameter.empty_means_default,
                                    help_text=parameter.api_help or None)


@extend_schema_field(inline_serializer("RunOverrides", {p.name: _override_field(p) for p in PARAMETERS}))
class OverridesField(LimitedJSONField):
    """The profile's parameters to change; validated by runs.params (400 naming each bad field). sysbench
    takes tables and rows_per_table, pgbench scale, range and jobs; report_interval_s <= duration_s."""


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_REPEATS, "default": 1})
class RepeatsField(serializers.IntegerField):
    """How many runs of one set-up (1 to MAX_REPEATS). The range is checked by the rule's one definition
    (launch_run, the Schedule model) together with every other field, so one 400 names them all. ASCII digits
    only (runs.params.ascii_int): DRF's IntegerField reads "２" as 2."""

    def to_internal_value(self, data):
        try:
            ascii_int(data)
        except ValueError:
            self.fail("invalid")
        return super().to_internal_value(data)


class SlugField(serializers.SlugRelatedField):
    """A slug: anything that cannot be one (a NUL byte, which PostgreSQL refuses in a query) is simply
    not found, a 400 like any unknown slug."""

    def to_internal_value(self, data):
        if not isinstance(data, str) or not re.fullmatch(r"[-a-zA-Z0-9_]{1,100}", data):
            self.fail("does_not_exist", slug_name=self.slug_field, value=str(data)[:100].replace("\x00", ""))
        return super().to_internal_value(data)


@extend_schema_field({"type": "integer", "nullable": True, "minimum": 1})
class ReproducesField(serializers.Field):
    """A published result's id: a malformed id or one naming no row is a 400 naming `reproduces` (runs.reproduce,
    the rule the form uses too)."""

    def to_internal_value(self, data):
        try:
            return reproduced_result(data)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict["reproduces"]) from None

    def to_representation(self, value):
        return value.pk if value is not None else None


class RunClientSerializer(serializers.ModelSerializer):
    step_starts = serializers.JSONField(read_only=True, help_text=(
        "Per step ('run-1', 'warmup-1', ...): when this client's tool started, by the client host's clock (ISO 8601)."))

    class Meta:
        model = RunClient
        fields = ["index", "host", "cores", "state", "threads", "reason", "step_starts"]


class InterleavedSetupSerializer(RejectsUnknownFields, serializers.Serializer):
    """One further set-up of an interleaved comparison: a target, a profile and its overrides."""
    target = serializers.PrimaryKeyRelatedField(queryset=Target.objects.all(), help_text="The target's id.")
    profile = SlugField(slug_field="slug", queryset=BenchmarkProfile.objects.all(), help_text="The profile's slug.")
    overrides = OverridesField(required=False, default=dict, help_text="As the run's overrides.")


class RunSerializer(RejectsUnknownFields, serializers.ModelSerializer):
    target = serializers.PrimaryKeyRelatedField(queryset=Target.objects.all(), help_text="The target's id.")
    profile = SlugField(slug_field="slug", queryset=BenchmarkProfile.objects.all(),
                                           help_text="The profile's slug, e.g. sysbench-oltp-rw-mysql-quick.")
    overrides = OverridesField(required=False, default=dict,
                               help_text=", ".join(PARAMETER_NAMES) + " (RunOverrides describes each one)")
    requested_by = serializers.CharField(source="requested_by.get_username", read_only=True, default=None, allow_null=True)
    reproduces = ReproducesField(required=False, allow_null=True, default=None,
                                 help_text="The published result this run reproduces, if any (its id; the target's engine "
                                           "must be the row's).")
    published_result = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True,
                                                          help_text="The catalogue row this run was published as, if any.")
    url = serializers.SerializerMethodField(help_text="The run's API URL (absolute).")
    html_url = serializers.SerializerMethodField(help_text="The run's page (absolute; staff and operators, logged in).")
    progress_percent = serializers.SerializerMethodField()
    eta_seconds = serializers.SerializerMethodField()
    waiting_for = serializers.SerializerMethodField(help_text="A queued run: the run of the same target it waits for (null otherwise).")
    client_bound = serializers.BooleanField(read_only=True, allow_null=True, help_text=(
        "true: the client host was above 90 % CPU for most of a step, so the result may understate the target; "
        "null until a step has been measured."))
    client_bound_cause = serializers.ChoiceField(choices=["shared_host", "client_cpu"], read_only=True, allow_null=True, help_text=(
        "What saturated when client_bound: shared_host (the target is on the client's own host: the result measures "
        "that shared host, not the target alone) or client_cpu (the client host's CPU); null when not client-bound."))
    latency = serializers.SerializerMethodField(help_text=(
        "The run's latency in ms: p50_ms, p95_ms, p99_ms, max_ms, count, method, histogram [[bucket ms, count]]."))
    latency_caveat = serializers.CharField(read_only=True, help_text=(
        "Why the run's latency figures are not to be trusted (a pgbench run made with -r and -P on several threads), "
        "or empty."))
    insight = serializers.JSONField(read_only=True, help_text=(
        "Per step: latency (ms), server (server-side TPS, agreement_pct with the tool's TPS in %, buffer_hit_pct, "
        "running_avg), client (cpu_avg_pct, busy_fraction, bound)."))
    client_info = serializers.JSONField(read_only=True, help_text=(
        "The client host: cores, memory_mb, os, kernel, tool_build; target_on_client_host (true: the target's address "
        "is one of the client host's own, so they share its CPUs; null: could not be told)."))
    regression = serializers.BooleanField(read_only=True, allow_null=True, help_text=(
        "true: TPS below the 95 % prediction interval of the series' earlier results (log TPS) and more than the practical "
        "threshold (%) below their geometric mean; null: not judged (too few earlier results of the same target, profile "
        "and parameters)."))
    trend = serializers.JSONField(read_only=True, help_text=(
        "The judgement: method, earlier_runs (ids), earlier_results (ids per result: a repeat group counts once; a result "
        "judged a regression is left out), n, center (their geometric mean), interval [low, high] (the 95 % prediction "
        "interval, TPS), change_pct (%), outside (beyond the interval either way), detectable_pct (the smallest drop the "
        "interval can see) and cannot_detect (wider than the threshold), threshold_pct, window, min_runs; for a repeat "
        "group also repeat_group (id, count, runs, tps, n, mean, stdev, ci_low, ci_high, cv)."))
    interleave = InterleavedSetupSerializer(many=True, write_only=True, required=False, help_text=(
        "An interleaved comparison (runs/services.py launch_interleaved): 1 to 5 further set-ups beside this one (the "
        "baseline), each run `repeats` times (default 5 here, at least 2) in randomized blocks: each block runs every "
        "set-up once in a shuffled order, so a drift of the machine's load falls on every set-up. Each set-up becomes a "
        "repeat group; the answer is the baseline's first run, and its `interleaved` names every set-up's group; "
        "compare them with /api/v1/runs/compare/?group=...&group=... (paired on the blocks)."))
    interleaved = serializers.SerializerMethodField(help_text=(
        "A run of an interleaved comparison: its launch id and every set-up's repeat group (id, position: 0 is the "
        "baseline, target, profile, runs), and the address comparing them; null otherwise."))
    client_load = serializers.JSONField(read_only=True, help_text=(
        "The client host's condition: start (before the first step) and end (after the last, including the tool's own "
        "load), each {load: [1, 5, 15-minute load averages], cores}."))
    disturbed = serializers.BooleanField(read_only=True, allow_null=True, help_text=(
        "true: the client host was loaded beyond its cores as the run started (1-minute load average per core above 1): "
        "left out of verdicts unless compare is asked include_disturbed=true, published only with an acknowledgement; "
        "null: not measured."))
    block = serializers.IntegerField(read_only=True, allow_null=True, help_text=(
        "A run of an interleaved comparison: its block (from 1); each block ran every set-up once."))
    repeats = RepeatsField(write_only=True, required=False, default=1, help_text="Launch this many runs of the same set-up, queued one after another on the "
                                                 "target as one repeat group (the answer is the first; the others are "
                                                 "?repeat_group=<id>). Default 1.")
    confirm = serializers.BooleanField(write_only=True, required=False, default=False, help_text=(
        "true: launch a run that loads at least 1 GB or takes at least 1 h (a whitepaper profile as published). "
        "Without it such a launch is refused (400) under confirm, saying the rows, the disk on the target and the time "
        "it estimates (docs/runs.md: how). Default false."))
    repeat_group = serializers.SerializerMethodField(help_text=(
        "The launch this run belongs to when it asked for repeats: id, count (runs launched), index (this run's, from 1); "
        "null for a single run. The group is judged as one result (its mean TPS) once all its runs have ended."))
    other_load = serializers.SerializerMethodField(help_text=(
        "Whether the server saw other load: the steps whose server-side TPS was more than tolerance_pct (%) above the "
        "tool's (step, threads, server_tps, tool_tps, agreement_pct); empty when none; who acknowledged it on publishing."))
    leftover_tables = serializers.ListField(child=serializers.CharField(), read_only=True, help_text=(
        "Tables the run may have left on the target because its cleanup did not drop them (leftover_cause says why; the "
        "run page offers to drop them); empty otherwise, and emptied once they are dropped, by this run's page or by a "
        "later run on the same database."))
    leftover_cause = serializers.CharField(read_only=True, help_text=(
        "Why the cleanup did not drop leftover_tables: the target stopped answering, the cleanup failed or was stopped "
        "after a cancel, or the run ended (its worker died) before its cleanup and the target could not be reached; "
        "empty when no table is left."))
    loop = serializers.ChoiceField(choices=["open", "closed"], read_only=True, help_text=(
        "open: the run offered a fixed rate (params.rate_tps) and summary.open_loop has offered_tps, achieved_tps, "
        "achieved_ratio, p50_ms, p95_ms, p99_ms (from each transaction's scheduled start), late, late_pct, skipped, "
        "skipped_pct, lag_avg_ms, lag_max_ms, lag_grows; closed: its threads sent each next transaction when the last "
        "returned (thread sweeps too), so its latency leaves out the waits of transactions never sent."))
    clients = RunClientSerializer(many=True, read_only=True, help_text=(
        "The client hosts of a multi-client run (empty for one client): each one's threads (first step), state and "
        "start times; summary.clients has each one's TPS and share (%)."))

    class Meta:
        model = Run
        fields = ["id", "url", "html_url", "target", "profile", "overrides", "params", "state", "reason", "cancel_requested",
                  "requested_by", "created_at", "started_at", "finished_at", "worker", "client_host", "client_cores",
                  "tool_version", "server_version", "step", "step_count", "progress_percent", "eta_seconds",
                  "command_line", "loop", "summary", "reproduces", "published_result", "waiting_for", "retracted_at",
                  "retraction_reason", "client_bound", "client_bound_cause", "latency", "latency_caveat", "insight", "client_info", "server_settings_hash",
                  "regression", "trend", "repeats", "confirm", "repeat_group", "clients", "round_trip", "tls", "other_load",
                  "leftover_tables", "leftover_cause", "interleave", "interleaved", "block", "client_load", "disturbed"]
        read_only_fields = [f for f in fields if f not in ("target", "profile", "overrides", "repeats", "confirm", "reproduces",
                                                          "interleave")]

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, run):
        # The versioning scheme's reverse: rest_framework's would copy the request's ?format= into the link.
        request = self.context.get("request")
        scheme = getattr(request, "versioning_scheme", None)
        if scheme is None:
            return reverse("v1:run-detail", kwargs={"pk": run.pk})
        return scheme.reverse("run-detail", kwargs={"pk": run.pk}, request=request)

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, run):
        request = self.context.get("request")
        return request.build_absolute_uri(run.get_absolute_url()) if request else run.get_absolute_url()

    def get_progress_percent(self, run) -> int | None:
        return run.progress()[0]

    def get_eta_seconds(self, run) -> int | None:
        """Seconds left; for a queued run, counted from when the runs ahead of it on the target end."""
        return run.progress()[1]

    def get_latency(self, run) -> dict:
        return (run.insight or {}).get("latency") or {}

    @extend_schema_field(inline_serializer("RepeatGroupRef", {
        "id": serializers.IntegerField(), "count": serializers.IntegerField(help_text="Runs launched together."),
        "index": serializers.IntegerField(help_text="This run's place in the group, from 1.")}, allow_null=True))
    def get_repeat_group(self, run):
        group = run.repeat_group if run.repeat_group_id else None
        return {"id": group.pk, "count": group.count, "index": run.repeat_index} if group else None

    @extend_schema_field(inline_serializer("Interleaved", {
        "launch": serializers.CharField(help_text="The interleaved launch's id."),
        "groups": serializers.ListField(child=serializers.DictField(), help_text=(
            "Every set-up's repeat group: id, position (0: the baseline), target (id), profile (slug), runs (ids).")),
        "compare": serializers.CharField(help_text="The compare API's address for these groups.")}, allow_null=True))
    def get_interleaved(self, run):
        group = run.repeat_group if run.repeat_group_id else None
        if group is None or not group.launch:
            return None
        return self._interleaved_launches(run).get(group.launch)

    def _interleaved_launches(self, run):
        """Every interleaved launch of the runs answered together (a list's page, or this run), read in two queries
        once per answer and kept in the context: a list of runs costs no more queries with more launches."""
        cache = self.context.setdefault("_interleaved", {})
        launch = run.repeat_group.launch
        if launch in cache:
            return cache
        page = self.parent.instance if isinstance(getattr(self, "parent", None), serializers.ListSerializer) else [run]
        wanted = {r.repeat_group.launch for r in page if r.repeat_group_id and r.repeat_group.launch} | {launch}
        groups = list(RepeatGroup.objects.filter(launch__in=wanted).order_by("position", "pk"))
        members = {}
        for r in (Run.objects.filter(repeat_group__in=groups).order_by("block", "pk")
                  .values("pk", "repeat_group_id", "target_id", "profile__slug")):
            members.setdefault(r["repeat_group_id"], []).append(r)
        for name in wanted:
            mine = [g for g in groups if g.launch == name and g.pk in members]
            cache[name] = {"launch": name, "groups": [
                {"id": g.pk, "position": g.position, "target": members[g.pk][0]["target_id"],
                 "profile": members[g.pk][0]["profile__slug"], "runs": [r["pk"] for r in members[g.pk]]} for g in mine],
                "compare": reverse("v1:run-compare") + "?" + "&".join(f"group={g.pk}" for g in mine)}
        return cache

    @extend_schema_field(inline_serializer("OtherLoad", {
        "steps": serializers.ListField(child=serializers.DictField(), help_text=(
            "The steps beyond the tolerance: step, threads, server_tps, tool_tps, agreement_pct (%).")),
        "tolerance_pct": serializers.FloatField(help_text="How far (%) the server's TPS may exceed the tool's."),
        "acknowledged_at": serializers.DateTimeField(allow_null=True, help_text="When publishing acknowledged it."),
        "acknowledged_by": serializers.CharField(allow_null=True, help_text="Who acknowledged it (username).")}))
    def get_other_load(self, run):
        """One definition with the export's (runs/record.py)."""
        return other_load_record(run)

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


class ScheduleSerializer(RejectsUnknownFields, serializers.ModelSerializer):
    """A schedule as staff write it and everyone allowed to see runs reads it. The rules are the model's
    (Schedule.clean: cron, archived target, the profile's engine, overrides); errors name the field."""

    target = serializers.PrimaryKeyRelatedField(queryset=Target.objects.all(), help_text="The target's id.")
    profile = SlugField(slug_field="slug", queryset=BenchmarkProfile.objects.all(),
                        help_text="The profile's slug, e.g. pgbench-ro-quick.")
    cron = serializers.CharField(max_length=100, help_text=(
        "Five fields: minute hour day-of-month month day-of-week, in the server's time zone "
        "('0 3 * * *' daily at 03:00, '30 2 * * 1' Mondays at 02:30)."))
    repeats = RepeatsField(required=False, default=1, help_text="Runs of the set-up at each due time, one after another (a repeat group).")
    overrides = OverridesField(required=False, default=dict, help_text="The run's overrides, as for POST /runs/.")
    enabled = serializers.BooleanField(required=False, default=True, help_text="false: paused (beat skips it).")
    large_run_confirmed = serializers.BooleanField(required=False, default=False, help_text=(
        "true: the author read the estimate of a large set-up (as POST /runs/ asks `confirm` for) and each due time "
        "launches it. A large set-up without it is refused (400) under large_run_confirmed, saying the rows, the disk "
        "and the time."))
    created_by = serializers.SerializerMethodField(help_text="Who created it (its runs are requested by them); null if deleted.")
    last_error = serializers.CharField(read_only=True, help_text="Why the last due time started no run (empty: it did).")
    keeps_failing = serializers.SerializerMethodField(help_text=(
        "true when its last RUNS_SCHEDULE_FAILING_AFTER (3) runs all failed."))
    recent_runs = serializers.SerializerMethodField(help_text="Its last runs, newest first: id and state.")
    skips = serializers.JSONField(read_only=True, help_text=(
        "Due times skipped because its previous run was still queued or running, newest first (at most 10): "
        "at (ISO 8601), run (the run still going), state."))

    class Meta:
        model = Schedule
        fields = ["id", "name", "target", "profile", "cron", "repeats", "overrides", "enabled", "large_run_confirmed",
                  "created_by", "created_at", "last_error", "keeps_failing", "recent_runs", "skips"]
        read_only_fields = ["created_at"]

    def get_created_by(self, schedule) -> str | None:
        return schedule.created_by.get_username() if schedule.created_by_id else None

    def _runs(self, schedule):
        return list(schedule.runs.all())  # prefetched, newest first (ScheduleViewSet.get_queryset)

    def get_keeps_failing(self, schedule) -> bool:
        return schedule.keeps_failing(self._runs(schedule))

    @extend_schema_field(inline_serializer("ScheduleRun", {"id": serializers.IntegerField(),
                                                            "state": serializers.ChoiceField(choices=RunState.choices)}, many=True))
    def get_recent_runs(self, schedule):
        return [{"id": r.pk, "state": r.state} for r in self._runs(schedule)[:5]]

    def validate(self, attrs):
        schedule = Schedule(**{f.attname: getattr(self.instance, f.attname) for f in Schedule._meta.concrete_fields}) \
            if self.instance else Schedule()
        for name, value in attrs.items():
            setattr(schedule, name, value)
        try:
            schedule.full_clean(exclude=["periodic_task", "created_by"], validate_unique=False)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        return attrs


class CampaignCellSerializer(serializers.ModelSerializer):
    """A cell of a campaign: a target (with its declared size at launch) and its series."""
    target = serializers.PrimaryKeyRelatedField(read_only=True, help_text="The target's id.")
    target_name = serializers.CharField(source="target.name", read_only=True, help_text="The target's name.")
    state = serializers.CharField(read_only=True, help_text="queued, running, finished or cancelled (from its runs).")
    n = serializers.SerializerMethodField(help_text="Succeeded, undisturbed runs in its series.")
    mean_tps = serializers.SerializerMethodField(help_text="The series' mean TPS; null before a run succeeded.")
    ci_low_tps = serializers.SerializerMethodField(help_text="The 95 % interval's low end; null with fewer than 2 runs.")
    ci_high_tps = serializers.SerializerMethodField(help_text="The 95 % interval's high end; null with fewer than 2 runs.")
    cv = serializers.SerializerMethodField(help_text="Coefficient of variation of its runs' TPS; null with fewer than 2.")
    runs = serializers.SerializerMethodField(help_text="Its runs' ids, round by round (a retried round's retry).")
    retries = serializers.SerializerMethodField(help_text=(
        "Its rounds whose run failed or ran on a disturbed client and was run again, once: the round, the run "
        "measured again and its retry."))

    class Meta:
        model = CampaignCell
        fields = ["position", "target", "target_name", "engine_version", "family", "vcpus", "memory_gb", "state", "n",
                  "mean_tps", "ci_low_tps", "ci_high_tps", "cv", "runs", "retries"]
        extra_kwargs = {"position": {"help_text": "Its place in the campaign (from 0)."},
                        "engine_version": {"help_text": "The target's server version at launch."},
                        "family": {"help_text": "The target's declared family at launch."},
                        "vcpus": {"help_text": "The target's declared vCPUs at launch."},
                        "memory_gb": {"help_text": "The target's declared memory (GB) at launch."}}

    @staticmethod
    def _figure(cell, name):
        value = getattr(cell.series, name, None) if cell.series else None
        return round(value, 4 if name == "cv" else 2) if value is not None else None

    def get_n(self, cell) -> int:
        return cell.series.n if cell.series else 0

    def get_mean_tps(self, cell) -> float | None:
        return self._figure(cell, "mean")

    def get_ci_low_tps(self, cell) -> float | None:
        return self._figure(cell, "low")

    def get_ci_high_tps(self, cell) -> float | None:
        return self._figure(cell, "high")

    def get_cv(self, cell) -> float | None:
        return self._figure(cell, "cv")

    def get_runs(self, cell) -> list[int]:
        return [cell.rounds[b].pk for b in sorted(cell.rounds)]

    @extend_schema_field(inline_serializer("CampaignRetry", {
        "round": serializers.IntegerField(help_text="The round (from 1)."),
        "run": serializers.IntegerField(help_text="The run that failed or was disturbed."),
        "retry": serializers.IntegerField(help_text="Its one retry (counted in the series if it succeeded undisturbed).")},
        many=True))
    def get_retries(self, cell):
        return [{"round": b, "run": cell.retried[b].retry_of_id, "retry": cell.retried[b].pk} for b in sorted(cell.retried)]


class PublishEditionSerializer(RejectsUnknownFields, serializers.Serializer):
    """The body of publishing a campaign's edition."""

    acknowledge_other_load = serializers.BooleanField(default=False, help_text=(
        "true: publish although the server saw other load during some of the edition's runs (the draft's "
        "`other_load_runs`); required then, as for publishing one such run. Who acknowledged it is kept on the rows."))


class CampaignSerializer(RejectsUnknownFields, serializers.ModelSerializer):
    """A campaign: one profile over several targets, `repeats` runs per target (runs/campaigns.py)."""
    profile = SlugField(slug_field="slug", queryset=BenchmarkProfile.objects.all(), help_text="The profile's slug.")
    overrides = OverridesField(required=False, default=dict, help_text="As a run's overrides, the same for every target.")
    targets = serializers.PrimaryKeyRelatedField(queryset=Target.objects.all(), many=True, write_only=True,
                                                 help_text="The targets' ids: one cell each, in this order.")
    repeats = serializers.JSONField(required=False, default=5, help_text="Runs per cell (rounds), 2 to 30; default 5.")
    confirm = serializers.BooleanField(required=False, default=False, write_only=True,
                                       help_text="Launch a campaign whose footprint is large (400 under confirm otherwise).")
    created_by = serializers.CharField(source="created_by.get_username", read_only=True, default=None, allow_null=True,
                                       help_text="Who launched it.")
    state = serializers.SerializerMethodField(
        help_text="queued, running, paused, finished or cancelled: derived from its runs (and paused_at).")
    cells = serializers.SerializerMethodField(help_text="Its cells, in order.")

    class Meta:
        model = Campaign
        fields = ["id", "name", "profile", "overrides", "targets", "repeats", "confirm", "reference", "created_by",
                  "created_at", "paused_at", "state", "cells"]
        read_only_fields = ["id", "created_at", "paused_at"]
        extra_kwargs = {"name": {"help_text": "The campaign's name."},
                        "reference": {"help_text": "A vendor document (id) whose rows the campaign measures again."}}

    def _cells(self, campaign):
        if not hasattr(campaign, "_cells"):
            campaign._cells = campaign_cells(campaign)
        return campaign._cells

    def get_state(self, campaign) -> str:
        return state_of_cells(campaign, self._cells(campaign))

    @extend_schema_field(CampaignCellSerializer(many=True))
    def get_cells(self, campaign):
        return CampaignCellSerializer(self._cells(campaign), many=True).data
