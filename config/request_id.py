"""A request id on every answer (`X-Request-ID`): the caller's own when it sent a sane one (a proxy's or a
client's, so both sides can quote it), otherwise a new one. Support can find a consumer's failing call
by it; the runs' logs and the access log can carry it."""

import re
import uuid

HEADER = "X-Request-ID"
SANE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class RequestIdMiddleware:
    """Right inside WhiteNoise, so every answer of Django's carries it: pages, API, errors and 304s (static
    files, the same bytes for everyone, are answered before it)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.META.get("HTTP_X_REQUEST_ID", "")  # not request.headers: it copies every header first
        request.request_id = given if SANE.fullmatch(given) else uuid.uuid4().hex
        response = self.get_response(request)
        response[HEADER] = request.request_id
        return response
