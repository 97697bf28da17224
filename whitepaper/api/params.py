"""Query parameters of the catalogue API, checked before anything runs, every problem reported at
once: a parameter the endpoint does not know (a typo such as min_cpu), a bad filter value, a bad
ordering field or page size -> one 400 mapping each parameter to its messages."""

import re

import django_filters
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend, OrderingFilter

from config.limits import MomentField
from config.pagination import MAX_PAGE_SIZE, positive_int_param

from ..filters import ResultFilter
from ..metrics import METRICS_BY_NAME
from ..queries import SORTS, unknown_sort_terms
from ..result_query import ResultQuery
from ..suggestions import did_you_mean

ALWAYS_ALLOWED = {"format", "page", "page_size"}
EMPTY_VALUE = "Empty value; give a value or leave the parameter out."
CSV_HAS_NO_PAGES = ("The CSV (and the Parquet) holds every matching row: page, page_size, pagination and cursor are "
                    "for JSON pages.")


def repeatable_params(filterset):
    """The parameters of `filterset` that take a list (repeated: `?engine=mysql&engine=postgresql`)."""
    return {name for name, flt in filterset.filters.items() if getattr(flt, "repeatable", False)} if filterset else set()


def unknown_params(params, allowed):
    """{parameter: [message]} for each parameter of `params` the endpoint does not know (a typo such as
    `stat=` would otherwise filter nothing): the rule of every endpoint, the catalogue's and the runs'."""
    return {name: [f"Unknown parameter; this endpoint accepts: {', '.join(sorted(allowed))}."]
            for name in sorted(set(params) - set(allowed))}


def check_params(params, allowed, *, filterset=None, required=(), checks=(), repeatable=None):
    """{parameter: [messages]} for every problem of `params`; empty when all is well. A parameter given
    more than once is an error unless it is `repeatable` (default: the filterset's list filters)."""
    errors = unknown_params(params, allowed)
    repeatable = repeatable_params(filterset) if repeatable is None else set(repeatable)
    getlist = getattr(params, "getlist", lambda name: [params[name]])
    errors.update({name: ["Given more than once; this parameter takes one value."]
                   for name in sorted(set(params) & set(allowed)) if name not in repeatable and len(getlist(name)) > 1})
    # One rule for every parameter of every endpoint: an empty value (`vendor=`, `min_tps=`, `ordering=`)
    # is a 400, never "no filter" on one endpoint and an error on another.
    errors.update({name: [EMPTY_VALUE] for name in sorted(set(params) & set(allowed))
                   if any(v.strip() == "" for v in getlist(name)) and name not in errors})
    errors.update({name: ["This parameter is required."] for name in required if name not in params})
    if filterset is not None and not filterset.is_valid():
        errors.update({name: _with_hints(name, messages, filterset.form.errors.as_data().get(name, []))
                       for name, messages in filterset.errors.items() if name not in errors})
    for check in checks:
        try:
            check(params)
        except ValidationError as exc:
            errors.update({k: v for k, v in exc.detail.items() if k not in errors})
    return errors


def _with_hints(name, messages, errors):
    """The messages of one parameter, an unknown value's followed by the slug it probably meant."""
    texts = [str(m) for m in messages]
    for index, error in enumerate(errors[:len(texts)]):
        if error.code == "unknown" and (hint := did_you_mean(name, (error.params or {}).get("value"))):
            texts[index] = f"{texts[index]} {hint}"
    return texts


FILE_FORMATS = ("csv", "parquet")  # the results list's whole-set answers (each also an action of its own)


