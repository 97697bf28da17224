"""Compare of single rows on a phone and their provenance (issue 49.6), in headless Chromium at 1280 and 390 px in
English and Chinese: the bar chart draws its bars (at 390 px they collapsed to nothing in English, a few pixels in
Chinese: the rotated names under them took the canvas) and names each bar on one line of its own without overlapping
its neighbours; each row's number and its difference are on screen (a card per row), nothing scrolls sideways; each
row links to its document and table, and the table link lands on that table's first row. Back, Forward and reload
keep the chart's metric (it lives in the URL). Expected rows from the data files (huawei-2025-10-21-mysql.yaml, MySQL
8.0 dedicated 8 vCPU; for six selections, a MySQL row of 8 vCPUs from each document and family)."""

import re

import pytest

from whitepaper.models import PublishedResult

from .test_browser_pages import wait_for_charts
from .test_charts_browser import TOOLTIPS

pytestmark = pytest.mark.django_db

LANGS = ["en", "zh-hans"]
WIDTHS = {1280: 900, 390: 844}


def two_rows():
    rows = list(PublishedResult.objects.filter(table__document__slug="huawei-2025-10-21-mysql", engine_version__version="8.0",
                                               flavor__family__slug="dedicated", flavor__vcpus=8).order_by("pk")[:2])
    assert len(rows) == 2
    return rows


def six_rows():
    """Six single rows of as many documents and families (long names, the page's most selections)."""
    rows, seen = [], set()
    for r in PublishedResult.objects.filter(flavor__vcpus=8, tps__isnull=False, engine_version__engine__slug="mysql") \
            .select_related("table__document", "flavor").order_by("pk"):
        if (r.table.document_id, r.flavor.family_id) not in seen:
            seen.add((r.table.document_id, r.flavor.family_id))
            rows.append(r)
    assert len(rows) >= 6
    return rows[:6]


def compare_url(rows, metric=None):
    return "/compare/?" + "&".join(f"sel={r.pk}" for r in rows) + (f"&metric={metric}" if metric else "")


def open_page(page, server, path, lang, width):
    page.set_viewport_size({"width": width, "height": WIDTHS[width]})
    page.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")
    wait_for_charts(page)


def test_compare_rows_link_their_document_and_table(client):
    a, b = two_rows()
    html = client.get(f"/compare/?sel={a.pk}&sel={b.pk}&lang=en").content.decode()
    sources = re.findall(r'<td class="text source"[^>]*>(.*?)</td>', html, re.S)
    assert len(sources) == 2
    for row, source in zip((a, b), sources):
        assert f'href="/documents/huawei-2025-10-21-mysql/"' in source
        assert f'href="/documents/huawei-2025-10-21-mysql/#{row.table.anchor}"' in source


# The bar chart as drawn: the plot's and canvas' boxes, each bar's height against the height its value should have
# (y from 0), each name under a bar as the box its widest line takes (canvas pixels), and how far it is rotated.
BAR_CHART = """() => {
  const chart = Chart.getChart(document.querySelector('figure[data-chart] canvas'));
  const area = chart.chartArea, x = chart.scales.x, y = chart.scales.y, ctx = chart.ctx;
  const labels = x.getLabelItems().map(item => {
    ctx.save(); ctx.font = item.font.string;
    const lines = [].concat(item.label).map(String);
    const width = Math.max(...lines.map(l => ctx.measureText(l).width));
    ctx.restore();
    const at = item.options.translation[0], align = item.options.textAlign;
    const left = align === 'center' ? at - width / 2 : align === 'right' ? at - width : at;
    return {text: lines.join(' '), lines: lines.length, left: left, right: left + width, rotation: item.options.rotation};
  });
  const data = chart.data.datasets[0].data;
  const bars = chart.getDatasetMeta(0).data.map((el, i) => ({
    value: data[i].y, height: el.base - el.y, width: el.width,
    expected: data[i].y / y.max * (area.bottom - area.top)}));
  const canvas = chart.canvas.getBoundingClientRect();
  return {type: chart.config.type, width: chart.width, height: chart.height, right: canvas.right,
          plotHeight: area.bottom - area.top, labels: labels, bars: bars, names: chart.data.labels,
          legend: [...document.querySelectorAll('figure[data-chart] .chart-legend button')].map(b => b.innerText.trim())};
}"""


