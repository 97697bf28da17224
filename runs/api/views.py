from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from .. import compare
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
                               OpenApiParameter("base", int, description="The baseline run (one of them; default the first).")],
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

