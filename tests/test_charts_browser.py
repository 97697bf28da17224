"""Charts that don't mislead at the edges (issue 36.5, 36.6), in headless Chromium at 1280 and 390 px in both
languages: the engine page's chart overlaying Alibaba's and Huawei's MySQL 5.7 says the methodologies differ; every
caption names engine and version; the y axis names its unit; no marker is clipped; a chart downloads as a PNG of
its own size; a point opens its flavour's page; a phone's tooltip fits inside the chart (compare: 426 px wide in a
358 px chart before). Read-only pages over the session's catalogue (see test_browser_pages)."""

import re
import struct
from pathlib import Path

import pytest

from whitepaper.models import PublishedResult

from .test_browser_pages import wait_for_charts
from .test_numbers_in_view_browser import COMPARE, COMPARE_LINES

pytestmark = pytest.mark.django_db

UNIT = {"en": "transactions per second", "zh-hans": "每秒事务数"}
CAVEAT = {"en": "The methodologies differ.", "zh-hans": "测试方法不同。"}

# Every drawn marker: whether it lies whole inside the canvas and is either inside the plot or drawn unclipped.
MARKERS = """() => [...document.querySelectorAll('figure[data-chart] canvas')].flatMap(canvas => {
  const chart = Chart.getChart(canvas);
  if (!chart || chart.config.type !== 'line') return [];
  const area = chart.chartArea;
  return chart.data.datasets.flatMap((d, i) => chart.getDatasetMeta(i).data.map(el => {
    const r = el.options.radius + el.options.borderWidth / 2;
    const inArea = el.x - r >= area.left - 0.5 && el.x + r <= area.right + 0.5 && el.y - r >= area.top - 0.5 && el.y + r <= area.bottom + 0.5;
    const inCanvas = el.x - r >= 0 && el.x + r <= chart.width && el.y - r >= 0 && el.y + r <= chart.height;
    return {chart: canvas.id, series: d.label, x: el.x, whole: inCanvas && (inArea || d.clip === false)};
  }));
})"""

# For every point of every line or bar: the tooltip's box against the chart's width.
TOOLTIPS = """() => [...document.querySelectorAll('figure[data-chart] canvas')].flatMap(canvas => {
  const chart = Chart.getChart(canvas);
  const boxes = [];
  chart.data.datasets.forEach((d, i) => chart.getDatasetMeta(i).data.forEach((el, j) => {
    chart.tooltip.setActiveElements([{datasetIndex: i, index: j}], {x: el.x, y: el.y});
    chart.update();
    boxes.push({point: `${d.label} #${j}`, left: chart.tooltip.x, right: chart.tooltip.x + chart.tooltip.width,
                width: chart.tooltip.width, chart: chart.width});
  }));
  chart.tooltip.setActiveElements([], {x: 0, y: 0});
  chart.update();
  return boxes;
})"""


def open_page(page, server, path, lang, width):
    page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
    page.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")
    wait_for_charts(page)


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_engine_charts_say_what_they_draw_and_how_it_was_measured(server, page, width, lang):
    open_page(page, server, "/engines/mysql/5.7/", lang, width)
    figures = page.locator("figure[data-chart]")
    captions = figures.locator("figcaption").all_inner_texts()
    assert captions and all(c.startswith("MySQL 5.7 · ") for c in captions), captions
    # Alibaba's (no tool stated) and Huawei's (sysbench) lines share the dedicated chart: the caveat stands above it.
    dedicated = page.locator("figure[data-chart]", has_text="独享型" if lang == "zh-hans" else "Dedicated").first
    caveat = dedicated.locator("xpath=preceding-sibling::div[contains(@class, 'methodology-caveat')]")
    assert caveat.is_visible() and CAVEAT[lang] in caveat.inner_text()
    axis = page.evaluate("() => Chart.getChart(document.querySelector('figure[data-chart] canvas')).options.scales.y.title.text")
    assert UNIT[lang] in axis, axis
    clipped = [m for m in page.evaluate(MARKERS) if not m["whole"]]
    assert not clipped, clipped[:5]


def test_a_chart_downloads_as_png_and_its_points_open_the_flavour(server, page):
    open_page(page, server, "/engines/mysql/5.7/", "en", 1280)
    figure = page.locator("figure[data-chart]").first
    with page.expect_download() as download:
        figure.locator("button[data-download-png]").click()
    data = Path(download.value.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    size = page.evaluate("() => { const c = document.querySelector('figure[data-chart] canvas'); return [c.width, c.height]; }")
    assert [width, height] == size and width > 300
    # The last point of the first line: a click on it opens that row's flavour page.
    target = page.evaluate("""() => { const canvas = document.querySelector('figure[data-chart] canvas');
        const chart = Chart.getChart(canvas), el = chart.getDatasetMeta(0).data.at(-1), box = canvas.getBoundingClientRect();
        return {x: box.left + el.x, y: box.top + el.y, id: chart.data.datasets[0].data.at(-1).url}; }""")
    page.mouse.click(target["x"], target["y"])
    page.wait_for_url(re.compile(r"/flavors/\d+/"))
    assert page.url.endswith(target["id"])
    pk = int(re.search(r"/flavors/(\d+)/", page.url).group(1))
    assert PublishedResult.objects.filter(flavor_id=pk, engine_version__engine__slug="mysql",
                                          engine_version__version="5.7").exists()


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
@pytest.mark.parametrize("path", [COMPARE, COMPARE_LINES, "/engines/postgresql/10/", "/documents/huawei-2018-12-11-rds/"])
def test_a_phones_tooltips_fit_inside_the_chart(server, page, lang, path):
    open_page(page, server, path, lang, 390)
    boxes = page.evaluate(TOOLTIPS)
    assert boxes
    outside = [b for b in boxes if b["left"] < -0.5 or b["right"] > b["chart"] + 0.5]
    assert not outside, outside[:5]
