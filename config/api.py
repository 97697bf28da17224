"""Pieces of the REST API shared by every app under /api/v1/: the exception handler, the anonymous
throttle, the JSON 404 for unknown paths and the error answers the schema documents."""

import hashlib
import math

from django.conf import settings
from django.http import Http404, JsonResponse
from django.utils.cache import get_conditional_response, patch_vary_headers
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def error_body(detail, code, errors=None, **extra):
    """The one error shape of the API: {"detail": text, "code": machine code, "errors": {parameter or
    field: [messages]}} (`errors` empty when no single parameter is at fault), plus `extra` keys."""
    return {"detail": str(detail), "code": code, "errors": errors or {}, **extra}


def _flatten(errors, prefix=""):
    """{name: [messages]} from DRF's error detail (nested serializer errors as dotted names)."""
    if not isinstance(errors, dict):
        return {prefix or "non_field_errors": [str(m) for m in (errors if isinstance(errors, list) else [errors])]}
    flat = {}
    for name, messages in errors.items():
        key = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(messages, dict):
            flat.update(_flatten(messages, key))
        else:
            flat[key] = [str(m) for m in (messages if isinstance(messages, list) else [messages])]
    return flat


def not_found_text(request, view=None):
    """The one wording of a 404 for an object: 'No <thing> at <path>.' (the thing from the view's queryset,
    a class attribute or what get_queryset builds; nothing is read)."""
    queryset = getattr(view, "queryset", None)
    if queryset is None and hasattr(view, "get_queryset"):
        try:
            queryset = view.get_queryset()
        except Exception:  # noqa: BLE001 - a view that cannot build it (no user): the generic wording
            queryset = None
    model = getattr(queryset, "model", None)
    thing = model._meta.verbose_name if model is not None else "object"
    return f"No {thing} at {request.path}."


def exception_handler(exc, context):
    """Every DRF error answer in the one shape of `error_body`. A bad parameter (400) maps each
    offending parameter to its messages; a throttled request (429) also carries `retry_after`
    (seconds) in its body besides the Retry-After header."""
    if isinstance(exc, NotModified):
        return Response(status=304)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    request, view = context.get("request"), context.get("view")
    not_found = isinstance(exc, (exceptions.NotFound, Http404))
    data = response.data
    if isinstance(exc, exceptions.Throttled):
        wait = math.ceil(exc.wait) if exc.wait is not None else 1
        response.data = error_body(f"Too many requests: try again in {wait} seconds.", "throttled", retry_after=wait)
        response["Retry-After"] = str(wait)
    elif isinstance(exc, exceptions.ValidationError):
        errors = _flatten(data)
        response.data = error_body(f"Invalid parameters: {', '.join(errors)}.", "invalid", errors)
    elif not_found and isinstance(data, dict) and "detail" in data and len(data) > 1:
        # A page past the last one: its own text, the parameter at fault in `errors`.
        errors = _flatten({k: v for k, v in data.items() if k != "detail"})
        response.data = error_body(data["detail"], "not_found", errors)
    elif not_found and request is not None:
        response.data = error_body(not_found_text(request, view), "not_found")
    else:
        detail = data.get("detail", data) if isinstance(data, dict) else data
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        response.data = error_body(detail, code)
    return response


class RejectsUnknownFields:
    # A serializer mixin: a body field the serializer does not have is a 400 naming it (DRF drops it, so a
    # typo such as `repeat` for `repeats` launches with the default). Read-only fields sent back (a PUT of what
    # GET answered) are known and ignored, as DRF does; so is a form's `csrfmiddlewaretoken`. (A comment, not a
    # docstring: drf-spectacular would take it as the description of every serializer using it.)

    def to_internal_value(self, data):
        if not hasattr(data, "keys"):  # DRF's "Expected a dictionary" came under `non_field_errors`, no field's
            kind = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(type(data), "a number")
            raise exceptions.ParseError(f"The request body must be a JSON object (its fields by name), not {kind}.")
        known = set(self.fields) | {"csrfmiddlewaretoken"}
        writable = sorted(name for name, field in self.fields.items() if not field.read_only)
        unknown = sorted(set(data.keys()) - known)
        if unknown:
            raise serializers.ValidationError({name: [f"Unknown field; this endpoint accepts: {', '.join(writable)}."]
                                               for name in unknown})
        return super().to_internal_value(data)


class NotModified(exceptions.APIException):
    """A conditional GET whose validators still match: answered 304 without running the view."""

    status_code = 304
    default_detail = ""
    default_code = "not_modified"


class ContentCaching:
    """For API views whose answer follows from the code, not the catalogue (the schema, the CSV's column
    dictionary, the API root): a strong ETag from the body, 304 when If-None-Match names it, and the
    catalogue's Cache-Control (shared caches keep it and revalidate)."""

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method not in ("GET", "HEAD") or response.status_code != 200:
            return response
        response.render()
        response["ETag"] = '"%s"' % hashlib.sha256(response.content).hexdigest()[:32]
        response["Cache-Control"] = f"public, max-age={settings.API_CACHE_MAX_AGE}, must-revalidate"
        patch_vary_headers(response, ["Accept"])
        return get_conditional_response(request._request, etag=response["ETag"], response=response)


