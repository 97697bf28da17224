"""Document pages take the reader to the table they came for (issue 49.7), in headless Chromium at 1280 x 800 and
390 x 844, in English and Chinese. A document opens with its summary, each engine version in it a link to that
version's first tables (the heading above them), and the contents of every table by its printed number, folded where
it is long (36 tables: 340 px at 1280 px, which put the 2023 document's first row at 899 px of an 800 px screen); on a
phone a group's tables come before its chart (the chart first put the first number 1,220-2,333 px down).
- At 1280 x 800 every document's first row is on the first screen.
- At both widths the summary's engine links are on the first screen and each lands with that version's first row on
  screen; so does each table link of the contents (unfolded if folded).
- Back returns to the top, Forward to the table, reload keeps it.
Read-only pages over the session's catalogue (see test_browser_pages)."""

import re

import pytest

from whitepaper.models import Document, PublishedResult, ResultTable

pytestmark = [pytest.mark.browser, pytest.mark.django_db]

LANGS = ["en", "zh-hans"]
SCREENS = {1280: 800, 390: 844}

# The first row of the first result table at or after the element the URL's fragment names, its box in the viewport.
LANDED = """() => {
  const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!target) return null;
  const table = [...document.querySelectorAll('.result-table')].find(t => t === target || t.contains(target)
    || (target.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING));
  const row = table.querySelector('tbody tr'), box = row.getBoundingClientRect();
  return {table: table.id, top: box.top, bottom: box.bottom, left: box.left, right: box.right,
          height: innerHeight, width: innerWidth, page: document.documentElement.scrollWidth};
}"""

FIRST_ROW = """() => { const b = document.querySelector('.result-table tbody tr').getBoundingClientRect();
  return {top: b.top + scrollY, bottom: b.bottom + scrollY}; }"""

ENGINE_LINKS = """() => [...document.querySelectorAll('.document-summary a.engine-link')].map(a => {
  const b = a.getBoundingClientRect(); return {text: a.textContent.trim(), href: a.getAttribute('href'), bottom: b.bottom + scrollY}; })"""


def open_page(page, server, path, lang, width):
    page.set_viewport_size({"width": width, "height": SCREENS[width]})
    page.goto(f"{server}{path}?lang={lang}")


def landed_on_screen(landed):
    return (landed is not None and 0 <= landed["top"] and landed["bottom"] <= landed["height"]
            and landed["left"] >= 0 and landed["right"] <= landed["width"] and landed["page"] <= landed["width"])


def first_tables_by_version(document):
    """{engine version as shown: anchor of the first table (in document order) printing it}."""
    first = {}
    for r in PublishedResult.objects.filter(table__document=document).select_related("engine_version__engine", "table") \
            .order_by("table__position", "pk"):
        first.setdefault(str(r.engine_version), r.table.anchor)
    return first


def test_the_summary_links_each_engine_version_to_the_heading_above_its_first_table(client):
    for document in Document.objects.all():
        html = client.get(f"{document.get_absolute_url()}?lang=en").content.decode()
        summary = html.split('<p class="document-summary">', 1)[1].split("</p>", 1)[0]
        links = re.findall(r'<a class="engine-link" href="#([^"]+)">([^<]+)</a>', summary)
        expected = first_tables_by_version(document)
        assert sorted(text for _, text in links) == sorted(expected), (document.slug, links)
        for target, text in links:
            after = html.split(f'id="{target}"', 1)[1]  # the heading; the next table below it is the version's first
            assert re.search(r'class="result-table" id="([^"]+)"', after).group(1) == expected[text], (document.slug, text)


@pytest.mark.parametrize("lang", LANGS)
def test_every_documents_first_row_is_on_a_1280_x_800_screen(server, page, lang):
    for document in Document.objects.order_by("slug"):
        open_page(page, server, document.get_absolute_url(), lang, 1280)
        row = page.evaluate(FIRST_ROW)
        assert row["bottom"] <= 800, (document.slug, row)


@pytest.mark.parametrize("width", SCREENS)
@pytest.mark.parametrize("lang", LANGS)
def test_each_engine_link_is_on_the_first_screen_and_lands_on_its_first_row(server, page, lang, width):
    for document in Document.objects.order_by("slug"):
        open_page(page, server, document.get_absolute_url(), lang, width)
        links = page.evaluate(ENGINE_LINKS)
        assert links and all(link["bottom"] <= SCREENS[width] for link in links), (document.slug, links)
        expected = first_tables_by_version(document)
        for link in links:
            page.evaluate("() => window.scrollTo(0, 0)")
            page.locator(f".document-summary a.engine-link[href='{link['href']}']").first.click()
            page.wait_for_function(f"() => location.hash === {link['href']!r}")
            landed = page.evaluate(LANDED)
            assert landed_on_screen(landed) and landed["table"] == expected[link["text"]], (document.slug, link, landed)


@pytest.mark.parametrize("width", SCREENS)
@pytest.mark.parametrize("lang", LANGS)
def test_the_contents_lists_every_table_and_each_link_lands_on_its_first_row(server, page, lang, width):
    for slug in ("huawei-2023-08-03-rds", "huawei-2025-10-21-mysql", "alibaba-2019-06-18-rds"):
        document = Document.objects.get(slug=slug)
        open_page(page, server, document.get_absolute_url(), lang, width)
        fold = page.locator(".toc summary")
        assert fold.bounding_box()["y"] + fold.bounding_box()["height"] <= SCREENS[width], slug
        if not page.evaluate("() => document.querySelector('.toc details').open"):
            fold.click()
        anchors = page.eval_on_selector_all(".toc a[href^='#table-']", "links => links.map(a => a.getAttribute('href'))")
        assert sorted(anchors) == sorted(f"#{t.anchor}" for t in ResultTable.objects.filter(document=document))
        for href in (anchors[0], anchors[len(anchors) // 2], anchors[-1]):
            page.evaluate("() => window.scrollTo(0, 0)")
            page.locator(f".toc a[href='{href}']").click()
            page.wait_for_function(f"() => location.hash === {href!r}")
            landed = page.evaluate(LANDED)
            assert landed_on_screen(landed) and f"#{landed['table']}" == href, (slug, href, landed)


@pytest.mark.parametrize("width", SCREENS)
@pytest.mark.parametrize("lang", LANGS)
def test_back_forward_and_reload_around_a_jump(server, page, lang, width):
    document = Document.objects.get(slug="huawei-2023-08-03-rds")
    open_page(page, server, document.get_absolute_url(), lang, width)
    link = page.locator(".document-summary a.engine-link", has_text="PostgreSQL 14")
    href = link.get_attribute("href")
    link.click()
    page.wait_for_function(f"() => location.hash === {href!r}")
    assert landed_on_screen(page.evaluate(LANDED))
    page.go_back()
    page.wait_for_function("() => location.hash === '' && window.scrollY === 0")
    page.go_forward()
    page.wait_for_function(f"() => location.hash === {href!r}")
    assert landed_on_screen(page.evaluate(LANDED))
    page.reload()
    page.wait_for_load_state("load")
    assert page.evaluate("() => location.hash") == href
    assert landed_on_screen(page.evaluate(LANDED))
