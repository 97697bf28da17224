import django_filters
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from config.api import ERROR, PARAMETER_ERRORS, error_body, error_component
from config.deprecation import mark_deprecated
from config.authentication import BearerOrTokenAuthentication
from config.limits import MAX_ID, IdField, is_id
from config.permissions import MethodIsAllowed, is_staff
from config.pagination import CatalogPagination
from whitepaper.api.params import StrictOrderingFilter, unknown_params

from .. import actions, compare, history
from ..models import DEFAULT_INTERLEAVED_REPEATS, BenchmarkProfile, Campaign, Run, RunState, Schedule, Target
from ..record import csv_response, json_response
from ..schedules import delete_schedule, save_schedule, set_enabled
from ..campaign_edition import EditionError, draft_edition, publish_edition
from ..campaigns import cancel_campaign, launch_campaign, pause_campaign, resume_campaign, state_of, with_cells
from ..services import launch_interleaved, launch_run, profile_in_use
from ..permissions import IsOperator, IsStaffToWrite, MayEditProfile, check_may_change_campaign, check_may_change_run
from ..views import RunFilter
from .serializers import CampaignSerializer, ProfileSerializer, PublishEditionSerializer, RunSerializer, SampleSerializer, ScheduleSerializer, ServerSampleSerializer, TargetSerializer

MAX_SAMPLES = 5000

# --- documented answers (the schema says what the endpoints really answer) -----------------------
# The one error shape (config.api): {detail, code, errors} (before 2.5.0 typed here as RunsError{detail} and
# FieldErrors{field}, so generated clients put the answer in additional_properties).
FIELD_ERRORS = OpenApiResponse(
    PARAMETER_ERRORS.response,
    description="Bad input: `errors` maps each offending field or query parameter to its messages, e.g. "
                "{\"target\": [\"Invalid pk \\\"99\\\" - object does not exist.\"]}; a malformed or too deeply nested "
                "JSON body has `errors` empty.",
)
UNAUTHENTICATED = OpenApiResponse(ERROR, description="No credentials (or bad ones): log in or send `Authorization: Bearer <key>` (or `Token <key>`); `WWW-Authenticate` names both schemes.")
FORBIDDEN = OpenApiResponse(ERROR, description="Authenticated, but not staff or a benchmark operator "
                                               "(or, to cancel, not the run's owner).")
NOT_FOUND = OpenApiResponse(ERROR, description="No such object, or a page past the last one.")
TOO_LARGE = OpenApiResponse(ERROR, description="The request body is over API_MAX_BODY_BYTES.")
READ_ERRORS = {400: FIELD_ERRORS, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND}
WRITE_ERRORS = {**READ_ERRORS, 413: TOO_LARGE}
def sample_page(name, serializer, what):
    return inline_serializer(name, {
        "run": serializers.IntegerField(help_text="The run's id."),
        "state": serializers.ChoiceField(choices=RunState.choices, help_text="The run's state now."),
        "count": serializers.IntegerField(help_text=f"{what} in this answer (at most {MAX_SAMPLES})."),
        "next_after": serializers.IntegerField(help_text="Pass as `after` to get only newer ones."),
        "results": serializer(many=True),
    })


SAMPLE_PAGE = sample_page("SamplePage", SampleSerializer, "Samples")
SERVER_SAMPLE_PAGE = sample_page("ServerSamplePage", ServerSampleSerializer, "Readings")
AFTER = OpenApiParameter("after", {"type": "integer", "minimum": 0, "maximum": MAX_ID},
                         description="Only samples with an id greater than this (a whole number >= 0).")
CANCEL_CONFLICT = OpenApiResponse(
    error_component("CancelConflict", "conflict", run=RunSerializer()),
    description="The run has already finished: nothing to cancel.",
)


@extend_schema_field({"type": "string", "enum": ["true", "false"]})
class StrictBooleanFilter(django_filters.TypedChoiceFilter):
    """true / false only: anything else is a 400 naming the parameter (a BooleanFilter ignores it)."""


