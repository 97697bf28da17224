from django.core.exceptions import ValidationError as DjangoValidationError
import django_filters
from django_filters.rest_framework import DjangoFilterBackend
from django import forms
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view,
                                   inline_serializer)
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from whitepaper.api.pagination import CatalogPagination

from ..models import BenchmarkProfile, Run, RunState, Target, is_operator
from ..services import launch_run
from ..views import RunFilter, may_change
from .serializers import ProfileSerializer, RunSerializer, SampleSerializer, TargetSerializer

MAX_SAMPLES = 5000
MAX_ID = 2**63 - 1  # PostgreSQL bigint

# --- documented answers (the schema says what the endpoints really answer) -----------------------
ERROR = inline_serializer("RunsError", {"detail": serializers.CharField(help_text="What went wrong.")})
FIELD_ERRORS = OpenApiResponse(
    inline_serializer("FieldErrors", {
        "field": serializers.ListField(child=serializers.CharField(), required=False,
                                       help_text="Messages about this field or parameter (one key per field)."),
    }),
    description="Bad input: the body maps each offending field or query parameter to its messages, e.g. "
                "{\"target\": [\"Invalid pk \\\"99\\\" - object does not exist.\"]}; a malformed or too deeply nested "
                "JSON body is {\"detail\": ...}.",
)
UNAUTHENTICATED = OpenApiResponse(ERROR, description="No credentials (or bad ones): log in or send `Authorization: Token <key>`.")
FORBIDDEN = OpenApiResponse(ERROR, description="Authenticated, but not staff or a benchmark operator "
                                               "(or, to cancel, not the run's owner).")
NOT_FOUND = OpenApiResponse(ERROR, description="No such object, or a page past the last one.")
TOO_LARGE = OpenApiResponse(ERROR, description="The request body is over API_MAX_BODY_BYTES.")
READ_ERRORS = {400: FIELD_ERRORS, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND}
WRITE_ERRORS = {**READ_ERRORS, 413: TOO_LARGE}
SAMPLE_PAGE = inline_serializer("SamplePage", {
    "run": serializers.IntegerField(help_text="The run's id."),
    "state": serializers.ChoiceField(choices=RunState.choices, help_text="The run's state now."),
    "count": serializers.IntegerField(help_text=f"Samples in this answer (at most {MAX_SAMPLES})."),
    "next_after": serializers.IntegerField(help_text="Pass as `after` to get only newer samples."),
    "results": SampleSerializer(many=True),
})
CANCEL_CONFLICT = OpenApiResponse(
    inline_serializer("CancelConflict", {"detail": serializers.CharField(), "run": RunSerializer()}),
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


@extend_schema_field(OpenApiTypes.INT)
class IdFilter(django_filters.NumberFilter):
    """A whole-number id; an id that matches nothing is an empty list, not an error."""

    field_class = forms.IntegerField


class RunAPIFilter(RunFilter):
    """The runs page's filters, strict: `mine` is true or false, `target` an id (unknown: no runs)."""

    mine = strict_boolean("mine", "Only my runs (true).", method="filter_mine")
    target = IdFilter(field_name="target_id", label="Only the runs of this target (id).")


class IsOperator(permissions.BasePermission):
    """Staff or 'benchmark operators', by session or token; everyone else 403 (401 without credentials)."""

    message = "Runs and targets are for staff and benchmark operators."

    def has_permission(self, request, view):
        return is_operator(request.user)


class OperatorAPIMixin:
    # Token first: an anonymous request is a 401 with `WWW-Authenticate: Token` (DRF answers 403 when
    # the first scheme is the session, which has no challenge).
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsOperator]
    pagination_class = CatalogPagination  # {count, next, previous, results}; page, page_size (at most 500)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
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
    filter_backends = [DjangoFilterBackend]
    filterset_fields = ["engine"]


@extend_schema_view(list=extend_schema(responses={200: ProfileSerializer(many=True), **READ_ERRORS}),
                    retrieve=extend_schema(responses={200: ProfileSerializer, **READ_ERRORS}))
class ProfileViewSet(OperatorAPIMixin, viewsets.ReadOnlyModelViewSet):
    queryset = BenchmarkProfile.objects.order_by("slug")
    serializer_class = ProfileSerializer
    filter_backends = [DjangoFilterBackend]
    lookup_field = "slug"
    filterset_class = ProfileFilter


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
        return Run.objects.for_list().select_related("reproduces", "published_result")

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:  # launch_run is the one place a run is validated; its errors come back field by field
            serializer.instance = launch_run(target=data["target"], profile=data["profile"],
                                             overrides=data.get("overrides") or {}, user=self.request.user)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None

    @extend_schema(parameters=[OpenApiParameter("after", {"type": "integer", "minimum": 0, "maximum": MAX_ID},
                                                description="Only samples with an id greater than this (a whole number >= 0).")],
                   responses={200: SAMPLE_PAGE, **READ_ERRORS})
    @action(detail=True, methods=["get"])
    def samples(self, request, pk=None, version=None):
        run = get_object_or_404(Run.objects.only("id", "state"), pk=pk)
        after = request.query_params.get("after", "0")
        if not (after.isascii() and after.isdigit()) or int(after) > MAX_ID:
            raise serializers.ValidationError({"after": _("after must be a sample id (a whole number >= 0).")})
        samples = list(run.samples.filter(id__gt=int(after)).order_by("id")[:MAX_SAMPLES])
        return Response({"run": run.pk, "state": run.state, "count": len(samples),
                         "next_after": samples[-1].id if samples else int(after),
                         "results": SampleSerializer(samples, many=True).data})

    @extend_schema(request=None, responses={
        202: OpenApiResponse(RunSerializer, description="Cancelled (a queued run) or asked to stop (an active one)."),
        409: CANCEL_CONFLICT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND})
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
