from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from config.api import error_body

from ..models import BenchmarkProfile, Run, Target, is_operator
from ..services import launch_run
from ..views import RunFilter, may_change
from .serializers import ProfileSerializer, RunSerializer, SampleSerializer, TargetSerializer

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
            body = error_body(_("Run %(id)s has already finished (%(state)s).") % {"id": run.pk, "state": run.state},
                              "conflict", run=body)
        return Response(body, status=code)
