"""Request-body limits for the API: a body larger than API_MAX_BODY_BYTES is a JSON 413 and JSON nested
deeper than API_MAX_JSON_DEPTH levels a JSON 400, each naming the limit (without them a 2000-level
document is a RecursionError, i.e. a 500, and a 10 MB body a bare HTML 400). Also the range of ids and
moments both databases hold (a query parameter outside it is a 400 naming it on SQLite as on PostgreSQL,
where SQLite would raise OverflowError, a 500)."""

import codecs
import datetime

from django import forms
from django.conf import settings
from django.forms.fields import InvalidJSONInput
from django.http import JsonResponse
from django.utils.translation import gettext as _
from django_filters.fields import IsoDateTimeField
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils import json


# --- What both databases hold ---------------------------------------------------------------------

MAX_ID = 2**63 - 1  # PostgreSQL bigint, SQLite's 64-bit INTEGER


def is_id(raw):
    """True when `raw` is an id both databases can look up: ASCII digits, 0 to MAX_ID."""
    raw = str(raw).strip()
    return raw.isascii() and raw.isdigit() and int(raw) <= MAX_ID


def id_message():
    return _("Enter an id: a whole number in ASCII digits from 0 to %(max)s.") % {"max": MAX_ID}


class IdField(forms.IntegerField):
    """An id typed as a query parameter: 0 to MAX_ID, else an error naming the parameter."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if not is_id(value):
            raise forms.ValidationError(id_message(), code="invalid_id")
        return int(str(value).strip())


class IdChoiceField(forms.ModelChoiceField):
    """A ModelChoiceField whose value is range-checked before the lookup (SQLite: OverflowError past MAX_ID)."""

    def to_python(self, value):
        if value not in self.empty_values and not is_id(value):
            raise forms.ValidationError(id_message(), code="invalid_id")
        return super().to_python(value)


def moment_message():
    return _("Out of range: give a moment between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z (in UTC).")


class MomentField(IsoDateTimeField):
    """An ISO 8601 moment that is still a date-time once in UTC (9999-12-31T23:59:59-14:00 is not: PostgreSQL
    stores it, SQLite cannot, Python cannot compare it)."""

    def to_python(self, value):
        moment = super().to_python(value)
        if moment is not None:
            try:
                moment.astimezone(datetime.UTC)
            except OverflowError:
                raise forms.ValidationError(moment_message(), code="out_of_range") from None
        return moment


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


def too_large_message(length):
    return _("The request body is %(length)s bytes; the limit is %(limit)s bytes (API_MAX_BODY_BYTES).") % {
        "length": length, "limit": settings.API_MAX_BODY_BYTES}


def too_deep_message():
    return _("JSON nested deeper than %(limit)s levels (API_MAX_JSON_DEPTH).") % {"limit": settings.API_MAX_JSON_DEPTH}


def depth_exceeds(data, limit):
    """True if containers nest deeper than limit (iterative: no recursion on hostile input)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


class LimitedJSONFormField(forms.JSONField):
    """JSON typed into a page's or the admin's form, held to the API's limit: nested deeper than API_MAX_JSON_DEPTH
    is a form error naming the field (Python's parser raises RecursionError, a 500, past ~1,000 levels)."""

    def to_python(self, value):
        try:
            data = super().to_python(value)
        except RecursionError:
            raise forms.ValidationError(too_deep_message(), code="too_deep") from None
        if depth_exceeds(data, settings.API_MAX_JSON_DEPTH):
            raise forms.ValidationError(too_deep_message(), code="too_deep")
        return data

    def bound_data(self, data, initial):
        try:
            return super().bound_data(data, initial)
        except RecursionError:  # shown again as typed, with the error above
            return InvalidJSONInput(data)

    def has_changed(self, initial, data):
        try:
            return super().has_changed(initial, data)
        except RecursionError:
            return True


class LimitedJSONField(serializers.JSONField):
    """A serializer's JSON field held to the same limit whatever the body's content type: JSON inside a form
    field (`overrides=[[[…` form-encoded or multipart) is parsed here, not by LimitedJSONParser."""

    def to_internal_value(self, data):
        try:
            value = super().to_internal_value(data)
        except RecursionError:
            raise serializers.ValidationError(too_deep_message(), code="too_deep") from None
        if depth_exceeds(value, settings.API_MAX_JSON_DEPTH):
            raise serializers.ValidationError(too_deep_message(), code="too_deep")
        return value


class LimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(too_large_message(f"more than {limit}"))
        try:
            # As DRF's JSONParser: NaN and Infinity are refused unless STRICT_JSON is off.
            data = json.loads(codecs.decode(raw, encoding), parse_constant=json.strict_constant if self.strict else None)
        except RecursionError:
            raise ParseError(too_deep_message()) from None
        except (ValueError, LookupError) as exc:
            raise ParseError(_("JSON parse error - %(error)s") % {"error": exc}) from None
        if depth_exceeds(data, settings.API_MAX_JSON_DEPTH):
            raise ParseError(too_deep_message())
        return data


class APIBodyLimitMiddleware:
    """Refuses an API request whose declared body is over the limit before anything reads it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return JsonResponse({"detail": too_large_message(length), "code": PayloadTooLarge.default_code,
                                     "errors": {}}, status=413)  # the API's one error shape
        return self.get_response(request)
