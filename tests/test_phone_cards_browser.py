"""Phone cards never break a token mid-way (issue 49.12), in headless Chromium at 390 x 844 in English and Chinese:
a cell holding a token longer than a third of the card (Alibaba's capacity 15,000,000,000 rows, spec codes such as
rds.ppas.st.h43, SQL Server's "primary/standby") takes the card's width, and every token of every card lies on one
line. Before: "15,000,000,00 / 0", "rds.ppas.st.h4 / 3", "primary/stan / dby". Read-only pages over the session's
catalogue (see test_browser_pages)."""

import pytest

from whitepaper.models import Flavor

pytestmark = pytest.mark.django_db

# Every token of the visible card cells (a run of characters without a space or a CJK character, between which lines
# may break; a hyphenated word's parts) that spans more than one line box.
BROKEN_TOKENS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('.cards-narrow > table tbody td, .cards-narrow > table tbody th')) {
    if (!cell.offsetParent) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /[^\\s\\u3000-\\u9fff\\uff00-\\uffef]+/g; let m;
      while ((m = re.exec(node.data))) {
        let at = m.index;
        for (const piece of m[0].split(/(?<=[A-Za-z]-)/)) {  // a hyphenated word may break after its hyphen
          const range = document.createRange();
          range.setStart(node, at); range.setEnd(node, at + piece.length);
          at += piece.length;
          const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
          if (tops.size > 1) broken.push(piece);
        }
      }
    }
  }
  return broken;
}"""


def pages():
    ppas = Flavor.objects.get(spec_code="rds.ppas.st.h43")
    return ["/documents/alibaba-2019-06-18-rds/", "/documents/huawei-2018-12-11-rds/", "/documents/huawei-2023-08-03-rds/",
            f"/flavors/{ppas.pk}/", "/sizing/?engine=sqlserver&metric=tps&target=1000",
            "/sizing/?engine=ppas&metric=ro_qps&target=100000"]


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_no_token_of_a_phone_card_breaks_mid_way(server, page, lang):
    page.set_viewport_size({"width": 390, "height": 844})
    found = {}
    for path in pages():
        page.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")
        broken = page.evaluate(BROKEN_TOKENS)
        if broken:
            found[path] = sorted(set(broken))[:8]
    assert not found, found