def check_bar_chart(chart, n, viewport):
    where = f"{n} bars at {viewport} px"
    assert chart["type"] == "bar" and len(chart["bars"]) == n == len(chart["labels"]), where
    assert chart["right"] <= viewport, (where, chart["right"])
    # The plot keeps most of the canvas: the names under the bars do not eat it.
    assert chart["plotHeight"] >= 0.6 * chart["height"], (where, chart["plotHeight"], chart["height"])
    for bar in chart["bars"]:  # every bar drawn, as tall as its value
        assert bar["value"] and bar["width"] >= 8 and abs(bar["height"] - bar["expected"]) <= 2, (where, bar)
    assert max(b["height"] for b in chart["bars"]) >= 0.5 * chart["plotHeight"], where
    # Each bar named under it, level (not rotated), the names apart from each other and inside the canvas.
    labels = chart["labels"]
    assert all(lab["text"].strip() and lab["rotation"] == 0 for lab in labels), (where, labels)
    assert len({lab["text"] for lab in labels}) == n, (where, [lab["text"] for lab in labels])
    assert labels[0]["left"] >= 0 and labels[-1]["right"] <= chart["width"], (where, labels)
    for left, right in zip(labels, labels[1:]):
        assert right["left"] >= left["right"] + 2, (where, "names overlap", left, right)
    # The legend names every bar in full, the order of the bars.
    assert chart["legend"] == chart["names"], where


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGS)
def test_the_bar_chart_draws_and_names_every_bar(server, page, lang, width):
    for rows in (two_rows(), six_rows()):
        open_page(page, server, compare_url(rows), lang, width)
        check_bar_chart(page.evaluate(BAR_CHART), len(rows), width)
        # a bar's tooltip (its full name, number and size) stays inside the chart
        outside = [b for b in page.evaluate(TOOLTIPS) if b["left"] < -0.5 or b["right"] > b["chart"] + 0.5]
        assert not outside, outside


# Each row's number and difference cells: their right edge, and whether they are shown.
CELLS = """() => [...document.querySelectorAll('table.compare-table tbody tr')].map(tr => {
  const metric = tr.querySelector('td[data-col="metric"]').getBoundingClientRect();
  const diff = tr.querySelector('td.diff').getBoundingClientRect();
  return {metric: metric.right, diff: diff.right, shown: metric.width > 0 && diff.width > 0}; })"""


@pytest.mark.parametrize("lang", LANGS)
def test_a_phone_sees_each_rows_number_and_difference(server, page, lang):
    for rows in (two_rows(), six_rows()):
        open_page(page, server, compare_url(rows), lang, 390)
        cells = page.evaluate(CELLS)
        assert len(cells) == len(rows) and all(c["shown"] and c["metric"] <= 390 and c["diff"] <= 390 for c in cells), cells
        box = page.evaluate("() => { const b = document.querySelector('table.compare-table').closest('.table-scroll'); "
                            "return [b.scrollWidth, b.clientWidth]; }")
        assert box[0] <= box[1] + 1, box
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


FIRST_ROW_OF_TARGET = """() => { const t = document.getElementById(location.hash.slice(1));
  const row = t && t.querySelector('tbody tr'); if (!row) return null; const r = row.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, height: innerHeight}; }"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_rows_table_link_lands_on_that_tables_first_row(server, page, lang, width):
    a, b = two_rows()
    open_page(page, server, compare_url([a, b]), lang, width)
    page.locator("table.compare-table tbody tr").nth(1).locator("td.source a").nth(1).click()
    page.wait_for_url(re.compile(rf"/documents/huawei-2025-10-21-mysql/.*#{b.table.anchor}$"))
    row = page.evaluate(FIRST_ROW_OF_TARGET)
    assert row and 0 <= row["top"] and row["bottom"] <= row["height"], row
    page.go_back()
    page.wait_for_url(re.compile(r"/compare/"))
    assert page.locator("table.compare-table tbody tr").count() == 2


@pytest.mark.parametrize("width", WIDTHS)
def test_back_forward_and_reload_keep_the_charts_metric(server, page, width):
    a, b = two_rows()
    open_page(page, server, compare_url([a, b]), "en", width)
    pressed = "() => document.querySelector('figure[data-chart] [aria-current=true]').dataset.metricLink"
    page.locator("figure[data-chart] a[data-metric-link=qps]").click()
    page.wait_for_url(re.compile(r"metric=qps"))
    wait_for_charts(page)
    assert page.evaluate(pressed) == "qps"
    check_bar_chart(page.evaluate(BAR_CHART), 2, width)
    assert [bar["value"] for bar in page.evaluate(BAR_CHART)["bars"]] == [float(a.qps), float(b.qps)]
    page.go_back()
    wait_for_charts(page)
    assert page.evaluate(pressed) == "tps"
    check_bar_chart(page.evaluate(BAR_CHART), 2, width)
    page.go_forward()
    wait_for_charts(page)
    assert page.evaluate(pressed) == "qps"
    page.reload()
    wait_for_charts(page)
    assert page.evaluate(pressed) == "qps"
    check_bar_chart(page.evaluate(BAR_CHART), 2, width)
