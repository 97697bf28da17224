"""Page-number pagination of every API list (catalogue and runs) with a capped, validated page size: a bad
`page` or `page_size` is a 400 naming the parameter (DRF would silently clamp the size and answer 404 for
page=abc); RFC 8288 Link headers beside the body's links."""

import re

from django.core.paginator import InvalidPage
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.utils.urls import remove_query_param, replace_query_param

# A whole number as the API accepts it: ASCII digits, no sign, no leading zero (int() would read " 16", "+16", "016" and "１６").
ASCII_WHOLE_NUMBER = re.compile(r"0|[1-9][0-9]*")

MAX_PAGE_SIZE = 500


def positive_int_param(params, name, maximum=None):
    raw = params.get(name)
    if raw is None:
        return None
    if not ASCII_WHOLE_NUMBER.fullmatch(raw):
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
        read = getattr(view, "result_query", None)  # page and size read already, with the list's other parameters
        if read is not None:
            page_number, page_size = read.page, read.page_size or self.page_size
        else:
            page_number = positive_int_param(request.query_params, self.page_query_param) or 1
            page_size = self.get_page_size(request)
        paginator = self.make_paginator(queryset, page_size, request)
        try:
            self.page = paginator.page(page_number)
        except InvalidPage:
            raise NotFound({"detail": f"Page {page_number} is past the last page ({paginator.num_pages}).",
                            "page": [f"Must be between 1 and {paginator.num_pages}."]}) from None
        self.request = request
        return list(self.page)

    def make_paginator(self, queryset, page_size, request):
        return self.django_paginator_class(queryset, page_size)

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
