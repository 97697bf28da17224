"""DRF's error answers, plus what a client needs to retry: a throttled request (429) carries
`retry_after` (seconds) in its JSON body as well as the Retry-After header."""

import math

from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.Throttled):
        wait = math.ceil(exc.wait) if exc.wait is not None else 1
        response.data = {"detail": f"Too many requests: try again in {wait} seconds.", "retry_after": wait}
        response["Retry-After"] = str(wait)
    return response
