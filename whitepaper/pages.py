"""Helpers for the customer pages: conditional GET and caching keyed on the catalogue's change
stamp, the querysets the pages read (a fixed number of queries each), and column labels."""

import hashlib
from functools import wraps

from django.core.cache import cache
from django.db.models import Count, Max
from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import condition

from .metrics import METRICS_BY_NAME
from .models import Document, PublishedResult

PAGE_CACHE_SECONDS = 24 * 3600


# --- Conditional GET and caching -------------------------------------------------------------

def catalogue_stamp(request):
    """(newest Document.changed_at, number of documents): changes with every import. One query per request."""
    if not hasattr(request, "_catalogue_stamp"):
        row = Document.objects.aggregate(changed=Max("changed_at"), n=Count("pk"))
        request._catalogue_stamp = (row["changed"], row["n"])
    return request._catalogue_stamp


def is_htmx(request):
    return request.headers.get("HX-Request") == "true" and request.headers.get("HX-History-Restore-Request") != "true"


def _has_session(request):
    from django.conf import settings

    return settings.SESSION_COOKIE_NAME in request.COOKIES


def _variant(request):
    """Everything besides the URL that changes the bytes of a catalogue page."""
    changed, n = catalogue_stamp(request)
    user = request.user.pk if _has_session(request) and request.user.is_authenticated else ""
    return "|".join([changed.isoformat() if changed else "-", str(n), request.get_full_path(),
                     "hx" if is_htmx(request) else "page", get_language() or "", str(user)])


def _etag(request, *args, **kwargs):
    return hashlib.sha256(_variant(request).encode()).hexdigest()[:32]


def _last_modified(request, *args, **kwargs):
    return catalogue_stamp(request)[0]


def catalogue_page(view):
    """ETag + Last-Modified from the catalogue stamp (304 on a match), and the rendered page cached
    under a key that contains the stamp, so the next import makes every cached page stale.
    Pages for logged-in users (who may see staff actions) are not cached, only validated."""

    @wraps(view)
    def cached(request, *args, **kwargs):
        if _has_session(request) or request.method != "GET":
            return view(request, *args, **kwargs)
        key = "page:" + hashlib.sha256(_variant(request).encode()).hexdigest()
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
        patch_vary_headers(response, ["HX-Request", "Cookie"])
        return response

    return wrapped


# --- Querysets -----------------------------------------------------------------------------

def results_queryset():
    """Published results with everything a page shows about them (joins, no extra queries per row)."""
    return PublishedResult.objects.select_related(
        "table__document__vendor", "table__methodology", "engine_version__engine", "flavor__family",
    )


def document_order(queryset):
    return queryset.order_by("table__document__published", "table__document__slug", "table__position", "position")


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
}


def column_label(name):
    return COLUMN_LABELS.get(name, name)


def family_name(family):
    """English with the Chinese name beside it."""
    if family is None:
        return ""
    return f"{family.name} ({family.name_zh})" if family.name_zh else family.name


def cell(result, column):
    """A cell of a document table, as printed. The IOPS note is rendered by the template."""
    flavor = result.flavor
    if column == "flavor":
        return flavor.spec_code
    if column in ("vcpus", "memory_gb", "storage", "memory_ratio"):
        return getattr(flavor, column)
    if column == "family":
        return family_name(flavor.family)
    if column == "deployment":
        return result.get_deployment_display() if result.deployment else ""
    if column == "version":
        return result.engine_version.version
    if column == "engine":
        return result.engine_version.engine.name
    if column == "edition":
        return result.edition
    return result.display(column)