def not_found(request, *args, **kwargs):
    """JSON 404 for any other path under /api/ (instead of Django's HTML page), e.g. /api/v2/..."""
    hint = "" if request.path.startswith("/api/v1/") else " This server has API version v1 only."
    return JsonResponse(error_body(f"No API endpoint at {request.path}; see /api/v1/ and /api/v1/docs/.{hint}",
                                   "not_found"), status=404)


# --- Error answers, as the schema documents them ---------------------------------------------------

PARAMETER_ERRORS_MAP = serializers.DictField(
    child=serializers.ListField(child=serializers.CharField()),
    help_text="Each offending parameter (or field) mapped to its messages, e.g. {\"min_tps\": [\"Enter a number.\"]}; "
              "empty when no single parameter is at fault.")


def _error(name, code_help, **extra):
    return inline_serializer(name, {
        "detail": serializers.CharField(help_text="What went wrong, in a sentence."),
        "code": serializers.CharField(help_text=code_help),
        "errors": PARAMETER_ERRORS_MAP,
        **extra,
    })


error_component = _error  # the one shape as a schema component of its own name, with `extra` fields


ERROR = _error("Error", "A machine-readable code: not_found, not_authenticated, permission_denied, conflict, ...")
PARAMETER_ERRORS = OpenApiResponse(
    _error("ParameterErrors", "invalid"),
    description="A query parameter is unknown, repeated, malformed or out of range: `errors` maps each offending "
                "parameter to its messages, all at once, e.g. {\"min_tps\": [\"Enter a number.\"]}.",
)
THROTTLED = OpenApiResponse(
    _error("Throttled", "throttled",
           retry_after=serializers.IntegerField(help_text="Seconds to wait (also in the Retry-After header).")),
    description="Too many anonymous requests; retry after Retry-After seconds.",
)
NOT_FOUND = OpenApiResponse(ERROR, description="No such object, or a page past the last one.")
UNAUTHORIZED = OpenApiResponse(ERROR, description="Not authenticated (writes need a session or a token).")
FORBIDDEN = OpenApiResponse(ERROR, description="Authenticated but not allowed.")
COMMON_ERRORS = {400: PARAMETER_ERRORS, 404: NOT_FOUND, 429: THROTTLED}


def schema_postprocess(result, generator, request, public):
    """The published schema: `info.version` the plain semantic version (drf-spectacular appends the
    URL's version, which no package manager accepts), `servers` (this server), and on every operation
    the throttle's 429 and, where writing, 401/403."""
    result["info"]["version"] = settings.SPECTACULAR_SETTINGS["VERSION"]
    result["servers"] = [{"url": request.build_absolute_uri("/").rstrip("/") if request is not None else "/",
                          "description": "This server"}]
    changelog = request.build_absolute_uri("/api/v1/changelog/") if request is not None else "/api/v1/changelog/"
    result["externalDocs"] = {"url": changelog, "description": "API changelog: what changed in each version of this "
                              "schema, the deprecation policy and what is deprecated."}
    result["info"]["description"] += f" Changelog: {changelog}"
    schemas = result.get("components", {}).get("schemas", {})

    def ref(name, description):
        return {"description": description,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}}

    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            # A request body declared as JSON only: form-encoded and multipart bodies are accepted too (the same
            # fields), but a body in three content types makes openapi-python-client's write modules fail to
            # import (NameError: Unset).
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                operation["requestBody"]["content"] = {"application/json": content["application/json"]}
            # A public read (anonymous allowed: drf-spectacular lists `{}` among the schemes) declares no
            # security at all: generators read any `security` as required (openapi-python-client would type
            # every call as needing an AuthenticatedClient).
            if {} in operation.get("security", []):
                del operation["security"]
            responses = operation.setdefault("responses", {})
            if "Error" in schemas:  # answered by gunicorn (config/gunicorn_conf.py) before Django sees the request
                responses.setdefault("414", ref("Error", "The request line (method, path and query) is over 8,190 bytes: "
                                                "shorten the filters (the server answers before the API sees them)."))
            if "Throttled" in schemas:
                responses.setdefault("429", ref("Throttled", "Too many anonymous requests; retry after Retry-After seconds."))
            if method not in ("get", "head", "options") and "ParameterErrors" in schemas:
                responses.setdefault("400", ref("ParameterErrors", "Invalid input: `errors` maps each field to its messages."))
            if method not in ("get", "head", "options") and "Error" in schemas:
                responses.setdefault("401", ref("Error", "Not authenticated: writes need a session or a token."))
                responses.setdefault("403", ref("Error", "Not allowed (or no CSRF token with a session)."))
    return result
