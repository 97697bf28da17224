"""Compare of single rows on a phone and their provenance (issue 49.6): each row links to its document and table;
at 390 px, in English and Chinese, each row's number and its difference are on screen (a card per row), nothing
scrolls sideways. Expected rows from the data files (huawei-2025-10-21-mysql.yaml, MySQL 8.0 dedicated 8 vCPU)."""

import re

import pytest

from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db


def two_rows():
    rows = list(PublishedResult.objects.filter(table__document__slug="huawei-2025-10-21-mysql", engine_version__version="8.0",
                                               flavor__family__slug="dedicated", flavor__vcpus=8).order_by("pk")[:2])
    assert len(rows) == 2
    return rows


def test_compare_rows_link_their_document_and_table(client):
    a, b = two_rows()
    html = client.get(f"/compare/?sel={a.pk}&sel={b.pk}&lang=en").content.decode()
    sources = re.findall(r'<td class="text source"[^>]*>(.*?)</td>', html, re.S)
    assert len(sources) == 2
    for row, source in zip((a, b), sources):
        assert f'href="/documents/huawei-2025-10-21-mysql/"' in source
        assert f'href="/documents/huawei-2025-10-21-mysql/#{row.table.anchor}"' in source


# Each row's number and difference cells: their right edge, and whether they are shown.
CELLS = """() => [...document.querySelectorAll('table.compare-table tbody tr')].map(tr => {
  const metric = tr.querySelector('td[data-col="metric"]').getBoundingClientRect();
  const diff = tr.querySelector('td.diff').getBoundingClientRect();
  return {metric: metric.right, diff: diff.right, shown: metric.width > 0 && diff.width > 0}; })"""


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_a_phone_sees_each_rows_number_and_difference(server, page, lang):
    a, b = two_rows()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{server}/compare/?sel={a.pk}&sel={b.pk}&lang={lang}")
    cells = page.evaluate(CELLS)
    assert len(cells) == 2 and all(c["shown"] and c["metric"] <= 390 and c["diff"] <= 390 for c in cells), cells
    box = page.evaluate("() => { const b = document.querySelector('table.compare-table').closest('.table-scroll'); "
                        "return [b.scrollWidth, b.clientWidth]; }")
    assert box[0] <= box[1] + 1, box
