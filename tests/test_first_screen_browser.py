"""The answer on the first screen (issue 36.6), in headless Chromium in English and Chinese: every document page
opens with its summary and a link to each of its tables, its first table's first row within the first screen at
1280 x 900 (2.6 screens down before); on a phone (390 x 844) the explorer's filter form is folded, saying how many
filters are set, so its first row is on the first screen (1.6 screens down before); the skip link lands on the
explorer's results, a few Tab stops before the first row (44 before). Read-only pages over the session's catalogue
(see test_browser_pages)."""

import re

import pytest

from whitepaper.models import Document, ResultTable

pytestmark = pytest.mark.django_db

FIRST_ROW = """() => { const row = document.querySelector('.result-table tbody tr, table.explorer tbody tr');
  const box = row.getBoundingClientRect(); return {top: box.top + window.scrollY, bottom: box.bottom + window.scrollY}; }"""


def open_page(page, server, path, lang, width):
    page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
    page.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_every_document_page_opens_with_a_summary_and_its_first_table(server, page, lang):
    for document in Document.objects.order_by("slug"):
        open_page(page, server, document.get_absolute_url(), lang, 1280)
        summary = page.locator(".document-summary").inner_text()
        n_tables = ResultTable.objects.filter(document=document).count()
        assert re.search(rf"\b{n_tables}\b", summary), (document.slug, summary)
        linked = page.eval_on_selector_all(".toc a[href^='#table-']", "links => links.map(a => a.getAttribute('href'))")
        assert sorted(linked) == sorted(f"#{t.anchor}" for t in ResultTable.objects.filter(document=document))
        row = page.evaluate(FIRST_ROW)
        assert row["bottom"] <= 900, (document.slug, row)


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_a_phones_explorer_folds_its_filters_and_shows_rows_first(server, page, lang):
    open_page(page, server, "/explore/?engine=mysql&version=8.0", lang, 390)
    assert page.evaluate("() => document.getElementById('filters-fold').open") is False
    assert ("2 filters set" if lang == "en" else "已设 2 个筛选条件") in page.locator("#filters-fold > summary").inner_text()
    assert page.evaluate(FIRST_ROW)["bottom"] <= 844
    page.locator("#filters-fold > summary").click()
    assert page.locator("select[name=engine]").is_visible()
    open_page(page, server, "/explore/?engine=mysql&version=8.0", lang, 1280)  # a wide screen: open
    assert page.evaluate("() => document.getElementById('filters-fold').open") is True
    assert page.locator("select[name=engine]").is_visible()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_skip_link_lands_on_the_explorers_results(server, page, width):
    open_page(page, server, "/explore/?engine=mysql", "en", width)
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "results"
    # Between the results and the first row: the results' own links (CSV, editions, compare) and the sortable headers.
    headers = page.evaluate("() => document.querySelectorAll('table.explorer thead a').length")
    for stops in range(1, 45):
        page.keyboard.press("Tab")
        if page.evaluate("() => !!document.activeElement.closest('table.explorer tbody tr')"):
            break
    assert stops <= headers + 9, f"{stops} Tab stops from the results to the first row ({headers} sortable headers)"
