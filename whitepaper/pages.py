"""Helpers for the customer pages: conditional GET and caching keyed on the catalogue's change
stamp (whitepaper.freshness), htmx partials, and column labels."""

import hashlib
import threading
from collections import OrderedDict
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.middleware.gzip import GZipMiddleware
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import condition

from config.htmx import wants_partial
from config.language import request_language

from . import display
from .choices import NOT_STATED_MARK
from .freshness import catalogue_stamp
from .metrics import METRICS_BY_NAME

PAGE_CACHE_SECONDS = 24 * 3600
LOCAL_PAGES = 128  # rendered pages kept in each server process, newest used first


# --- Conditional GET and caching -------------------------------------------------------------

class LocalPages:
    """A small in-process LRU of rendered pages in front of the shared cache (no network round trip
    for the pages a process serves most). Keys contain the catalogue stamp, so stale pages just age out."""

    def __init__(self, size):
        self.size, self.items, self.lock = size, OrderedDict(), threading.Lock()

    def get(self, key):
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def set(self, key, value):
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)

    def clear(self):
        with self.lock:
            self.items.clear()


local_pages = LocalPages(LOCAL_PAGES)


def _has_session(request):
    return settings.SESSION_COOKIE_NAME in request.COOKIES


def cacheable(request):
    """Anonymous GETs (and HEADs: the same answer without its body, so the same headers, gzip and Vary included);
    pages for logged-in users (who may see staff actions) are validated, not cached."""
    return request.method in ("GET", "HEAD") and not _has_session(request)


def page_variant(request):
    """A digest of everything that changes the bytes of a catalogue page: the catalogue stamp, the
    scheme, host and URL with its query, htmx partial or full page, the language and the logged-in user."""
    if not hasattr(request, "_page_variant"):
        changed, n = catalogue_stamp(request)
        user = request.user.pk if _has_session(request) and request.user.is_authenticated else ""
        # Scheme and host too: pages carry absolute URLs (hreflang twins).
        text = "|".join([changed.isoformat() if changed else "-", str(n), request.scheme,
                         request.META.get("HTTP_HOST", ""), request.get_full_path(),
                         "hx" if wants_partial(request) else "page", request_language(request), str(user)])
        request._page_variant = hashlib.sha256(text.encode()).hexdigest()
    return request._page_variant


def _etag(request, *args, **kwargs):
    return page_variant(request)[:32]


def _last_modified(request, *args, **kwargs):
    return catalogue_stamp(request)[0]


def catalogue_page(view):
    """ETag + Last-Modified from the catalogue stamp (304 on a match), and the rendered page kept in
    the shared cache under a key that contains the stamp, so the next import makes every cached page
    stale. `CataloguePageMiddleware` keeps the finished responses in each process as well."""

    @wraps(view)
    def cached(request, *args, **kwargs):
        if not cacheable(request):
            return view(request, *args, **kwargs)
        key = "page:" + page_variant(request)
        request._page_cache_key = key  # tells the middleware this response may be kept
        hit = cache.get(key)
        if hit is not None:
            content, content_type = hit
            return HttpResponse(content, content_type=content_type)
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.streaming:
            cache.set(key, (response.content, response["Content-Type"]), PAGE_CACHE_SECONDS)
        return response

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = condition(etag_func=_etag, last_modified_func=_last_modified)(cached)(request, *args, **kwargs)
        patch_vary_headers(response, ["HX-Request", "HX-History-Restore-Request", "Cookie"])
        return response

    return wrapped


def anonymous_page(request):
    """An anonymous GET of a catalogue page (not the API, admin, runs, accounts or static files): what
    CataloguePageMiddleware may keep and PageGZipMiddleware compresses."""
    return cacheable(request) and not request.path_info.startswith(CataloguePageMiddleware.SKIP)


def accepts_gzip(request):
    return "gzip" in request.META.get("HTTP_ACCEPT_ENCODING", "").lower()


class CataloguePageMiddleware:
    """Answers repeated anonymous GETs of catalogue pages from this process's memory, before the rest
    of the middleware stack and the URL resolver run (placed right after WhiteNoise, which does the
    same for static files). Only responses that `catalogue_page` marked are kept, with every header
    the full stack added except Set-Cookie; If-None-Match / If-Modified-Since still get their 304."""

    def __init__(self, get_response):
        self.get_response = get_response

    SKIP = ("/api/", "/admin/", "/runs/", "/accounts/", "/i18n/", "/jsi18n/", "/static/")

    def __call__(self, request):
        if not anonymous_page(request):
            return self.get_response(request)
        key = "page:" + page_variant(request)
        # Kept as sent (gzipped by PageGZipMiddleware when the client accepts it): one copy per encoding.
        local_key = key + (":gzip" if accepts_gzip(request) else "")
        hit = local_pages.get(local_key)
        if hit is not None:
            status, headers, content = hit
            response = HttpResponse(content, status=status, headers=headers)
            return get_conditional_response(request, etag=headers.get("ETag"),
                                            last_modified=_last_modified(request) and
                                            int(_last_modified(request).timestamp()), response=response)
        response = self.get_response(request)
        if (getattr(request, "_page_cache_key", None) == key and response.status_code == 200
                and not response.streaming):
            headers = {k: v for k, v in response.items() if k.lower() != "set-cookie"}
            local_pages.set(local_key, (response.status_code, headers, response.content))
        return response


