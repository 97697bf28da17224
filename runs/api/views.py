from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from .. import compare, history
from ..models import BenchmarkProfile, Run, Target, is_operator
from ..record import csv_response, json_response
from ..services import launch_run
from ..views import RunFilter, may_change
from .serializers import ProfileSerializer, RunSerializer, SampleSerializer, ServerSampleSerializer, TargetSerializer

MAX_SAMPLES = 5000


class IsOperator(permissions.BasePermission):
    """Staff or 'benchmark operators', by session or token; everyone else 403 (401 without credentials)."""

    message = "Runs and targets are for staff and benchmark operators."

    def has_permission(self, request, view):
        return is_operator(request.user)


class TargetViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Target.objects.all()
    serializer_class = TargetSerializer
    permission_classes = [IsOperator]
    filterset_fields = ["engine"]


class ProfileViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = BenchmarkProfile.objects.all()
    serializer_class = ProfileSerializer
    permission_classes = [IsOperator]
    lookup_field = "slug"
    filterset_fields = ["tool", "engine", "quick"]


class RunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Benchmark runs. POST creates a queued run (201); the worker moves it through
    preparing, running, cleaning_up to succeeded / failed / cancelled."""

    serializer_class = RunSerializer
    permission_classes = [IsOperator]
    filterset_class = RunFilter
    ordering_fields = ["created_at", "id"]

    def get_queryset(self):
        return Run.objects.for_list().select_related("reproduces", "published_result")

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:  # launch_run is the one place a run is validated; its errors come back field by field
            serializer.instance = launch_run(target=data["target"], profile=data["profile"],
                                             overrides=data.get("overrides") or {}, user=self.request.user)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None

    @extend_schema(parameters=[OpenApiParameter("after", int, description="Only samples with an id greater than this.")],
                   responses=SampleSerializer(many=True))
    @action(detail=True, methods=["get"])
    def samples(self, request, pk=None, version=None):
        run = get_object_or_404(Run.objects.only("id", "state"), pk=pk)
        after = request.query_params.get("after", "0")
        if not after.isdigit():
            raise serializers.ValidationError({"after": _("after must be a sample id (a whole number >= 0).")})
        samples = list(run.samples.filter(id__gt=int(after)).order_by("id")[:MAX_SAMPLES])
        return Response({"run": run.pk, "state": run.state, "count": len(samples),
                         "next_after": samples[-1].id if samples else int(after),
                         "results": SampleSerializer(samples, many=True).data})

    @extend_schema(parameters=[OpenApiParameter("after", int, description="Only readings with an id greater than this.")],
                   responses=ServerSampleSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="server-samples")
    def server_samples(self, request, pk=None, version=None):
        """The server's counters (as rates) and the client's CPU, read by the worker at each report interval."""
        run = get_object_or_404(Run.objects.only("id", "state"), pk=pk)
        after = request.query_params.get("after", "0")
        if not after.isdigit():
            raise serializers.ValidationError({"after": _("after must be a sample id (a whole number >= 0).")})
        samples = list(run.server_samples.filter(id__gt=int(after)).order_by("id")[:MAX_SAMPLES])
        return Response({"run": run.pk, "state": run.state, "count": len(samples),
                         "next_after": samples[-1].id if samples else int(after),
                         "results": ServerSampleSerializer(samples, many=True).data})

    @extend_schema(parameters=[OpenApiParameter("run", int, many=True, description="2 to 6 run ids, in the order shown."),
                               OpenApiParameter("base", int, description="The baseline run (one of them; default the earliest).")],
                   responses={(200, "application/json"): dict})
    @action(detail=False, methods=["get"])
    def compare(self, request, version=None):
        """2 to 6 runs compared: `differences` (each aspect whose values differ: parameters, tool and server
        versions, server settings, client, target size; one value per run), `same`, `results` (TPS, QPS,
        p95 in ms and % against the baseline), `by_threads` (sweeps matched by thread count), `samples`
        (per run and step: [seconds since the step started, TPS, latency ms])."""
        try:
            runs, base_index = compare.parse_selection(request.query_params.getlist("run"), request.query_params.get("base"))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        data = compare.compare(runs, base_index)
        data["samples"] = compare.samples(runs)
        return Response(data)

    @extend_schema(responses=RunSerializer(many=True))
    @action(detail=False, methods=["get"])
    def regressions(self, request, version=None):
        """The runs judged regressions (newest first) and the rule they were judged by."""
        runs = self.get_queryset().filter(regression=True).order_by("-finished_at", "-id")
        page = self.paginate_queryset(runs)
        data = RunSerializer(page if page is not None else runs, many=True, context={"request": request}).data
        return self.get_paginated_response(data) if page is not None else Response({"rule": history.rule(), "results": data})

    @extend_schema(parameters=[OpenApiParameter("target", int, required=True), OpenApiParameter("profile", str, required=True,
                                                                                          description="The profile's slug.")],
                   responses={(200, "application/json"): dict})
    @action(detail=False, methods=["get"])
    def series(self, request, version=None):
        """The succeeded runs of one target and profile, oldest first (id, finished_at, TPS, regression,
        trend), and the repeats of each set-up (n, mean and standard deviation of TPS)."""
        target_id, slug = request.query_params.get("target", ""), request.query_params.get("profile", "")
        errors = {}
        target = Target.objects.filter(pk=target_id).first() if target_id.isdigit() else None
        profile = BenchmarkProfile.objects.filter(slug=slug).first() if slug else None
        if target is None:
            errors["target"] = [_("Give an existing target id.")]
        if profile is None:
            errors["profile"] = [_("Give an existing profile slug.")]
        if errors:
            raise serializers.ValidationError(errors)
        runs, groups = history.series(target, profile)
        return Response({"target": target.pk, "profile": profile.slug, "rule": history.rule(),
                         "runs": [{"id": r.pk, "finished_at": r.finished_at, "tps": (r.summary or {}).get("tps"), "params": r.params,
                                   "regression": r.regression, "trend": r.trend} for r in runs],
                         "setups": [{"params": g["params"], "runs": [r.pk for r in g["runs"]], "n": g["n"], "mean_tps": g["mean"],
                                     "stdev_tps": g["stdev"]} for g in groups]})

    @extend_schema(responses={(200, "application/json"): dict})
    @action(detail=True, methods=["get"])
    def export(self, request, pk=None, version=None):
        """The whole run as one self-describing JSON document (its `fields` say what each part holds)."""
        return json_response(self.get_object())

    @extend_schema(responses={(200, "text/csv"): str})
    @action(detail=True, methods=["get"], url_path="samples-csv")
    def samples_csv(self, request, pk=None, version=None):
        """The tool's and the server's samples as CSV (`source` = tool | server)."""
        return csv_response(self.get_object())

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None, version=None):
        run = self.get_object()
        if not may_change(request.user, run):
            raise PermissionDenied(_("You can only cancel your own runs."))
        changed = run.cancel(reason=_("Cancelled by %(user)s before it started.") % {"user": request.user.get_username()})
        run.refresh_from_db()
        code = status.HTTP_202_ACCEPTED if changed else status.HTTP_409_CONFLICT
        body = RunSerializer(run, context={"request": request}).data
        if not changed:
            body = {"detail": _("Run %(id)s has already finished (%(state)s).") % {"id": run.pk, "state": run.state}, "run": body}
        return Response(body, status=code)

