"""Retiring parts of the API (policy: docs/API-CHANGELOG.md). A retired behaviour is listed here once,
with the day it was deprecated and the day it goes; every answer that still uses it carries
`Deprecation` (RFC 9745: `@<unix time>`) and `Sunset` (RFC 8594: an HTTP date) headers, and the schema
marks what is deprecated (`deprecated: true`)."""

from dataclasses import dataclass
from datetime import date, datetime, timezone

from django.utils.http import http_date


@dataclass(frozen=True)
class Deprecation:
    what: str
    since: date
    sunset: date  # at least 90 days after `since` (the policy)
    instead: str

    def headers(self):
        since = int(datetime(self.since.year, self.since.month, self.since.day, tzinfo=timezone.utc).timestamp())
        sunset = int(datetime(self.sunset.year, self.sunset.month, self.sunset.day, tzinfo=timezone.utc).timestamp())
        return {"Deprecation": f"@{since}", "Sunset": http_date(sunset)}


DEPRECATIONS = {
    "spec-300": Deprecation(
        what="Spec lookup answering several matching variants with 300 Multiple Choices (multiple_choices=true)",
        since=date(2026, 11, 23), sunset=date(2027, 3, 1),
        instead="409 Conflict, code 'ambiguous', the same candidates and disambiguate_by (the default since 2.0.0)"),
    "runs-noise": Deprecation(
        what="Run compare's tps_noise and noise_method, and a run's trend.median/mean/stdev/band/beyond_noise/noise_method "
             "(verdicts from the noise inside one run, or a band of earlier results, instead of the spread between runs)",
        since=date(2026, 11, 28), sunset=date(2027, 3, 1),
        instead="compare's entries and comparisons (verdict, ratio and its interval over runs); trend.interval, "
                "trend.regression and trend.cannot_detect (the prediction interval of earlier results)"),
    "csv-printed-cells": Deprecation(
        what="The results CSV's cells as printed (printed_cells=true): numbers as the document printed them (494, "
             "8839.4) and version without the engine's name (10)",
        since=date(2026, 11, 28), sunset=date(2027, 3, 1),
        instead="the default cells since 3.0.0: numbers with their decimals (494.00, 8839.40) and version with the "
                "engine's name ('PostgreSQL 10'), typed right by pandas, polars and DuckDB with no options"),
}
MIN_NOTICE_DAYS = 90
assert all((d.sunset - d.since).days >= MIN_NOTICE_DAYS for d in DEPRECATIONS.values())


def mark_deprecated(response, key):
    """Add the Deprecation and Sunset headers of DEPRECATIONS[key] to `response`."""
    for name, value in DEPRECATIONS[key].headers().items():
        response[name] = value
    return response
