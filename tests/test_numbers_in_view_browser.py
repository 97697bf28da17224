"""The numbers a buyer came for are in view (issue 21, "Numbers in view"), in real headless Chromium at
1280 and 390 px, in English and Chinese: on the explorer, the sizing answers (TPS; PPAS read-only QPS), the
compare pages (two series; every Huawei MySQL 5.7 line against Alibaba's), the edition diff, the engine pages
and every document page the first row's key number (TPS, else the table's first metric)
lies on screen without scrolling sideways, no page is wider than the screen, and every chart series has
a legend entry outside the plot. Read-only pages over the session's catalogue (see test_browser_pages)."""

import pytest

from whitepaper.models import Document

pytestmark = pytest.mark.django_db

COMPARE = ("/compare/?sel=engine%3Dmysql%26version%3D5.7%26family%3Ddedicated%26memory_ratio%3D1%3A4%26document%3Dhuawei-2023-08-03-rds"
           "&sel=engine%3Dmysql%26version%3D8.0%26family%3Ddedicated%26memory_ratio%3D1%3A4%26document%3Dhuawei-2023-08-03-rds")
# A series of every Huawei MySQL 5.7 line against Alibaba's: many lines, sizes that ask which (issue 21.3).
COMPARE_LINES = "/compare/?sel=engine%3Dmysql%26version%3D5.7%26vendor%3Dhuawei&sel=engine%3Dmysql%26version%3D5.7%26vendor%3Dalibaba"
SIZING = "/sizing/?engine=mysql&version=8.0&metric=tps&target=3000"
SIZING_PPAS = "/sizing/?engine=ppas&metric=ro_qps&target=100000"  # read-only QPS with its hot-data size (issue 21.2)
EDITION_DIFF = "/editions/huawei-2023-08-03-rds/huawei-2025-10-21-postgresql/"
# The key metric of a row: TPS where the table prints it, else what it prints instead (PPAS/Alibaba PostgreSQL).
KEY_METRICS = ["tps", "ro_qps", "rw_qps", "tpm", "qps", "metric"]

# The first key-number cell in document order, its box, and how far anything was scrolled sideways.
FIRST_KEY_CELL = """(keys) => {
  let cell = null;
  const explorer = document.querySelector('table.explorer');
  if (explorer) {
    const ths = [...explorer.querySelectorAll('thead th')];
    const i = ths.findIndex(th => th.dataset.col === 'tps');
    const row = explorer.querySelector('tbody tr');
    cell = i >= 0 && row ? row.children[i] : null;
  } else {
    const table = document.querySelector('main table td[data-col]') && document.querySelector('main table td[data-col]').closest('table');
    const row = table && table.querySelector('tbody tr');
    for (const key of keys) { cell = row && row.querySelector(`td[data-col="${key}"]`); if (cell) break; }
  }
  if (!cell) return null;
  const r = cell.getBoundingClientRect();
  const box = cell.closest('.table-scroll');
  return {left: r.left, right: r.right, width: r.width, text: cell.textContent.trim(),
          boxScroll: box ? box.scrollLeft : 0, windowScroll: window.scrollX, viewport: window.innerWidth};
}"""

LEGENDS = """() => [...document.querySelectorAll('figure[data-chart]')].filter(f => f.querySelector('canvas')).map(f => {
  const chart = Chart.getChart(f.querySelector('canvas'));
  const bar = chart.config.type === 'bar';
  const names = bar ? chart.data.labels : chart.data.datasets.map(d => d.label);
  const legend = f.querySelector('.chart-legend');
  const canvas = f.querySelector('canvas').getBoundingClientRect();
  const box = legend ? legend.getBoundingClientRect() : null;
  return {id: f.dataset.chart, names: names, entries: legend ? [...legend.querySelectorAll('button')].map(b => b.textContent.trim()) : [],
          outside: !!box && (box.top >= canvas.bottom - 0.5 || box.bottom <= canvas.top + 0.5),
          plotHeight: chart.chartArea.bottom - chart.chartArea.top, canvasHeight: canvas.height};
})"""


