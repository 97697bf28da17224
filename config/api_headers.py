"""Response headers of everything under /api/ (its own module, free of DRF imports: middleware load
before DRF's settings, which import config.api)."""

from django.conf import settings

RATE_LIMIT_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]


class APIHeadersMiddleware:
    """Under /api/: the anonymous throttle's state as X-RateLimit-Limit / -Remaining / -Reset (seconds)
    on every throttled answer (200, 304, 4xx, 429), and no `Vary: Cookie` on answers to requests
    without a session cookie (the session middleware adds it once authentication looked at the
    session; anonymous answers do not depend on cookies, so shared caches may keep them). Listed
    before SessionMiddleware, so it sees the response after it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not request.path.startswith("/api/"):
            return response
        limit = getattr(request, "rate_limit", None)
        if limit is not None:
            for name, value in zip(RATE_LIMIT_HEADERS, limit):
                response[name] = str(value)
        if settings.SESSION_COOKIE_NAME not in request.COOKIES and response.has_header("Vary"):
            kept = [v.strip() for v in response["Vary"].split(",") if v.strip().lower() != "cookie"]
            if kept:
                response["Vary"] = ", ".join(kept)
            else:
                del response["Vary"]
        return response
