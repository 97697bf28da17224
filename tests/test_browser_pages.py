"""The customer pages in real headless Chromium: charts drawn per table group with a point per row,
the explorer filtering by htmx with the URL following, CSV = the rows on screen, compare %.

The pages only read the catalogue imported once for the session (committed), so the live server
here is pytest-django's LiveServer started for this module without `transactional_db`, whose flush
would empty the session's catalogue for every later test."""

import csv
import io
import re
from pathlib import Path

import pytest

from whitepaper.models import PublishedResult

from .browser_support import rows_on_screen

pytestmark = pytest.mark.django_db  # django_db: so the test database is set up

MYSQL_2025 = "huawei-2025-10-21-mysql"


def wait_for_charts(page):
    page.wait_for_function("() => window.perfdashCharts && window.perfdashCharts.size === "
                           "document.querySelectorAll('figure[data-chart] canvas').length")


@pytest.mark.quick  # the quick tier's browser page (scripts/test.sh --quick)
def test_document_page_draws_one_chart_per_table_group_with_a_point_per_row(server, page):
    page.goto(f"{server}/documents/{MYSQL_2025}/")
    wait_for_charts(page)
    groups = page.evaluate("""() => [...document.querySelectorAll('section.table-group')].map(section => {
        const canvas = section.querySelectorAll('figure[data-chart] canvas');
        const chart = Chart.getChart(canvas[0]);
        return {canvases: canvas.length, rows: section.querySelectorAll('.result-table tbody tr').length,
                points: chart.data.datasets.reduce((n, d) => n + d.data.length, 0),
                series: chart.data.datasets.length, tables: section.querySelectorAll('.result-table').length};
    })""")
    assert len(groups) > 5
    for g in groups:
        assert g["canvases"] == 1
        assert g["points"] == g["rows"] > 0
        assert g["series"] == g["tables"]  # one line per memory ratio (one table each)
    assert sum(g["rows"] for g in groups) == PublishedResult.objects.filter(table__document__slug=MYSQL_2025).count()
    # The QPS button redraws the same points as QPS.
    first = page.locator("figure[data-chart]").first
    tps_max = page.evaluate("() => Math.max(...Chart.getChart(document.querySelector('figure[data-chart] canvas'))"
                            ".data.datasets.flatMap(d => d.data.map(p => p.y)))")
    first.locator("button[data-metric=qps]").click()
    qps_max = page.evaluate("() => Math.max(...Chart.getChart(document.querySelector('figure[data-chart] canvas'))"
                            ".data.datasets.flatMap(d => d.data.map(p => p.y)))")
    assert qps_max > 15 * tps_max


def test_explorer_filters_by_htmx_updates_the_url_and_reload_gives_the_same_rows(server, page):
    page.goto(f"{server}/explore/")
    everything = rows_on_screen(page)
    page.evaluate("() => { window.notReloaded = true; }")
    page.select_option("select[name=engine]", "mysql")
    page.wait_for_url(re.compile(r"engine=mysql"))
    page.select_option("select[name=version]", "8.0")
    page.wait_for_url(re.compile(r"version=8\.0"))
    page.fill("input[name=min_vcpus]", "16")
    page.wait_for_url(re.compile(r"min_vcpus=16"))
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    filtered = rows_on_screen(page)
    assert page.evaluate("() => window.notReloaded") is True, "filtered by htmx, not by a page load"
    expected = set(PublishedResult.objects.newest_per_variant().filter(  # default: newest edition only
        engine_version__engine__slug="mysql", engine_version__version="8.0",
                                                  flavor__vcpus__gte=16).values_list("pk", flat=True))
    assert set(filtered) == expected and 0 < len(filtered) < len(everything)
    url = page.url
    page.reload()
    assert page.url == url and rows_on_screen(page) == filtered
    assert page.input_value("select[name=engine]") == "mysql" and page.input_value("input[name=min_vcpus]") == "16"

    # CSV export of exactly these rows: the visible columns, or every column.
    with page.expect_download() as download:
        page.click("a.csv-link")
    header = Path(download.value.path()).read_text(encoding="utf-8").splitlines()[0]
    # the columns the screen shows (issue 36.2), in its order; the ratio column: the document's and the derived one
    assert header == ("family,vcpus,memory_gb,tps,qps,memory_ratio,memory_ratio_derived,engine,version,vendor,document,"
                      "published,revised_from,revised_changes,superseded_by,superseded_changes")
    with page.expect_download() as download:
        page.click("a.csv-all-link")
    body = Path(download.value.path()).read_text(encoding="utf-8")
    exported = list(csv.DictReader(io.StringIO(body)))
    on_screen = PublishedResult.objects.filter(pk__in=filtered).select_related("table__document", "flavor")
    # the CSV's cells since API 3.0.0 (issue 52.10): TPS with its two decimals
    assert sorted((r["document"], r["table"], r["vcpus"], r["tps"]) for r in exported) == sorted(
        (r.table.document.slug, r.table.label, str(r.flavor.vcpus), f"{r.tps:.2f}") for r in on_screen)


def test_compare_selected_rows_shows_the_percent_difference(server, page):
    page.goto(f"{server}/explore/?engine=mysql&version=8.0&family=dedicated&vcpus=8&document=huawei-2025-10-21-mysql")
    ids = rows_on_screen(page)[:2]
    assert len(ids) == 2
    for pk in ids:
        page.check(f"input[name=sel][value='{pk}']")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(re.compile(r"/compare/\?sel="))
    a, b = (PublishedResult.objects.get(pk=pk) for pk in ids)
    expected = round((float(b.tps) - float(a.tps)) / float(a.tps) * 100, 1)
    diff = page.locator(".compare-table tbody tr").nth(1).locator("td.diff").inner_text()
    assert diff == f"{'+' if expected > 0 else ''}{expected}%"
    wait_for_charts(page)
    # Two single flavours: a bar each (not two one-point lines).
    assert page.evaluate("() => Chart.getChart(document.querySelector('figure[data-chart] canvas')).data.datasets"
                         ".map(d => d.data.length)") == [2]


def test_explorer_internal_measurements_switch_lives_in_the_url(server, page):
    page.goto(f"{server}/explore/?engine=ppas")
    assert not page.is_checked("input[name=include_internal]")
    page.evaluate("() => { window.notReloaded = true; }")
    page.check("input[name=include_internal]")
    page.wait_for_url(re.compile(r"include_internal=true"))
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    assert page.evaluate("() => window.notReloaded") is True
    page.reload()
    assert page.is_checked("input[name=include_internal]") and len(rows_on_screen(page)) == 18  # PPAS: 18 rows
