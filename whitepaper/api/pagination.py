"""Page-number pagination with a capped, validated page size: a bad `page` or `page_size` is a 400
naming the parameter (DRF would silently clamp the size and answer 404 for page=abc)."""

from django.core.paginator import InvalidPage
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 500


def positive_int_param(params, name, maximum=None):
    raw = params.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError({name: [f"Expected a whole number, got {raw[:50]!r}."]}) from None
    if value < 1 or (maximum is not None and value > maximum):
        bound = f"between 1 and {maximum}" if maximum is not None else "at least 1"
        raise ValidationError({name: [f"Must be {bound}, got {value}."]})
    return value


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
