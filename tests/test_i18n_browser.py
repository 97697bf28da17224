"""The language switch in real headless Chromium: on a filtered explorer URL it lands on the same
filtered view in the other language, after htmx changed the filters too, and the choice is remembered."""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from whitepaper.models import PublishedResult

from .browser_support import rows_on_screen

pytestmark = pytest.mark.django_db


def query(url):
    return sorted(parse_qsl(urlsplit(url).query))


def test_switching_language_on_a_filtered_explorer_keeps_the_view(server, page):
    start = "/explore/?engine=mysql&version=8.0&family=dedicated&min_vcpus=8&sort=-tps"
    page.goto(server + start)
    assert page.get_attribute("html", "lang") == "en" and page.inner_text("h1") == "Flavour explorer"
    before = rows_on_screen(page)
    expected = list(PublishedResult.objects.newest_per_variant().filter(  # default: newest edition only
        engine_version__engine__slug="mysql", engine_version__version="8.0", flavor__family__slug="dedicated",
        flavor__vcpus__gte=8).order_by("-tps", "table__document__slug", "table__position", "position")
        .values_list("pk", flat=True))
    assert before == expected and len(before) > 3

    page.click(".language-switch a[data-lang=zh-hans]")
    page.wait_for_url(re.compile(r"lang=zh-hans"))
    assert urlsplit(page.url).path == "/explore/"
    assert query(page.url) == sorted(query(start) + [("lang", "zh-hans")])
    assert page.get_attribute("html", "lang") == "zh-hans" and page.inner_text("h1") == "规格浏览"
    assert rows_on_screen(page) == before
    assert page.input_value("select[name=family]") == "dedicated" and page.input_value("input[name=min_vcpus]") == "8"
    assert page.locator(".language-switch [aria-current=true]").inner_text() == "简体中文"
    assert "独享型" in page.inner_text("#results tbody") and "Dedicated" not in page.inner_text("#results tbody")

    # htmx changes the filters (and the URL) without a page load; the switch follows the new URL.
    page.fill("input[name=min_vcpus]", "16")
    page.wait_for_url(re.compile(r"min_vcpus=16"))
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    narrowed = rows_on_screen(page)
    assert 0 < len(narrowed) < len(before) and page.inner_text("h1") == "规格浏览"  # the partial is Chinese too
    page.click(".language-switch a[data-lang=en]")
    page.wait_for_url(re.compile(r"lang=en"))
    assert dict(query(page.url))["min_vcpus"] == "16" and dict(query(page.url))["family"] == "dedicated"
    assert page.inner_text("h1") == "Flavour explorer" and rows_on_screen(page) == narrowed
    assert "Dedicated" in page.inner_text("#results tbody")

    # Remembered: a plain URL (no lang) answers in the last choice, whatever the browser asks for.
    page.click(".language-switch a[data-lang=zh-hans]")
    page.wait_for_url(re.compile(r"lang=zh-hans"))
    page.goto(server + "/sizing/")
    assert page.get_attribute("html", "lang") == "zh-hans" and page.inner_text("h1") == "我需要哪种规格？"
    twins = page.eval_on_selector_all("link[rel=alternate][hreflang]", "ls => ls.map(l => [l.hreflang, l.href])")
    assert dict(twins) == {"en": f"{server}/sizing/?lang=en", "zh-Hans": f"{server}/sizing/?lang=zh-hans",
                           "x-default": f"{server}/sizing/"}


def test_a_chinese_browser_gets_chinese_pages_with_chinese_charts(server, browser):
    context = browser.new_context(locale="zh-CN", extra_http_headers={"Accept-Language": "zh-Hans,zh;q=0.9"},
                                  viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{server}/engines/mysql/5.7/")
        page.wait_for_function("() => window.perfdashCharts && window.perfdashCharts.size === "
                               "document.querySelectorAll('figure[data-chart] canvas').length")
        assert page.get_attribute("html", "lang") == "zh-hans"
        titles = page.eval_on_selector_all("figure[data-chart] figcaption", "fs => fs.map(f => f.textContent.trim())")
        assert "MySQL 5.7 · 独享型" in titles
        axis = page.evaluate("() => Chart.getChart(document.querySelector('figure[data-chart] canvas')).options.scales.x.title.text")
        assert axis == "CPU核数"
    finally:
        context.close()