def customer_pages():
    return (["/explore/", SIZING, SIZING_PPAS, COMPARE, COMPARE_LINES, EDITION_DIFF, "/engines/sqlserver/2014/",
             "/engines/postgresql/10/"]
            + [f"/documents/{slug}/" for slug in Document.objects.order_by("published", "slug").values_list("slug", flat=True)])


def open_page(page, server, path, lang):
    page.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")
    page.wait_for_function("() => window.perfdashCharts && window.perfdashCharts.size === "
                           "document.querySelectorAll('figure[data-chart] canvas').length")


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_it_shows_the_key_number_of_the_first_row_without_sideways_scrolling(server, page, width, lang):
    page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
    for path in customer_pages():
        open_page(page, server, path, lang)
        widths = page.evaluate("() => ({page: document.documentElement.scrollWidth, viewport: window.innerWidth})")
        assert widths["page"] <= widths["viewport"], f"{path} at {width} px ({lang}) is {widths['page']} px wide"
        if path.startswith("/engines/"):
            continue  # charts only
        cell = page.evaluate(FIRST_KEY_CELL, KEY_METRICS)
        assert cell is not None and cell["text"], f"{path}: no key number in the first row"
        assert cell["boxScroll"] == 0 and cell["windowScroll"] == 0
        assert 0 <= cell["left"] and cell["right"] <= cell["viewport"], (
            f"{path} at {width} px ({lang}): the first row's {cell['text']} lies at x = {cell['left']:.0f}-{cell['right']:.0f}")


@pytest.mark.parametrize("width", [390])
def test_it_shows_tps_and_qps_of_the_explorers_first_row_on_a_phone(server, page, width):
    page.set_viewport_size({"width": width, "height": 844})
    for lang in ("en", "zh-hans"):
        open_page(page, server, "/explore/", lang)
        right = page.evaluate("""() => { const t = document.querySelector('table.explorer');
            const i = [...t.querySelectorAll('thead th')].findIndex(th => th.dataset.col === 'qps');
            return t.querySelector('tbody tr').children[i].getBoundingClientRect().right; }""")
        assert right <= width, f"QPS of the first row ends at x = {right:.0f} ({lang})"


def test_ppas_10_from_the_version_menu_lists_ppas_only(server, page):
    """Issue 21.6: the grouped Version menu (no engine chosen) names each option's engine."""
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, server, "/explore/", "en")
    page.select_option("#version-select", label="PPAS 10 (example version)")  # an example version (issue 36.8)
    page.wait_for_function("() => location.search.includes('engine=ppas') && location.search.includes('version=10')")
    page.wait_for_function("() => document.querySelector('#version-select').selectedOptions[0].textContent.trim() === "
                           "'10 (example version)'")
    assert page.eval_on_selector("select[name=engine]", "s => s.value") == "ppas"
    engines = page.eval_on_selector_all("table.explorer tbody tr", "rows => rows.length")
    assert engines > 0
    page.reload()
    assert page.eval_on_selector("select[name=engine]", "s => s.value") == "ppas"
    assert "PostgreSQL" not in page.eval_on_selector("#version-select", "s => s.textContent")


def test_it_fits_the_explorers_default_columns_in_1280_px_with_the_key_figures_first(server, page):
    page.set_viewport_size({"width": 1280, "height": 900})
    for lang in ("en", "zh-hans"):
        open_page(page, server, "/explore/", lang)
        box = page.evaluate("() => { const b = document.querySelector('#results .table-scroll');"
                            " return {scroll: b.scrollWidth, client: b.clientWidth}; }")
        assert box["scroll"] <= box["client"], f"the default columns need {box['scroll']} px ({lang})"
        columns = page.eval_on_selector_all("table.explorer thead th[data-col]", "ths => ths.map(th => th.dataset.col)")
        assert columns[:5] == ["family", "vcpus", "memory_gb", "tps", "qps"]
        # header row and first column stay in view while the table scrolls
        sticky = page.evaluate("""() => { const t = document.querySelector('table.explorer');
            return [getComputedStyle(t.querySelector('thead th')).position,
                    getComputedStyle(t.querySelector('tbody td:nth-child(2)')).position]; }""")
        assert sticky == ["sticky", "sticky"]


