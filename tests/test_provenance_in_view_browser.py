"""Provenance in view at 1280 px (issue 49.8), in headless Chromium in English and Chinese: a flavour page's table
shows its Edition, Table and Methodology columns without scrolling sideways, and the SQL Server sizing answer its
Source column (each table's box scrolls no wider than it is: every column on screen). Read-only pages over the
session's catalogue (see test_browser_pages)."""

import pytest

from whitepaper.models import Flavor, PublishedResult

pytestmark = pytest.mark.django_db

# [(the table's first header cells, scroll width, box width)] of every table box on the page.
BOXES = """() => [...document.querySelectorAll('.table-scroll')].filter(b => b.offsetParent).map(b => ({
  headers: [...b.querySelectorAll('thead th')].map(th => th.innerText.trim()).slice(-4),
  scroll: b.scrollWidth, width: b.clientWidth}))"""


def pages():
    pg12 = PublishedResult.objects.filter(table__document__slug="huawei-2023-08-03-rds", engine_version__version="12",
                                          flavor__family__slug="dedicated", flavor__vcpus=64, flavor__memory_gb=256).first()
    sqlserver = PublishedResult.objects.filter(engine_version__engine__slug="sqlserver").order_by("pk").first()
    ppas = Flavor.objects.get(spec_code="ppas.x8.2xlarge.2")
    return [f"/flavors/{pg12.flavor_id}/", f"/flavors/{sqlserver.flavor_id}/", f"/flavors/{ppas.pk}/",
            "/sizing/?engine=sqlserver&metric=tps&target=1000", "/sizing/?engine=sqlserver&metric=tpm&target=100000"]


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_flavour_and_sizing_tables_show_their_provenance_columns_at_1280(server, page, lang):
    page.set_viewport_size({"width": 1280, "height": 900})
    cut = {}
    for path in pages():
        page.goto(f"{server}{path}{'&' if '?' in path else '?'}lang={lang}")
        boxes = page.evaluate(BOXES)
        assert boxes, path
        wide = [b for b in boxes if b["scroll"] > b["width"] + 1]
        if wide:
            cut[path] = wide
    assert not cut, cut
