"""HTTP caching of the catalogue API: ETag and Last-Modified from the catalogue stamp
(whitepaper.freshness, the same the HTML pages use), 304 on a conditional GET before the view runs
(after authentication and throttling), and Cache-Control: shared caches may keep anonymous answers
but must revalidate them (a cheap 304), so an import is visible at once.

Anonymous answers are served like the pages (whitepaper.pages): kept in the process (LocalPages) and the shared
cache under a key of the catalogue stamp, the scheme and host (bodies carry absolute URLs), the path, the query
normalised (parameters sorted, each one's values in the order given) and the negotiated media type; any
catalogue write moves the stamp, so the next request computes the answer afresh. Authentication and the rate
limit run first (DRF's initial()): a cached answer is counted and carries the X-RateLimit-* headers like any."""

import hashlib
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError
from django.http import HttpResponse, StreamingHttpResponse
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date

from config.api import NotModified
from config.api_headers import RATE_LIMIT_HEADERS
from config.throttling import judge_anonymous

from ..freshness import catalogue_stamp
from ..pages import PAGE_CACHE_SECONDS, LocalPages

local_answers = LocalPages(256)  # per process, in front of the shared cache
MAX_CACHED_BYTES = 8 * 1024 * 1024  # a larger CSV or Parquet streams as computed, never buffered whole
# Set again on each answer (they follow the request or its validators), never replayed from the cache.
NOT_REPLAYED = {"etag", "last-modified", "cache-control", "vary", "date", "set-cookie", "x-request-id"}


class CachedAnswer(Exception):
    """Raised from initial() when the answer is in the cache: handle_exception returns it."""

    def __init__(self, response):
        super().__init__()
        self.response = response


def answer_key(request):
    """The cache key of an anonymous answer (None: not cached: a write, a logged-in user, a token)."""
    if request.method not in ("GET", "HEAD") or request.user.is_authenticated or request.auth is not None:
        return None
    # Read now (one small query), as the results' kept count is: another process's write must not be missed.
    changed, n = catalogue_stamp(request, fresh=True)
    pairs = [(k, v) for k, values in request.query_params.lists() for v in values]
    query = urlencode(sorted(pairs, key=lambda pair: pair[0]))  # stable: a parameter's values keep their order
    text = "|".join([changed.isoformat() if changed else "-", str(n), request.scheme, request.get_host(),
                     request.path, query, str(getattr(request, "accepted_media_type", ""))])
    return "api-answer:" + hashlib.sha256(text.encode()).hexdigest()


def _replay(stored):
    status, content, headers, streaming = stored
    # A CSV or Parquet stays a streamed answer (as computed), JSON a plain one.
    response = StreamingHttpResponse([content], status=status) if streaming else HttpResponse(content, status=status)
    for name, value in headers:
        response[name] = value
    return response


def _keep(request, key, response):
    """Store a 200's status, bytes and headers (a streamed CSV or Parquet joined, up to MAX_CACHED_BYTES); returns
    the response to send (the same bytes)."""
    if response.streaming:
        chunks, size = [], 0
        iterator = iter(response.streaming_content)
        for chunk in iterator:
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_CACHED_BYTES:  # too large to keep: send what was read, then the rest
                response.streaming_content = _chain(chunks, iterator)
                return response
        content = b"".join(chunks)
    else:
        if hasattr(response, "render"):
            response.render()
        content = response.content
    headers = [(name, value) for name, value in response.items() if name.lower() not in NOT_REPLAYED]
    stored = (response.status_code, content, headers, response.streaming)
    local_answers.set(key, stored)
    cache.set(key, stored, PAGE_CACHE_SECONDS)
    request._answer_stored = stored  # AnswerMiddleware may keep the finished answer
    if response.streaming:
        replayed = _replay(stored)
        for name in ("Vary",):
            if name in response:
                replayed[name] = response[name]
        return replayed
    return response


def _chain(first, rest):
    yield from first
    yield from rest


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
            key = request._api_answer_key = answer_key(request)
            if key is not None:
                stored = local_answers.get(key)
                if stored is None and (stored := cache.get(key)) is not None:
                    local_answers.set(key, stored)
                if stored is not None:
                    request._request._answer_stored = stored
                    raise CachedAnswer(_replay(stored))

    def handle_exception(self, exc):
        if isinstance(exc, CachedAnswer):
            exc.response.from_cache = True
            return exc.response
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        key = getattr(request, "_api_answer_key", None)
        if key is not None and response.status_code == 200 and not getattr(response, "from_cache", False):
            response = _keep(request._request, key, response)
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


