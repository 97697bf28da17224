"""Page-number pagination with a capped, validated page size: a bad `page` or `page_size` is a 400
naming the parameter (DRF would silently clamp the size and answer 404 for page=abc). The results list
also pages by cursor (`pagination=cursor`): no count, stable under inserts, the same cost at any depth
and data size (queries.after)."""

import datetime
import zlib
from decimal import Decimal

from django.core import signing
from django.core.paginator import InvalidPage
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from ..filters import ASCII_WHOLE_NUMBER

MAX_PAGE_SIZE = 500


def positive_int_param(params, name, maximum=None):
    raw = params.get(name)
    if raw is None:
        return None
    if not ASCII_WHOLE_NUMBER.fullmatch(raw):  # int() would read " 16", "+16", "016" and "１６"
        raise ValidationError({name: [f"Expected a whole number in ASCII digits, got {raw[:50]!r}."]}) from None
    value = int(raw)
    if value < 1 or (maximum is not None and value > maximum):
        bound = f"between 1 and {maximum}" if maximum is not None else "at least 1"
        raise ValidationError({name: [f"Must be {bound}, got {value}."]})
    return value


def set_link_header(response, **links):
    """RFC 8288 `Link` header of a page: next, prev, first, last (those that exist), the same URLs as the body's."""
    present = [f'<{url}>; rel="{rel}"' for rel, url in links.items() if url]
    if present:
        response["Link"] = ", ".join(present)
    return response


class CatalogPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_page_size(self, request):
        return positive_int_param(request.query_params, self.page_size_query_param, self.max_page_size) or self.page_size

    def paginate_queryset(self, queryset, request, view=None):
        page_number = positive_int_param(request.query_params, self.page_query_param) or 1
        page_size = self.get_page_size(request)
        paginator = self.django_paginator_class(queryset, page_size)
        try:
            self.page = paginator.page(page_number)
        except InvalidPage:
            raise NotFound({"detail": f"Page {page_number} is past the last page ({paginator.num_pages}).",
                            "page": [f"Must be between 1 and {paginator.num_pages}."]}) from None
        self.request = request
        return list(self.page)

    def page_url(self, number):
        """This request's URL at page `number` (1: without `page`), `format` left out (JSON is the default;
        a `?format=json` the client added does not leak into the links)."""
        url = remove_query_param(self.request.build_absolute_uri(), "format")
        return remove_query_param(url, self.page_query_param) if number == 1 else replace_query_param(
            url, self.page_query_param, number)

    def get_next_link(self):
        return self.page_url(self.page.next_page_number()) if self.page.has_next() else None

    def get_previous_link(self):
        return self.page_url(self.page.previous_page_number()) if self.page.has_previous() else None

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        set_link_header(response, next=self.get_next_link(), prev=self.get_previous_link(), first=self.page_url(1),
                        last=self.page_url(self.page.paginator.num_pages))
        return response

    def get_paginated_response_schema(self, schema):
        response = super().get_paginated_response_schema(schema)
        properties = response["properties"]
        properties["count"]["description"] = "Matching objects, on every page."
        properties["next"]["description"] = "The next page (null on the last); also in the Link header, rel=\"next\"."
        properties["previous"]["description"] = ("The previous page (null on the first); also in the Link header, "
                                                 "rel=\"prev\".")
        properties["results"]["description"] = "This page's objects, at most page_size."
        return response

    def get_schema_operation_parameters(self, view):
        return [
            {"name": self.page_query_param, "required": False, "in": "query",
             "description": "Page number, from 1 (404 past the last page).",
             "schema": {"type": "integer", "minimum": 1}},
            {"name": self.page_size_query_param, "required": False, "in": "query",
             "description": f"Results per page, 1 to {self.max_page_size} (default {self.page_size}); "
                            "more is a 400.",
             "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size}},
        ]


PAGINATION_MODES = ["page", "cursor"]


def _plain(value):
    if isinstance(value, (datetime.date, Decimal)):
        return str(value)
    return value


CURSOR_SALT = "perfdash.api.results.cursor"


def encode_cursor(terms, values):
    """An opaque, signed cursor: only the server makes them, so a forged or edited one is refused before
    its values reach a query (a date such as 2023-02-30 or a text where a number sorts)."""
    return signing.dumps({"o": terms, "v": [_plain(v) for v in values]}, salt=CURSOR_SALT, compress=True)


def decode_cursor(token, terms, n_values):
    """The values a cursor carries, or a 400 naming `cursor` (malformed, tampered with, or made for another
    ordering)."""
    try:
        data = signing.loads(token, salt=CURSOR_SALT)
        values = data["v"]
        ok = isinstance(values, list) and len(values) == n_values and data["o"] == terms and all(
            v is None or isinstance(v, (str, int)) and not isinstance(v, bool) for v in values)
    except (signing.BadSignature, ValueError, TypeError, KeyError, UnicodeDecodeError, zlib.error):
        ok = False
    if not ok:
        raise ValidationError({"cursor": ["Not a cursor of this list and ordering; follow the `next` link of a "
                                          "pagination=cursor answer."]})
    return values


class ResultPagination(CatalogPagination):
    """`pagination=page` (default: `page`, `count`) or `pagination=cursor`: pages by the last row's sort
    values, `next` carries the cursor, `count` and `previous` are null. A row inserted before the
    cursor does not shift the next page (no row twice, none skipped)."""

    mode_param, cursor_param = "pagination", "cursor"

    @classmethod
    def check(cls, params):
        mode = params.get(cls.mode_param) or "page"
        if mode not in PAGINATION_MODES:
            raise ValidationError({cls.mode_param: [f"Unknown pagination {mode!r}; choose from page, cursor."]})
        if cls.cursor_param in params and mode != "cursor":
            raise ValidationError({cls.cursor_param: ["Only with pagination=cursor."]})
        if mode == "cursor" and cls.page_query_param in params:
            raise ValidationError({cls.page_query_param: ["Not with pagination=cursor (follow `next`)."]})
        return mode

    def paginate_queryset(self, queryset, request, view=None):
        self.mode = self.check(request.query_params)
        if self.mode == "page":
            return super().paginate_queryset(queryset, request, view)
        from whitepaper.queries import field_value, keyset_fields

        from .params import ResultOrdering

        terms = ResultOrdering.check(request.query_params)
        fields = keyset_fields(terms)
        token = request.query_params.get(self.cursor_param)
        values = decode_cursor(token, terms, len(fields)) if token is not None else None
        size = self.get_page_size(request)
        rows = queryset.page_after(terms, values, size + 1)
        self.request, self.page_rows = request, rows[:size]
        self.next_cursor = (encode_cursor(terms, [field_value(rows[size - 1], path) for path, _d in fields])
                            if len(rows) > size else None)
        return self.page_rows

    def get_paginated_response(self, data):
        if self.mode == "page":
            return super().get_paginated_response(data)
        url = remove_query_param(self.request.build_absolute_uri(), "format")
        next_url = replace_query_param(url, self.cursor_param, self.next_cursor) if self.next_cursor else None
        return set_link_header(Response({"count": None, "next": next_url, "previous": None, "results": data}),
                               next=next_url, first=remove_query_param(url, self.cursor_param))

    def get_paginated_response_schema(self, schema):
        response = super().get_paginated_response_schema(schema)
        response["properties"]["count"] = {"type": "integer", "nullable": True, "example": 123,
                                           "description": "Matching results; null with pagination=cursor."}
        response["properties"]["previous"]["description"] = ("The previous page, also in the Link header (rel=\"prev\"); "
                                                             "null with pagination=cursor (pages go forward).")
        response["properties"]["next"]["description"] = ("The next page (with pagination=cursor: its cursor), also in the "
                                                         "Link header (rel=\"next\"); null on the last.")
        return response

    def get_schema_operation_parameters(self, view):
        return [
            *super().get_schema_operation_parameters(view),
            {"name": self.mode_param, "required": False, "in": "query",
             "schema": {"type": "string", "enum": PAGINATION_MODES, "default": "page"},
             "description": "page (default): numbered pages with a count; cursor: pages by position in the "
                            "ordering, follow `next` (no count; stable when results are added; the same cost at "
                            "any depth)."},
            {"name": self.cursor_param, "required": False, "in": "query", "schema": {"type": "string"},
             "description": "With pagination=cursor: the position to continue from, as given in `next`."},
        ]
