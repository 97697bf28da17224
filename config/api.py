"""Pieces of the REST API shared by every app under /api/v1/: the exception handler, the anonymous
throttle, the JSON 404 for unknown paths and the error answers the schema documents."""

import math

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    """DRF's error answers, plus what a client needs to retry: a throttled request (429) carries
    `retry_after` (seconds) in its JSON body as well as the Retry-After header."""
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.Throttled):
        wait = math.ceil(exc.wait) if exc.wait is not None else 1
        response.data = {"detail": f"Too many requests: try again in {wait} seconds.", "retry_after": wait}
        response["Retry-After"] = str(wait)
    return response


class AnonReadThrottle(AnonRateThrottle):
    """Anonymous read throttle whose rate is read from settings on each request (API_ANON_RATE via
    REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']['anon']), so a changed setting applies at once."""

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


def not_found(request, *args, **kwargs):
    """JSON 404 for any other path under /api/v1/ (instead of Django's HTML page)."""
    return JsonResponse({"detail": f"No API endpoint at {request.path}; see /api/v1/ and /api/v1/docs/."}, status=404)


# --- Error answers, as the schema documents them ---------------------------------------------------

ERROR = inline_serializer("Error", {"detail": serializers.CharField(help_text="What went wrong.")})
PARAMETER_ERRORS = OpenApiResponse(
    inline_serializer("ParameterErrors", {
        "parameter": serializers.ListField(child=serializers.CharField(), required=False,
                                           help_text="Messages about this query parameter (one key per parameter)."),
    }),
    description="A query parameter is unknown, malformed or out of range: the body maps each offending "
                "parameter to its messages, e.g. {\"min_tps\": [\"Enter a number.\"]}.",
)
THROTTLED = OpenApiResponse(
    inline_serializer("Throttled", {
        "detail": serializers.CharField(),
        "retry_after": serializers.IntegerField(help_text="Seconds to wait (also in the Retry-After header)."),
    }),
    description="Too many anonymous requests; retry after Retry-After seconds.",
)
NOT_FOUND = OpenApiResponse(ERROR, description="No such object, or a page past the last one.")
COMMON_ERRORS = {400: PARAMETER_ERRORS, 404: NOT_FOUND, 429: THROTTLED}