# --- The finished answer, before the rest of the stack ----------------------------------------------------------
# A cached answer still cost the request's walk through a dozen middleware, the URL resolver, DRF's authentication,
# content negotiation and throttle, and the view's finalize_response: about 0.3 ms of CPU of each 0.4 (issue 52.14,
# benchmarks/api_answers.py). AnswerMiddleware keeps each process's finished anonymous answers, every header the
# full stack added, and answers a repeat of the same request before that walk, as CataloguePageMiddleware does for
# pages: the catalogue stamp is read (one query) and the rate limit counted (config.throttling.judge_anonymous) as
# on the full path, so a write anywhere and the limit apply alike.

class FinishedAnswers(LocalPages):
    """LocalPages bounded by the bytes it holds too: each finished answer's body is kept (the DRF-level
    local_answers may have let the same bytes go), so the process's memory stays within FINISHED_BYTES."""

    def __init__(self, size, max_bytes):
        super().__init__(size)
        self.max_bytes, self.held = max_bytes, 0

    def set(self, key, value):
        if len(value[1]) > self.max_bytes // 8:  # one large CSV would push out many answers: the full stack's cache
            return
        with self.lock:
            old = self.items.pop(key, None)
            self.held += len(value[1]) - (len(old[1]) if old else 0)
            self.items[key] = value
            while len(self.items) > self.size or self.held > self.max_bytes:
                _key, dropped = self.items.popitem(last=False)
                self.held -= len(dropped[1])

    def clear(self):
        with self.lock:
            self.items.clear()
            self.held = 0


FINISHED_BYTES = 64 * 1024 * 1024
finished_answers = FinishedAnswers(256, FINISHED_BYTES)
# Set on each answer by the middleware around this one, or per request: never replayed.
PER_REQUEST = {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "date", "x-request-id"}


# The catalogue API's paths (whitepaper/api/urls.py; the runs API, the schema and its pages are never kept, so they
# skip the stamp's read here). A catalogue path missing from the list is answered by the full stack: slower, right.
ANSWER_PATHS = tuple(f"/api/v1/{name}/" for name in ("vendors", "documents", "methodologies", "engines", "versions",
                                                     "families", "flavors", "results", "spec", "compare", "sizing"))


def finished_key(request):
    """The key of a finished anonymous answer: the catalogue stamp (read now), the method, scheme, host, path and
    query as sent, and the headers the answer depends on (Accept: the media type; Origin: CORS). None: the request
    goes through the full stack (credentials, a conditional GET, not the catalogue API)."""
    meta = request.META
    if (request.method not in ("GET", "HEAD") or not request.path_info.startswith(ANSWER_PATHS)
            or "HTTP_AUTHORIZATION" in meta or settings.SESSION_COOKIE_NAME in request.COOKIES
            or "HTTP_IF_NONE_MATCH" in meta or "HTTP_IF_MODIFIED_SINCE" in meta):
        return None
    changed, n = catalogue_stamp(request, fresh=True)
    text = "|".join([changed.isoformat() if changed else "-", str(n), request.method, request.scheme,
                     meta.get("HTTP_HOST", ""), meta.get("HTTP_X_FORWARDED_HOST", ""), request.path,
                     meta.get("QUERY_STRING", ""), meta.get("HTTP_ACCEPT", ""), meta.get("HTTP_ORIGIN", "")])
    return "api-finished:" + hashlib.sha256(text.encode()).hexdigest()


class AnswerMiddleware:
    """Anonymous catalogue API answers from this process's memory when the same request was answered since the last
    catalogue write: the bytes and headers the full stack sent (only answers CatalogueCaching kept, never with a
    cookie), the request counted by the rate limit and given its X-RateLimit-* headers. Over the limit, the full
    stack answers the 429 with the count already taken. Placed before CataloguePageMiddleware, inside the API's gzip
    and error middleware."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            key = finished_key(request)
            hit = finished_answers.get(key) if key is not None else None
            allowed = judge_anonymous(request) if hit is not None else None
        except DatabaseError:  # the database is gone: the full stack answers (DatabaseOutageMiddleware's 503)
            key = hit = None
        if key is None:
            return self.get_response(request)
        if hit is not None and allowed is not False:
            status, content, headers, streaming = hit
            response = StreamingHttpResponse([content], status=status) if streaming else HttpResponse(content, status=status)
            for name, value in headers:
                response[name] = value
            for name, value in zip(RATE_LIMIT_HEADERS, getattr(request, "rate_limit", None) or ()):
                response[name] = str(value)
            return response
        response = self.get_response(request)
        stored = getattr(request, "_answer_stored", None)
        if stored is not None and response.status_code == 200 and not response.has_header("Set-Cookie"):
            headers = [(name, value) for name, value in response.items() if name.lower() not in PER_REQUEST]
            finished_answers.set(key, (response.status_code, stored[1], headers, response.streaming))
        return response