class PageGZipMiddleware(GZipMiddleware):
    """gzip for the anonymous catalogue pages when the client asks (the 2023 document page: 217,816 bytes, 20,547
    gzipped), inside CataloguePageMiddleware so each process compresses a page once and keeps the bytes it sends.

    BREACH needs a secret of the reader's in a compressed body beside input an attacker reflects into it. These
    pages are for readers without a session: no staff data and no token (base.html gives htmx a CSRF token only on
    signed-in pages), and Django's GZipMiddleware pads each compressed body with random bytes (Heal the Breach). Pages for a logged-in user (runs, admin, the login form
    with its ?next=) and the API (its own APIGZipMiddleware) are not compressed here."""

    def process_response(self, request, response):
        if not anonymous_page(request):
            return response
        return super().process_response(request, response)


# --- Columns as the documents print them ----------------------------------------------------

COLUMN_LABELS = {
    "flavor": _("Spec code"),
    "vcpus": _("vCPUs"),
    "memory_gb": _("Memory (GB)"),
    "storage": _("Storage"),
    "family": _("Family"),
    "deployment": _("Deployment"),
    "version": _("Version"),
    "edition": _("Edition"),
    "engine": _("Engine"),
    "memory_ratio": _("CPU:memory"),
    **{name: metric.label for name, metric in METRICS_BY_NAME.items()},
    "latency_bound_ms": _("p95 bound (ms)"),
}


def column_label(name):
    return COLUMN_LABELS.get(name, name)


def origin_name(result):
    """'' for a vendor-published result; the label every page shows beside an internal measurement."""
    return str(_("Internal measurement")) if result.is_internal else ""


def family_name(family):
    """In the reader's language ('' when the document states no family): whitepaper.display."""
    return display.family_name(family)


def measurement_html(result):
    """What an internal row says about its run (PublishedResult.measurement): the TPS's 95 % interval, its flags
    and the link to the public record of the run. '' for a vendor's row."""
    m = result.internal_measurement
    if m is None:
        return ""
    parts = []
    low, high = m.tps_interval
    n, cv = m.runs_n, m.tps_cv
    if low is not None:
        parts.append(format_html('<span class="ci" data-n="{}">{}</span>', n, _(
            "mean of %(n)s runs, TPS 95 %% interval over the runs %(low)s–%(high)s, coefficient of variation %(cv)s %%") % {
            "n": n, "low": f"{low:.2f}", "high": f"{high:.2f}", "cv": NOT_STATED_MARK if cv is None else f"{100 * cv:.1f}"}))
    elif n == 1 and not m.capacity:
        parts.append(format_html('<span class="ci" data-n="1">{}</span>', _("n = 1: one run, the spread between runs is unknown")))
    found = m.capacity
    if found:  # a capacity search (issue 35.5): its bound and where it stopped, beside the sustained rate
        text = _("open-loop capacity search: p95 %(p95)s ms at the sustained rate, bound %(bound)s ms") % {
            "p95": found.get("sustained_p95_ms"), "bound": found.get("bound_ms")}
        if found.get("failed_tps") is not None:
            text += "; " + _("failed at %(m)s: %(why)s") % {"m": found["failed_tps"], "why": found.get("failed_reason")}
        parts.append(format_html('<span class="capacity">{}</span>', text))
    repeats = m.repeats
    if repeats:
        parts.append(format_html('<span class="repeats">{}</span>', _(
            "a series of %(n)s runs of one set-up: standard deviation %(sd)s") % {"n": repeats.get("n"), "sd": repeats.get("stdev")}))
    if m.client_bound_cause == "shared_host":
        parts.append(format_html('<span class="flag" data-flag="client_bound" data-cause="shared_host">{}</span>',
                                 _("client-bound on a host shared with the database: measures the shared host")))
    elif m.client_bound:
        parts.append(format_html('<span class="flag" data-flag="client_bound">{}</span>', _("client-bound: may understate the target")))
    if m.other_load:
        parts.append(format_html('<span class="flag" data-flag="other_load">{}</span>', _("the server saw other load (acknowledged)")))
    if m.disturbed:
        parts.append(format_html('<span class="flag" data-flag="disturbed">{}</span>',
                                 _("the client host was loaded beyond its cores (acknowledged)")))
    if m.latency_caveat:
        parts.append(format_html('<span class="flag" data-flag="latency_caveat" title="{}">{}</span>', m.latency_caveat,
                                 _("latency not to be trusted")))
    if result.run_record_url:
        parts.append(format_html('<a class="run-record" href="{}">{}</a>', result.run_record_url, _("the run's record")))
    return format_html_join(" · ", "{}", ((p,) for p in parts))


def cell(result, column):
    """A cell of a document table, as printed. The IOPS note is rendered by the template."""
    flavor = result.flavor
    if column == "flavor":
        return flavor.spec_code
    if column == "memory_ratio":
        return display.memory_ratio_html(flavor)
    if column in ("vcpus", "memory_gb", "storage"):
        return getattr(flavor, column)
    if column == "family":
        return display.family_html(flavor.family)
    if column == "deployment":
        return result.get_deployment_display() if result.deployment else ""
    if column == "version":
        return result.engine_version.version
    if column == "engine":
        return result.engine_version.engine.name
    if column == "edition":
        return display.edition_name(result.edition)
    return display.metric_shown(result, column)