@pytest.mark.parametrize("width", [1280, 390])
def test_it_names_every_chart_series_in_a_legend_outside_the_plot(server, page, width):
    page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
    seen = 0
    for path in customer_pages():
        open_page(page, server, path, "en")
        for chart in page.evaluate(LEGENDS):
            seen += 1
            assert chart["entries"] == chart["names"] and all(chart["names"]), (path, chart["id"])
            assert chart["outside"], (path, chart["id"], "legend overlaps the plot")
            # the plot keeps most of its canvas however many series there are (the legend is not drawn in it)
            assert chart["plotHeight"] > 0.6 * chart["canvasHeight"], (path, chart["id"], chart["plotHeight"])
    assert seen > 20


def test_it_lets_the_keyboard_hide_and_show_a_series_from_the_legend(server, page):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, server, "/engines/sqlserver/2014/", "en")
    button = page.locator(".chart-legend button").first
    button.focus()
    page.keyboard.press("Enter")
    assert button.get_attribute("aria-pressed") == "false"
    assert page.evaluate("() => !Chart.getChart(document.querySelector('figure[data-chart] canvas')).isDatasetVisible(0)")
    page.keyboard.press(" ")
    assert button.get_attribute("aria-pressed") == "true"
    assert page.evaluate("() => Chart.getChart(document.querySelector('figure[data-chart] canvas')).isDatasetVisible(0)")


def test_it_tells_series_apart_by_colour_and_marker_shape(server, page):
    # Many lines: every Huawei MySQL 5.7 line against Alibaba's (the SQL Server 2014 page, used before, has five
    # since a derived memory ratio no longer splits its lines into single points, issue 36.5)
    open_page(page, server, COMPARE_LINES, "en")
    looks = page.evaluate("""() => Chart.getChart(document.querySelector('figure[data-chart] canvas')).data.datasets
        .map(d => d.borderColor + '/' + d.pointStyle)""")
    assert len(looks) > 6 and len(set(looks)) == len(looks)
    shapes = page.evaluate("() => [...document.querySelectorAll('figure[data-chart]')[0].querySelectorAll('.chart-legend svg')]"
                           ".map(s => s.outerHTML)")
    assert len(set(shapes)) == len(shapes)  # the legend draws each series' own marker


def test_it_offers_a_skip_link_and_names_every_control(server, page):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, server, "/explore/?engine=mysql&version=8.0", "en")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "results"  # the explorer's skip target (issue 36.6)
    unnamed = page.evaluate("""() => [...document.querySelectorAll('main input:not([type=hidden]), main select')]
        .filter(el => !(el.labels && el.labels.length && el.labels[0].textContent.trim()) && !el.getAttribute('aria-label'))
        .map(el => el.name)""")
    assert unnamed == []
    ranges = page.evaluate("() => [...document.querySelectorAll('input[name^=min_], input[name^=max_]')].map(el => el.labels[0].textContent.trim())")
    assert "vCPUs, minimum" in ranges and "TPS, maximum" in ranges
    names = page.evaluate("() => [...document.querySelectorAll('#results input[name=sel]')].map(el => el.getAttribute('aria-label'))")
    assert len(names) > 3 and len(set(names)) == len(names)  # each checkbox named after its own row
    first = page.evaluate("() => document.querySelector('#results tbody tr td:nth-child(2)').textContent.trim()")
    assert names[0].startswith("Compare ") and first.split()[0] in names[0]
