"""The results list's pagination: by page (config/pagination.py, as every list) or by cursor (`pagination=cursor`): no count, stable under inserts, the same cost at any depth
and data size (queries.after)."""

import hashlib

from django.core.cache import cache
from django.core.exceptions import EmptyResultSet
from django.core.paginator import Paginator
from django.db import connections
from django.utils.functional import cached_property
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from config.pagination import CatalogPagination, set_link_header

from .. import cursors
from ..freshness import catalogue_stamp

PAGINATION_MODES = ["page", "cursor"]


def decode_cursor(token, terms):
    """The values a cursor carries (cursors.decode), or a 400 naming `cursor` (malformed, tampered with, or made
    for another ordering)."""
    values = cursors.decode(token, terms)
    if values is None:
        raise ValidationError({"cursor": ["Not a cursor of this list and ordering; follow the `next` link of a "
                                          "pagination=cursor answer."]})
    return values


def stamped_count(queryset, request):
    """`queryset.count()`, kept in the cache under the catalogue stamp (whitepaper.freshness) and the count's own
    database, SQL and parameters. Counting is exact but reads one index entry per match (44,000 matches: ~9 ms at
    10^6 results, on every numbered page); the catalogue changes only by writes that move the stamp, read afresh
    here (one small query), so a kept count is never one from before a committed write, and counts nothing else
    (another filter, user or database)."""
    try:
        sql, params = queryset.query.sql_with_params()
    except EmptyResultSet:  # a filter that matches nothing by construction (an empty id list): no query to count
        return 0
    changed, n = catalogue_stamp(request, fresh=True)
    where = connections[queryset.db].settings_dict
    text = repr((changed.isoformat() if changed else "-", n, where["HOST"], where["PORT"], where["NAME"], sql, params))
    key = "result-count:" + hashlib.sha256(text.encode()).hexdigest()
    count = cache.get(key)
    if count is None:
        count = queryset.count()
        cache.set(key, count, 3600)
    return count


class StampedCountPaginator(Paginator):
    """Django's paginator, counting by `stamped_count`."""

    def __init__(self, object_list, per_page, request):
        super().__init__(object_list, per_page)
        self.request = request

    @cached_property
    def count(self):
        return stamped_count(self.object_list, self.request)


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

    def make_paginator(self, queryset, page_size, request):
        return StampedCountPaginator(queryset, page_size, request)

    def paginate_queryset(self, queryset, request, view=None):
        query = view.result_query  # the parameters as params.StrictQueryBackend read them
        self.mode = query.pagination
        if self.mode == "page":
            return super().paginate_queryset(queryset, request, view)
        terms = query.terms
        values = decode_cursor(query.cursor, terms) if query.cursor is not None else None
        size = query.page_size or self.page_size
        rows = queryset.page_after(terms, values, size + 1)
        self.request, self.page_rows = request, rows[:size]
        self.next_cursor = cursors.encode(terms, rows[size - 1]) if len(rows) > size else None
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
             # No schema `default`: generated clients send a default on every call, and the CSV and Parquet
             # refuse paging parameters (a default must be a value every format accepts).
             "schema": {"type": "string", "enum": PAGINATION_MODES},
             "description": "page (default): numbered pages with a count; cursor: pages by position in the "
                            "ordering, follow `next` (no count; stable when results are added; the same cost at "
                            "any depth)."},
            {"name": self.cursor_param, "required": False, "in": "query", "schema": {"type": "string"},
             "description": "With pagination=cursor: the position to continue from, as given in `next`."},
        ]
