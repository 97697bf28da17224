"""HTTP caching of the catalogue API: ETag and Last-Modified from the catalogue stamp
(whitepaper.freshness, the same the HTML pages use), 304 on a conditional GET before the view runs
(after authentication and throttling), and Cache-Control: shared caches may keep anonymous answers
but must revalidate them (a cheap 304), so an import is visible at once."""

import hashlib

from django.conf import settings
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date

from config.api import NotModified

from ..freshness import catalogue_stamp


def api_etag(request):
    """A strong ETag for a catalogue answer: the stamp, the scheme, host and URL with its query (bodies
    carry absolute URLs) and the negotiated media type (JSON or CSV)."""
    changed, n = catalogue_stamp(request)
    text = "|".join([changed.isoformat() if changed else "-", str(n), request.scheme, request.get_host(),
                     request.get_full_path(), str(getattr(request, "accepted_media_type", ""))])
    return '"%s"' % hashlib.sha256(text.encode()).hexdigest()[:32]


class CatalogueCaching:
    """Mixin for the catalogue's API views (viewsets, spec lookup)."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("GET", "HEAD"):
            changed = catalogue_stamp(request)[0]
            etag, last_modified = api_etag(request), int(changed.timestamp()) if changed else None
            request._api_validators = (etag, last_modified)
            conditional = get_conditional_response(request._request, etag=etag, last_modified=last_modified)
            if conditional is not None and conditional.status_code == 304:
                raise NotModified()

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        validators = getattr(request, "_api_validators", None)
        if validators is not None and response.status_code in (200, 304):
            etag, last_modified = validators
            response["ETag"] = etag
            if last_modified is not None:
                response["Last-Modified"] = http_date(last_modified)
            if request.user.is_authenticated:
                response["Cache-Control"] = "private, no-cache"
            else:
                response["Cache-Control"] = f"public, max-age={settings.API_CACHE_MAX_AGE}, must-revalidate"
            patch_vary_headers(response, ["Accept"])
        return response