class StrictQueryBackend(DjangoFilterBackend):
    """The endpoint's FilterSet (DjangoFilterBackend's, so the schema lists its parameters), applied
    only after every parameter of the request passed `check_params`. What a list's parameters ask is read in the
    same pass, once, into `view.result_query` (whitepaper.result_query.ResultQuery): the ordering, pagination, page,
    size and cursor, fields and CSV options that the other backends, the paginator and the answers then use."""

    def filter_queryset(self, request, queryset, view):
        query = self.read(request, queryset, view)
        return query.filterset.qs if query.filterset is not None else queryset

    def read(self, request, queryset, view):
        """The request's ResultQuery, or a 400 naming every bad parameter (see `check_params`); read once per view."""
        if getattr(view, "result_query", None) is not None:
            return view.result_query
        listing = view.action in ("list", *FILE_FORMATS)
        # Every matching row as CSV or Parquet, no pages: /results/csv/ (no format either) and ?format=csv alike.
        file_format = view.action if view.action in FILE_FORMATS else getattr(getattr(request, "accepted_renderer", None), "format", None)
        csv = file_format in FILE_FORMATS
        paged = view.action == "list" and not csv
        filterset = self.get_filterset(request, queryset, view) if listing else None
        allowed = set(ALWAYS_ALLOWED) if view.action == "list" or not listing else set()
        repeatable = repeatable_params(filterset)
        checks = []  # (what it reads, the check: its value, or a ValidationError)
        paginator = getattr(view, "pagination_class", None)
        if listing:
            allowed |= set(filterset.filters) if filterset is not None else set()
        if paged:
            checks += [("page", lambda p: positive_int_param(p, "page")),
                       ("page_size", lambda p: positive_int_param(p, "page_size", MAX_PAGE_SIZE))]
            if hasattr(paginator, "check"):  # the results list: pagination=cursor, cursor=
                allowed |= {paginator.mode_param, paginator.cursor_param}
                checks.append(("pagination", paginator.check))
        if listing:
            for backend in view.filter_backends:
                if hasattr(backend, "check") and file_format not in getattr(backend, "not_for", ()):
                    allowed.add(backend.param)
                    checks.append((backend.param, backend.check))
                    if getattr(backend, "repeatable", False):
                        repeatable.add(backend.param)
        params = request.query_params
        errors = check_params(params, allowed, filterset=filterset, repeatable=repeatable)
        values = {}
        for name, check in checks:  # after the filters' problems, as check_params's `checks`: a parameter's first wins
            try:
                values[name] = check(params)
            except ValidationError as exc:
                errors.update({k: v for k, v in exc.detail.items() if k not in errors})
        if csv:
            paging = {"page", "page_size", getattr(paginator, "mode_param", "page"), getattr(paginator, "cursor_param", "page")}
            errors.update({name: [CSV_HAS_NO_PAGES] for name in sorted(paging & set(params))})
        if errors:
            raise ValidationError(errors)
        if csv:  # a file's columns: the export's (a JSON-only field is a 400 here, once every other parameter is right)
            for backend in view.filter_backends:
                if hasattr(backend, "check_file"):
                    values[backend.param] = backend.check_file(params)
        view.result_query = ResultQuery(
            filterset=filterset, terms=values.get(ResultOrdering.param) or [], page=values.get("page") or 1,
            page_size=values.get("page_size"), pagination=values.get("pagination") or "page",
            cursor=params.get(getattr(paginator, "cursor_param", None)) if values.get("pagination") == "cursor" else None,
            fields=values.get("fields") or [], bom=bool(values.get("bom")), printed_cells=bool(values.get("printed_cells")))
        return view.result_query


class MomentFilter(django_filters.IsoDateTimeFilter):
    field_class = MomentField  # still a date-time in UTC, else a 400 naming the parameter


def updated_since_filter(field_name, what):
    """`updated_since=<ISO 8601 date-time>` (UTC when it names no offset): only what changed at or after it."""
    return MomentFilter(
        field_name=field_name, lookup_expr="gte", label=f"Only {what} changed at or after this moment",
        help_text=f"Only {what} changed at or after this moment (ISO 8601, e.g. 2026-11-26T09:00:00Z; UTC when no "
                  "offset is given): keep the newest `updated_at` you saw and pass it next time.")


class APIResultFilter(ResultFilter):
    literal_flavor_ids = True  # one more small query; the planner then sees how few flavours match
    updated_since = updated_since_filter("updated_at", "results")  # the API's only: pages have no use for it


SORT_UNITS = {"id": "", "published": "document date", "vcpus": "vCPUs", "memory_gb": "GB",
              **{name: metric.unit for name, metric in METRICS_BY_NAME.items()}}