def strict_boolean(name, label, **kwargs):
    return StrictBooleanFilter(field_name=name, choices=[("true", "true"), ("false", "false")],
                               coerce=lambda value: value == "true", label=label, **kwargs)


class ProfileFilter(django_filters.FilterSet):
    quick = strict_boolean("quick", "Only the quick variants (true) or only the full ones (false).")

    class Meta:
        model = BenchmarkProfile
        fields = ["tool", "engine", "quick"]


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": MAX_ID})
class IdFilter(django_filters.NumberFilter):
    """A whole-number id; an id that matches nothing is an empty list, not an error."""

    field_class = IdField  # 0 to MAX_ID: SQLite cannot look up more


class RunAPIFilter(RunFilter):
    """The runs page's filters, strict: `mine` is true or false, `target` an id (unknown: no runs)."""

    mine = strict_boolean("mine", "Only my runs (true).", method="filter_mine")
    target = IdFilter(field_name="target_id", label="Only the runs of this target (id).")
    repeat_group = IdFilter(field_name="repeat_group_id", label="Only the runs launched together in this repeat group (id).")
    schedule = IdFilter(field_name="schedule_id", label="Only the runs this schedule started (id).")
    published_result = IdFilter(field_name="published_result", label="Only the run published as this result (id).")


class OperatorAPIMixin:
    # Token first: an anonymous request is a 401 whose `WWW-Authenticate` names Bearer and Token (DRF
    # answers 403 when the first scheme is the session, which has no challenge).
    authentication_classes = [BearerOrTokenAuthentication, SessionAuthentication]
    permission_classes = [MethodIsAllowed, IsOperator]
    pagination_class = CatalogPagination  # {count, next, previous, results}; page, page_size (at most 500)
    filter_backends = [DjangoFilterBackend, StrictOrderingFilter]
    LISTS = ("list", "regressions")  # the actions that page and filter their queryset
    ACTION_PARAMS = {"compare": {"run", "group", "base", "include_disturbed"}, "series": {"target", "profile"}, "samples": {"after"},
                     "server_samples": {"after"}}

    def allowed_params(self):
        """The query parameters this action reads: a typo (`stat=`, `bogus=`) is a 400 naming it, as on the
        catalogue API, not a silent "no filter"."""
        allowed = {"format"} | self.ACTION_PARAMS.get(self.action, set())
        if self.action in self.LISTS:
            allowed |= {"page", "page_size"}
            for backend in self.filter_backends:
                if issubclass(backend, DjangoFilterBackend):
                    filterset = backend().get_filterset_class(self, self.get_queryset())
                    allowed |= set(filterset.base_filters) if filterset else set()
                elif issubclass(backend, StrictOrderingFilter):
                    allowed.add(backend.ordering_param)
        return allowed

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        unknown = unknown_params(request.query_params, self.allowed_params())
        if unknown:
            raise ValidationError(unknown)
        # A parameter given empty (?state=) is a 400 naming it, not silently "no filter" (an empty
        # `ordering` is the default order, as DRF documents it).
        empty = sorted(name for name, value in request.query_params.items() if not value.strip() and name != "ordering")
        if empty:
            raise ValidationError({name: [_("Empty value: give a value or leave the parameter out.")] for name in empty})


@extend_schema_view(list=extend_schema(responses={200: TargetSerializer(many=True), **READ_ERRORS}),
                    retrieve=extend_schema(responses={200: TargetSerializer, **READ_ERRORS}))
