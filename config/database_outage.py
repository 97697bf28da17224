"""A blip of the dashboard's database (its connections terminated, a restart) while a request is in flight: a 503
with Retry-After, in the one error shape under /api/ and as a short page elsewhere, never a 500. The next request
reconnects (CONN_HEALTH_CHECKS). The page renders no template that could ask the database again."""

import json
import logging

from django.db import InterfaceError, OperationalError, connections
from django.http import HttpResponse
from django.utils.html import escape
from django.utils.translation import gettext as _

from .api_responses import is_api

log = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5


class DatabaseOutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        log.warning("the database did not answer %s %s: %s", request.method, request.path, " ".join(str(exception).split()))
        for conn in connections.all(initialized_only=True):  # broken: the next request opens new ones
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - already broken
                conn.connection = None
        message = _("The dashboard's database did not answer; try again in %(s)s seconds.") % {"s": RETRY_AFTER_SECONDS}
        if is_api(request):
            response = HttpResponse(json.dumps({"detail": message, "code": "database_unavailable", "errors": {},
                                                "retry_after": RETRY_AFTER_SECONDS}),
                                    status=503, content_type="application/json")
        else:
            response = HttpResponse(f"<!doctype html><html><head><meta charset=\"utf-8\"><title>503</title></head>"
                                    f"<body><h1>503</h1><p>{escape(message)}</p></body></html>", status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
