"""Every answer under /api/ is JSON (its own module, free of DRF imports: middleware load before DRF's
settings). DRF's views answer in the one error shape themselves; these cover what Django answers before
or around them."""

import json

from django.http import HttpResponsePermanentRedirect
from django.middleware.common import CommonMiddleware
from django.middleware.gzip import GZipMiddleware
from django.utils.http import escape_leading_slashes

from .errors import replace_body


def is_api(request):
    return request.path_info == "/api" or request.path_info.startswith("/api/")


class APICommonMiddleware(CommonMiddleware):
    """Django's CommonMiddleware, but a path under /api/ missing its trailing slash is answered in JSON
    (Django: a 301 with an HTML content type, and with DEBUG on an HTML 500 for a POST): 301 for GET and
    HEAD, 308 (the method and body kept) for the others, `Location` and `location` naming the URL."""

    def process_response(self, request, response):
        if is_api(request) and response.status_code == 404 and self.should_redirect_with_slash(request):
            location = escape_leading_slashes(request.get_full_path(force_append_slash=True))
            body = {"detail": f"API URLs end with a slash: {location}", "code": "trailing_slash", "errors": {},
                    "location": location}
            return HttpResponsePermanentRedirect(location, content=json.dumps(body), content_type="application/json",
                                                 preserve_request=request.method not in ("GET", "HEAD"))
        return super().process_response(request, response)


class APIJSONErrorsMiddleware:
    """Outermost under /api/: an error answer that is not JSON (Django's 400 for a bad Host header, its
    CSRF 403, a 500 from a crash) becomes the one error shape with the same status."""

    CODES = {400: "bad_request", 403: "permission_denied", 404: "not_found", 405: "method_not_allowed",
             413: "too_large", 500: "error"}

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (is_api(request) and response.status_code >= 400 and not response.streaming
                and not response.get("Content-Type", "").startswith("application/json")):
            # In place: the other headers (Allow, CORS, Vary...) stay as they were.
            replace_body(response, json.dumps({"detail": f"{response.reason_phrase}.", "errors": {},
                                               "code": self.CODES.get(response.status_code, "error")}))
            response["Content-Type"] = "application/json"
        return response


class APIGZipMiddleware(GZipMiddleware):
    """gzip for JSON and CSV under /api/ when the client asks (Accept-Encoding: gzip): an 81 KB page of results
    is about 4 KB. The API's answers hold no secret of the caller. (Anonymous catalogue pages: PageGZipMiddleware,
    whitepaper/pages.py, which says why that is safe from BREACH.)"""

    def process_response(self, request, response):
        # Parquet compresses its own pages (zstd/snappy): gzip on top only costs time on both ends.
        if not is_api(request) or response.get("Content-Type", "").startswith("application/vnd.apache.parquet"):
            return response
        return super().process_response(request, response)