class TargetViewSet(OperatorAPIMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Target.objects.order_by("name", "id")
    lookup_value_regex = r"\d+"
    serializer_class = TargetSerializer
    filter_backends = [DjangoFilterBackend]  # no ordering
    filterset_fields = ["engine"]


PROFILE_FORBIDDEN = OpenApiResponse(ERROR, description="Authenticated, but not staff or a benchmark operator, or (to change "
                                                         "or delete) the profile follows a published methodology: staff only.")
PROFILE_WRITE_ERRORS = {**WRITE_ERRORS, 403: PROFILE_FORBIDDEN}
PROFILE_IN_USE = OpenApiResponse(ERROR, description="Runs or schedules name the profile: it stays (their record needs it).")


@extend_schema_view(list=extend_schema(responses={200: ProfileSerializer(many=True), **READ_ERRORS}),
                    retrieve=extend_schema(responses={200: ProfileSerializer, **READ_ERRORS}),
                    create=extend_schema(responses={201: ProfileSerializer, **PROFILE_WRITE_ERRORS}),
                    update=extend_schema(responses={200: ProfileSerializer, **PROFILE_WRITE_ERRORS}),
                    partial_update=extend_schema(responses={200: ProfileSerializer, **PROFILE_WRITE_ERRORS}),
                    destroy=extend_schema(responses={204: None, 409: PROFILE_IN_USE, 401: UNAUTHENTICATED,
                                                     403: PROFILE_FORBIDDEN, 404: NOT_FOUND}))
class ProfileViewSet(OperatorAPIMixin, viewsets.ModelViewSet):
    """Benchmark profiles. Operators create, change and delete them; one that follows a published methodology
    (`methodology` set) only staff change or delete (403). A profile that runs or schedules name is not deleted (409)."""

    queryset = BenchmarkProfile.objects.select_related("methodology").order_by("slug")
    serializer_class = ProfileSerializer
    permission_classes = [*OperatorAPIMixin.permission_classes, MayEditProfile]
    filter_backends = [DjangoFilterBackend]
    lookup_field = "slug"
    filterset_class = ProfileFilter

    def destroy(self, request, *args, **kwargs):
        profile = self.get_object()
        refusal = profile_in_use(profile)
        if refusal:
            return Response(error_body(refusal, "conflict"), status=status.HTTP_409_CONFLICT)
        profile.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(responses={200: RunSerializer(many=True), **READ_ERRORS}),
    retrieve=extend_schema(responses={200: RunSerializer, **READ_ERRORS}),
    create=extend_schema(responses={201: RunSerializer, **WRITE_ERRORS}),
)
class RunViewSet(OperatorAPIMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Benchmark runs. POST creates a queued run (201); the worker moves it through
    preparing, running, cleaning_up to succeeded / failed / cancelled."""

    serializer_class = RunSerializer
    filterset_class = RunAPIFilter
    ordering_fields = ["created_at", "id"]
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        return (Run.objects.for_list().select_related("reproduces", "published_result", "schedule", "other_load_acknowledged_by")
                .prefetch_related("clients"))

    def perform_create(self, serializer):
        data = serializer.validated_data
        if "interleave" in data:
            self._launch_interleaved(serializer, data)
            return
        try:  # launch_run is the one place a run is validated; its errors come back field by field
            serializer.instance = launch_run(target=data["target"], profile=data["profile"],
                                             overrides=data.get("overrides") or {}, user=self.request.user,
                                             repeats=data.get("repeats", 1), reproduces=data.get("reproduces"),
                                             confirm=data.get("confirm", False))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None

    def _launch_interleaved(self, serializer, data):
        """An interleaved comparison: this request's set-up is the baseline, `interleave` the others; `repeats`
        defaults to DEFAULT_INTERLEAVED_REPEATS. Answers with the baseline's first run."""
        if data.get("reproduces") is not None:
            raise serializers.ValidationError({"reproduces": [_("An interleaved comparison reproduces no published row: "
                                                                "launch the reproduction on its own.")]})
        setups = [{"target": data["target"], "profile": data["profile"], "overrides": data.get("overrides") or {}},
                  *[dict(s) for s in data["interleave"]]]
        repeats = self.request.data.get("repeats") if "repeats" in self.request.data else DEFAULT_INTERLEAVED_REPEATS
        try:
            groups = launch_interleaved(setups, user=self.request.user, repeats=repeats if repeats is not None else
                                        DEFAULT_INTERLEAVED_REPEATS, confirm=data.get("confirm", False))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        serializer.instance = Run.objects.filter(repeat_group=groups[0]).order_by("block", "pk").first()

    def _incremental(self, request, pk, related, serializer):
        """A run's samples (or server readings) newer than `after`, at most MAX_SAMPLES: what a live page polls."""
        run = get_object_or_404(Run.objects.only("id", "state"), pk=pk)
        after = request.query_params.get("after", "0")
        if not (after.isascii() and after.isdigit()) or int(after) > MAX_ID:
            raise serializers.ValidationError({"after": _("after must be a sample id (a whole number >= 0).")})
        samples = list(getattr(run, related).filter(id__gt=int(after)).order_by("id")[:MAX_SAMPLES])
        return Response({"run": run.pk, "state": run.state, "count": len(samples),
                         "next_after": samples[-1].id if samples else int(after),
                         "results": serializer(samples, many=True).data})

    @extend_schema(parameters=[AFTER], responses={200: SAMPLE_PAGE, **READ_ERRORS})
    @action(detail=True, methods=["get"])
    def samples(self, request, pk=None, version=None):
        """The tool's interval lines, as they arrive."""
        return self._incremental(request, pk, "samples", SampleSerializer)

    @extend_schema(parameters=[AFTER], responses={200: SERVER_SAMPLE_PAGE, **READ_ERRORS})
    @action(detail=True, methods=["get"], url_path="server-samples")
    def server_samples(self, request, pk=None, version=None):
        """The server's counters (as rates) and the client's CPU, read by the worker at each report interval."""
        return self._incremental(request, pk, "server_samples", ServerSampleSerializer)

    @extend_schema(parameters=[OpenApiParameter("run", int, many=True, description="Run ids, in the order shown (a run is a series of one)."),
                               OpenApiParameter("group", int, many=True, description="Repeat group ids (a series of runs of one set-up); "
                                                "`run` and `group` name 2 to 6 entries in all."),
                               OpenApiParameter("base", str, description="The baseline entry: its id, or `run:<id>` / `group:<id>` when both "
                                                "kinds are compared (default the earliest)."),
                               OpenApiParameter("include_disturbed", str, enum=["true", "false"], description=(
                                   "true: count the runs whose client host was loaded beyond its cores as they started "
                                   "(Run.disturbed), left out by default."))],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, **READ_ERRORS})
    @action(detail=False, methods=["get"])
    def compare(self, request, version=None):
        """2 to 6 entries compared, each a run or a repeat group (runs/compare.py, the rule in docs/measurements.md):
        `entries` (per entry `n` runs counted, `mean_tps`, `ci_low_tps`/`ci_high_tps` the 95 % interval over its runs,
        null with n = 1, `cv` the coefficient of variation, `mean_qps`), `comparisons` (per entry against `base`:
        `ratio` of geometric means of TPS with `ratio_ci_low`/`ratio_ci_high`, `pct`, `ci_low_pct`/`ci_high_pct`,
        `verdict` faster / slower / equivalent / inconclusive / single-run, `method` paired t on per-block log ratios
        (an interleaved launch's groups) or Welch's t on log TPS, `threshold_pct`, `adjusted` (Holm across the
        comparisons shown), `p`, `p_adjusted`, `level` of the interval, `more_runs` about how many more runs per side
        would decide an inconclusive one), `rule`, `paired`; `differences` (each aspect whose values differ: parameters,
        tool and server versions, server settings, client, target size; one value per entry; `folded`: a server setting
        only some servers have), `same`, `warnings` (other engines or tools), `results` (per entry the same figures,
        QPS and p95 in ms with % against the baseline, `stability`: a single run's within-run check, batch means, not
        the uncertainty of its result), `by_threads` (sweeps matched by thread count, each cell with its
        `comparison`, Holm-adjusted across the cells), `capacity` (capacity searches side by side: per run `bound_ms`, `sustained_tps`,
        `sustained_pct` against the baseline's only under the same bound, `failed_tps`, `failed_reason`; `capacity`
        false for a run that is not one; [] when none is; their TPS and p95 in `results` are null, being their last
        step's), `samples` (per run and step: [seconds since the step started, TPS, latency ms])."""
        try:
            selection = compare.parse_selection(request.query_params.getlist("run"), request.query_params.get("base"),
                                                request.query_params.getlist("group"), request.query_params.get("include_disturbed"))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        data = compare.compare(selection)
        data["samples"] = compare.samples(selection.runs)
        return mark_deprecated(Response(data), "runs-noise")  # tps_noise and noise_method, kept until their sunset

    @extend_schema(responses={200: RunSerializer(many=True), **READ_ERRORS})
    @action(detail=False, methods=["get"])
    def regressions(self, request, version=None):
        """The runs judged regressions (newest first), one per result: a repeat group judged a regression is
        listed once, by its first run (its `trend.repeat_group` names the others)."""
        runs = self.filter_queryset(self.get_queryset()).regression_results().order_by("-finished_at", "-id")
        page = self.paginate_queryset(runs)
        data = RunSerializer(page if page is not None else runs, many=True, context={"request": request}).data
        return self.get_paginated_response(data) if page is not None else Response({"rule": history.rule(), "results": data})

    @extend_schema(parameters=[OpenApiParameter("target", int, required=True), OpenApiParameter("profile", str, required=True,
                                                                                          description="The profile's slug.")],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, **READ_ERRORS})
    @action(detail=False, methods=["get"])
    def series(self, request, version=None):
        """The succeeded runs of one target and profile, oldest first (id, finished_at, TPS, regression,
        trend, repeat_group), the runs of each set-up (n, mean, standard deviation, 95 % interval over the runs and
        coefficient of variation `cv` of TPS) and the repeat groups (runs launched together: count launched, n
        succeeded, the same figures, the group's verdict)."""
        target_id, slug = request.query_params.get("target", ""), request.query_params.get("profile", "")
        errors = {}
        target = Target.objects.filter(pk=target_id).first() if is_id(target_id) else None
        profile = BenchmarkProfile.objects.filter(slug=slug).first() if slug else None
        if target is None:
            errors["target"] = [_("Give an existing target id.")]
        if profile is None:
            errors["profile"] = [_("Give an existing profile slug.")]
        if errors:
            raise serializers.ValidationError(errors)
        runs, groups, repeats = history.series(target, profile)
        return Response({"target": target.pk, "profile": profile.slug, "rule": history.rule(),
                         "runs": [{"id": r.pk, "finished_at": r.finished_at, "tps": (r.summary or {}).get("tps"), "params": r.params,
                                   "regression": r.regression, "trend": r.trend, "repeat_group": r.repeat_group_id} for r in runs],
                         "setups": [{"params": g["params"], "runs": [r.pk for r in g["runs"]], "n": g["n"], "mean_tps": g["mean"],
                                     "stdev_tps": g["stdev"], "ci_low_tps": g["ci_low"], "ci_high_tps": g["ci_high"], "cv": g["cv"]}
                                    for g in groups],
                         "repeat_groups": [{"id": g["id"], "count": g["count"], "runs": [r.pk for r in g["runs"]], "n": g["n"],
                                            "mean_tps": g["mean"], "stdev_tps": g["stdev"], "ci_low_tps": g["ci_low"],
                                            "ci_high_tps": g["ci_high"], "cv": g["cv"], "regression": g["regression"]}
                                           for g in repeats]})

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.OBJECT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["get"])
    def export(self, request, pk=None, version=None):
        """The whole run as one self-describing JSON document (its `fields` say what each part holds)."""
        return json_response(self.get_object())

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["get"], url_path="samples-csv")
    def samples_csv(self, request, pk=None, version=None):
        """The tool's and the server's samples as CSV (`source` = tool | server)."""
        return csv_response(self.get_object())

    @extend_schema(request=None, responses={
        202: OpenApiResponse(RunSerializer, description="Cancelled (a queued run) or asked to stop (an active one)."),
        409: CANCEL_CONFLICT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None, version=None):
        run = self.get_object()
        check_may_change_run(request.user, run, _("You can only cancel your own runs."))
        changed = actions.cancel(run, request.user)
        run.refresh_from_db()
        code = status.HTTP_202_ACCEPTED if changed else status.HTTP_409_CONFLICT
        body = RunSerializer(run, context={"request": request}).data
        if not changed:
            body = error_body(_("Run %(id)s has already finished (%(state)s).") % {"id": run.pk, "state": run.state},
                              "conflict", run=body)
        return Response(body, status=code)



STAFF_FORBIDDEN = OpenApiResponse(ERROR, description="Authenticated, but not staff (reading needs staff or a benchmark operator).")
SCHEDULE_WRITE_ERRORS = {**WRITE_ERRORS, 403: STAFF_FORBIDDEN}


@extend_schema_view(
    list=extend_schema(responses={200: ScheduleSerializer(many=True), **READ_ERRORS}),
    retrieve=extend_schema(responses={200: ScheduleSerializer, **READ_ERRORS}),
    create=extend_schema(responses={201: ScheduleSerializer, **SCHEDULE_WRITE_ERRORS}),
    update=extend_schema(responses={200: ScheduleSerializer, **SCHEDULE_WRITE_ERRORS}),
    partial_update=extend_schema(responses={200: ScheduleSerializer, **SCHEDULE_WRITE_ERRORS}),
    destroy=extend_schema(responses={204: None, 401: UNAUTHENTICATED, 403: STAFF_FORBIDDEN, 404: NOT_FOUND}),
)
class ScheduleViewSet(OperatorAPIMixin, viewsets.ModelViewSet):
    """Scheduled runs: a profile on a target at cron-like times (Celery beat, database scheduler); each due
    time starts `repeats` ordinary runs whose `schedule` is this one. Staff write; operators read. Deleting
    a schedule keeps its runs."""

    permission_classes = [MethodIsAllowed, IsStaffToWrite]
    serializer_class = ScheduleSerializer
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        recent = Run.objects.only("id", "state", "schedule_id", "created_at").order_by("-created_at", "-id")
        return (Schedule.objects.select_related("target", "profile", "created_by")
                .prefetch_related(Prefetch("runs", queryset=recent)).order_by("name", "id"))

    def _save(self, serializer, **extra):
        try:  # save_schedule validates again (the one gate) and writes the beat entry in one transaction
            schedule = serializer.instance or Schedule()
            for name, value in {**serializer.validated_data, **extra}.items():
                setattr(schedule, name, value)
            serializer.instance = save_schedule(schedule)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        serializer.instance = self.get_queryset().get(pk=serializer.instance.pk)

    def perform_create(self, serializer):
        self._save(serializer, created_by=self.request.user)

    def perform_update(self, serializer):
        self._save(serializer)

    def perform_destroy(self, instance):
        delete_schedule(instance)

    def _set_enabled(self, enabled):
        schedule = self.get_object()
        set_enabled(schedule, enabled)
        return Response(ScheduleSerializer(self.get_queryset().get(pk=schedule.pk), context={"request": self.request}).data)

    @extend_schema(request=None, responses={200: ScheduleSerializer, 401: UNAUTHENTICATED, 403: STAFF_FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None, version=None):
        """Pause the schedule (enabled = false): its due times start no run until it is resumed. Idempotent."""
        return self._set_enabled(False)

    @extend_schema(request=None, responses={200: ScheduleSerializer, 401: UNAUTHENTICATED, 403: STAFF_FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None, version=None):
        """Resume a paused schedule (enabled = true). Idempotent."""
        return self._set_enabled(True)


CAMPAIGN_PAUSE_CONFLICT = OpenApiResponse(
    error_component("CampaignPauseConflict", "conflict", campaign=CampaignSerializer()),
    description="Pause: already paused, or no run left to start. Resume: not paused.",
)
CAMPAIGN_EDITION_CONFLICT = OpenApiResponse(
    error_component("CampaignEditionConflict", "conflict", campaign=CampaignSerializer()),
    description="Draft: no cell has a succeeded run. Publish: nothing drafted, or its document's slug is taken.",
)
STAFF_ONLY = OpenApiResponse(ERROR, description="Authenticated, but not staff.")
CAMPAIGN_DRAFT = inline_serializer("CampaignDraft", {
    "slug": serializers.CharField(help_text="The draft document's slug (internal-<date>-<series>)."),
    "tables": serializers.IntegerField(help_text="Its tables."),
    "rows": serializers.IntegerField(help_text="Its rows (one per flavour measured)."),
    "review_url": serializers.URLField(help_text="The review page (HTML)."),
    "data_file_url": serializers.URLField(help_text="The draft as a data file in the catalogue's format (YAML)."),
})
CAMPAIGN_PUBLISHED = inline_serializer("CampaignPublished", {
    "document": serializers.CharField(help_text="The published document's slug."),
    "url": serializers.URLField(help_text="The document in the API."),
    "html_url": serializers.URLField(help_text="The document's page."),
})
CAMPAIGN_CANCEL_CONFLICT = OpenApiResponse(
    error_component("CampaignCancelConflict", "conflict", campaign=CampaignSerializer()),
    description="Every run of the campaign has already ended: nothing to cancel.",
)


@extend_schema_view(
    list=extend_schema(responses={200: CampaignSerializer(many=True), **READ_ERRORS}),
    retrieve=extend_schema(responses={200: CampaignSerializer, **READ_ERRORS}),
    create=extend_schema(responses={201: CampaignSerializer, **WRITE_ERRORS}),
)
class CampaignViewSet(OperatorAPIMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Campaigns (issue 47): one profile over several targets, each target a cell measured as a series, rounds
    interleaving the targets. POST launches one (201): its runs are queued round after round."""

    serializer_class = CampaignSerializer
    filterset_class = None
    ordering_fields = ["created_at", "id"]
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        return with_cells(Campaign.objects.select_related("profile", "created_by"))

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:  # launch_campaign is the one place a campaign is validated; its errors come back field by field
            serializer.instance = launch_campaign(
                name=data["name"], profile=data["profile"], overrides=data.get("overrides") or {}, targets=data["targets"],
                user=self.request.user, repeats=data.get("repeats", 5), reference=data.get("reference"),
                confirm=data.get("confirm", False))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None

    @extend_schema(request=None, responses={
        202: OpenApiResponse(CampaignSerializer, description="Its queued runs cancelled, its active runs asked to stop."),
        409: CAMPAIGN_CANCEL_CONFLICT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None, version=None):
        campaign = self.get_object()
        check_may_change_campaign(request.user, campaign, _("You can only cancel your own campaigns."))
        if not cancel_campaign(campaign, request.user):
            return self._conflict(campaign, _("Campaign %(id)s has nothing left to cancel (%(state)s).") % {
                "id": campaign.pk, "state": state_of(campaign)})
        return Response(self._body(campaign), status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={
        200: OpenApiResponse(CampaignSerializer, description="Its queued runs held; its active runs finish."),
        409: CAMPAIGN_PAUSE_CONFLICT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None, version=None):
        """Pause: no run of the campaign starts until it resumes; the runs already active finish."""
        campaign = self.get_object()
        check_may_change_campaign(request.user, campaign, _("You can only pause your own campaigns."))
        if pause_campaign(campaign):
            return Response(self._body(campaign))
        reason = (_("Campaign %(id)s is already paused.") if campaign.paused_at else
                  _("Campaign %(id)s has no run left to start (%(state)s).")) % {"id": campaign.pk, "state": state_of(campaign)}
        return self._conflict(campaign, reason)

    @extend_schema(request=None, responses={
        200: OpenApiResponse(CampaignSerializer, description="Its held runs queued again, in their rounds' order."),
        409: CAMPAIGN_PAUSE_CONFLICT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None, version=None):
        campaign = self.get_object()
        check_may_change_campaign(request.user, campaign, _("You can only resume your own campaigns."))
        if resume_campaign(campaign):
            return Response(self._body(campaign))
        return self._conflict(campaign, _("Campaign %(id)s is not paused (%(state)s).") % {
            "id": campaign.pk, "state": state_of(campaign)})

    @extend_schema(request=None, responses={
        201: OpenApiResponse(CAMPAIGN_DRAFT, description="Drafted from the cells finished so far (an earlier draft replaced)."),
        409: CAMPAIGN_EDITION_CONFLICT, 401: UNAUTHENTICATED, 403: STAFF_ONLY, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def draft(self, request, pk=None, version=None):
        """Draft the campaign's edition (staff): a data file in the catalogue's format, one table per engine version,
        family and memory ratio, one row per flavour with the mean of its cell's runs, n and the 95 % interval."""
        campaign = self._staff_campaign(request)
        try:
            data = draft_edition(campaign, request.user)
        except EditionError as exc:
            return self._conflict(campaign, " ".join(exc.messages))
        return Response(self._draft_body(campaign, data), status=status.HTTP_201_CREATED)

    @extend_schema(request=PublishEditionSerializer, responses={
        200: OpenApiResponse(CAMPAIGN_PUBLISHED, description="The drafted edition imported as a document of internal measurements."),
        400: FIELD_ERRORS, 409: CAMPAIGN_EDITION_CONFLICT, 401: UNAUTHENTICATED, 403: STAFF_ONLY, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def publish(self, request, pk=None, version=None):
        """Publish the drafted edition (staff): exactly the draft, as a document labelled internal everywhere."""
        campaign = self._staff_campaign(request)
        body = PublishEditionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            document = publish_edition(campaign, request.user, acknowledge_other_load=body.validated_data["acknowledge_other_load"])
        except EditionError as exc:
            return self._conflict(campaign, " ".join(exc.messages))
        except DjangoValidationError as exc:  # the other load not acknowledged: a 400 naming the field
            raise serializers.ValidationError(exc.message_dict) from None
        return Response({"document": document.slug,
                         "url": request.build_absolute_uri(reverse("v1:document-detail", args=[document.slug])),
                         "html_url": request.build_absolute_uri(document.get_absolute_url())})

    def _staff_campaign(self, request):
        campaign = self.get_object()
        if not is_staff(request.user):
            raise PermissionDenied(_("Only staff can draft or publish a campaign's edition."))
        return campaign

    def _draft_body(self, campaign, data):
        request = self.request
        return {"slug": data["document"]["slug"], "tables": len(data["tables"]),
                "rows": sum(len(t["rows"]) for t in data["tables"]),
                "review_url": request.build_absolute_uri(reverse("runs:campaign-edition", args=[campaign.pk])),
                "data_file_url": request.build_absolute_uri(reverse("runs:campaign-edition-file", args=[campaign.pk]))}

    def _body(self, campaign):
        """The campaign as it is now (its runs read again: an action has just changed them)."""
        return CampaignSerializer(self.get_queryset().get(pk=campaign.pk), context={"request": self.request}).data

    def _conflict(self, campaign, reason):
        return Response(error_body(reason, "conflict", campaign=self._body(campaign)), status=status.HTTP_409_CONFLICT)