class StrictOrderingFilter(OrderingFilter):
    """DRF's OrderingFilter (the runs API's `ordering`), except that a value it would not read exactly as written (a
    field it does not offer, a space, an empty term) is a 400 naming `ordering` (DRF drops such terms and answers the
    default order, as if the parameter were right). The schema declares the same pattern; empty is the default order."""

    @staticmethod
    def pattern(offered):
        term = "-?(" + "|".join(map(re.escape, offered)) + ")"
        return f"^({term}(,{term})*)?$"

    def offered(self, queryset, view, request=None):
        return [name for name, _label in self.get_valid_fields(queryset, view, {"request": request})]

    def get_ordering(self, request, queryset, view):
        raw = request.query_params.get(self.ordering_param, "")
        offered = self.offered(queryset, view, request)
        if not re.fullmatch(self.pattern(offered), raw):
            unknown = [term for term in raw.split(",") if term.strip().lstrip("-") not in offered] or [raw]
            raise ValidationError({self.ordering_param: [
                f"Unknown ordering field {', '.join(map(repr, unknown))}; choose from {', '.join(offered)} "
                "(prefix '-' for descending; several comma-separated, no spaces)."]})
        return super().get_ordering(request, queryset, view)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        try:
            offered = self.offered(view.get_queryset(), view)
        except Exception:  # noqa: BLE001 - a view that cannot build its queryset here: DRF's plain string
            return parameters
        for parameter in parameters:  # the fields it takes, so a schema-valid value is never refused
            parameter["schema"] = {"type": "string", "pattern": self.pattern(offered)}
            parameter["description"] = (f"Sort by {', '.join(offered)} ('-' for descending; several comma-separated); "
                                        "any other field is a 400.")
        return parameters


class ResultOrdering(BaseFilterBackend):
    """?ordering=-tps&ordering=vcpus (repeated, as generated clients send a list; `-tps,vcpus` in one
    value is the same): the catalogue's sort keys (queries.SORTS), '-' for descending; results without
    the value last in either direction. An unknown key is a 400 (DRF's OrderingFilter would ignore it)."""

    param = "ordering"
    repeatable = True

    @classmethod
    def check(cls, params):
        """The sort terms of `params`, or a ValidationError naming the bad ones."""
        values = params.getlist(cls.param) if hasattr(params, "getlist") else [params.get(cls.param, "")]
        raw = ",".join(values)
        terms = [t.strip() for t in raw.split(",") if t.strip()]
        unknown = unknown_sort_terms(terms)
        if unknown or (raw and not terms):
            raise ValidationError({cls.param: [
                f"Unknown ordering field {', '.join(map(repr, unknown)) or repr(raw)}; "
                f"choose from {', '.join(SORTS)} (prefix '-' for descending)."]})
        return terms

    def filter_queryset(self, request, queryset, view):
        return queryset.sorted_by(view.result_query.terms)  # read by StrictQueryBackend, which runs first

    def get_schema_operation_parameters(self, view):
        choices = [f"{prefix}{name}" for name in SORTS for prefix in ("", "-")]
        # Readable enum member names in generated clients (TPS_DESC, not VALUE_29): openapi-python-client
        # and openapi-generator read x-enum-varnames.
        varnames = [f"{name.upper()}{suffix}" for name in SORTS for suffix in ("", "_DESC")]
        return [{
            "name": self.param, "required": False, "in": "query", "style": "form", "explode": True,
            "description": "Sort fields, the parameter repeated for several (ordering=-tps&ordering=vcpus; "
                           "'-tps,vcpus' in one value is the same), '-' for descending; results without the value sort last "
                           "in either direction, ties by id. Fields: "
                           + ", ".join(f"{k} ({SORT_UNITS[k]})" if SORT_UNITS.get(k) else k for k in SORTS)
                           + ". Default: document order (documents by date, then tables and rows as printed).",
            "schema": {"type": "array", "items": {"type": "string", "enum": choices, "x-enum-varnames": varnames}},
        }]
