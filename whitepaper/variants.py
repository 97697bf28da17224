""""The same flavour across editions", one definition (issue 51.2): a variant is a series (one chart line:
engine version, vendor, family, memory ratio, deployment, SQL Server edition, data size) at one size (vCPUs,
memory, spec code, storage). Two documents printing a variant are two editions of one number.

Every shape derives from it: `queries.newest_rank` and `best_per_variant` (SQL windows partitioned by
VARIANT_FIELDS), `variant_key` (editions' row key, `smallest_reaching_once`, `attach_older_editions`),
`series_key` (`smallest_reaching` per document, `editions.merge_identical_series`; `charts.series_key` shows
SERIES_FIELDS in a legend), and `editions_of` (the same in SQL, through the editions' index).

The data size (hot rows) belongs to the series: Alibaba's PostgreSQL and PPAS tables print each flavour at
several, and a figure measured on another data size is another number, not an edition of it.

This module imports no model (queries.py, which models.py imports, imports it)."""

import functools

from django.db.models import F, OuterRef, Value
from django.db.models.functions import Coalesce

# What stays the same along one line of a chart (one document's rows of it differ only in size):
# name (a parameter of the API's spec lookup where it takes one) -> field path.
SERIES_FIELDS = {
    "engine_version": "engine_version",
    "vendor": "table__document__vendor",
    "family": "flavor__family",
    "memory_ratio": "flavor__memory_ratio",
    "deployment": "deployment",
    "edition": "edition",
    "hot_rows": "hot_rows",
}
# The size along a line.
SIZE_FIELDS = {
    "vcpus": "flavor__vcpus",
    "memory_gb": "flavor__memory_gb",
    "flavor": "flavor__spec_code",
    "storage": "flavor__storage",
}
# "The same flavour": a series at one size (the data size last: the order the spec lookup's disambiguators keep).
VARIANT_FIELDS = {**{k: v for k, v in SERIES_FIELDS.items() if k != "hot_rows"}, **SIZE_FIELDS,
                  "hot_rows": SERIES_FIELDS["hot_rows"]}
assert set(VARIANT_FIELDS) == set(SERIES_FIELDS) | set(SIZE_FIELDS)

# In SQL the flavour's part of a variant is one Flavor row: its unique constraints make one row per vendor,
# family, spec code, vCPUs, memory, storage and memory ratio, and a flavour is filed under its document's vendor
# (importer, runs.publish). So `flavor_id` stands for these fields, as the editions' index (result_editions) holds it.
FLAVOUR_PATHS = {"table__document__vendor", *(p for p in VARIANT_FIELDS.values() if p.startswith("flavor__"))}
# Hot rows as the editions' index holds them: missing as -1, so that "the same hot rows" (missing in both, or
# equal) is an equality that an index walk starts at.
EDITIONS_HOT_ROWS = Coalesce(F("hot_rows"), Value(-1))


@functools.cache
def _path_parts(path):
    return tuple(path.split("__"))


def field_value(result, path):
    """The value of a `__` path on a loaded result (None past a missing relation)."""
    value = result
    for part in _path_parts(path):  # split once per path: editions compare rows by their keys hundreds of times a page
        if value is None:
            return None
        value = getattr(value, part)
    return value


# The paths ending at a relation, compared by its id in a key (no query for a relation not loaded).
RELATIONS = {"engine_version", "table__document__vendor", "flavor__family"}
assert RELATIONS <= set(VARIANT_FIELDS.values())
_SERIES_KEY = tuple(f"{p}_id" if p in RELATIONS else p for p in SERIES_FIELDS.values())
_VARIANT_KEY = tuple(f"{p}_id" if p in RELATIONS else p for p in VARIANT_FIELDS.values())


def series_key(result):
    """The series (SERIES_FIELDS) of a loaded result."""
    return tuple(field_value(result, path) for path in _SERIES_KEY)


def variant_key(result):
    """The variant (VARIANT_FIELDS) of a loaded result: equal for two editions of one number."""
    return tuple(field_value(result, path) for path in _VARIANT_KEY)


def editions_of(queryset):
    """The rows of `queryset` of the outer query's row's variant (OuterRef), its own row included: VARIANT_FIELDS
    in SQL, the flavour's fields as its `flavor_id` (FLAVOUR_PATHS), hot rows as EDITIONS_HOT_ROWS, so PostgreSQL
    walks the editions' index (engine version, flavour, hot rows, document order)."""
    same = {"flavor_id": OuterRef("flavor_id"), "_hot_rows": Coalesce(OuterRef("hot_rows"), Value(-1))}
    for path in VARIANT_FIELDS.values():
        if path not in FLAVOUR_PATHS and path != "hot_rows":
            same[path] = OuterRef(path)
    return queryset.alias(_hot_rows=EDITIONS_HOT_ROWS).filter(**same)
