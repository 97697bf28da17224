"""The screenshots of docs/screenshots/, written by `scripts/screenshots.sh` (not part of the suite: they assert
nothing; pytest.ini collects test_*.py only). The pages come from the suite's own fixtures (conftest.py: the
session's catalogue server and a headless Chromium page); the runs pages' screenshots are written by their browser
tests when PERFDASH_SCREENSHOTS=1, which the script sets."""

from pathlib import Path

import pytest

from whitepaper.models import PublishedResult

from .test_browser_pages import MYSQL_2025, wait_for_charts
from .test_numbers_in_view_browser import COMPARE, COMPARE_LINES, SIZING, SIZING_PPAS, open_page

pytestmark = pytest.mark.django_db  # so the test database is set up

SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


def test_screenshots_of_the_main_pages(server, page):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pages = {
        "home": "/",
        "document": f"/documents/{MYSQL_2025}/#table-6",
        "engine-version": "/engines/mysql/5.7/",
        "explorer": "/explore/?engine=mysql&version=8.0&sort=-tps",
        "compare": "/compare/?sel=engine%3Dmysql%26version%3D5.7%26family%3Ddedicated%26memory_ratio%3D1%3A4%26document%3Dhuawei-2023-08-03-rds"
                   "&sel=engine%3Dmysql%26version%3D8.0%26family%3Ddedicated%26memory_ratio%3D1%3A4%26document%3Dhuawei-2023-08-03-rds",
        "sizing": "/sizing/?engine=mysql&version=8.0&metric=tps&target=3000",
        "edition-diff": "/editions/huawei-2023-08-03-rds/huawei-2025-10-21-postgresql/",
        "document-contents": "/documents/huawei-2023-08-03-rds/",
        "explorer-qps": "/explore/?engine=mysql&version=5.7&cols=vendor&cols=document&cols=family&cols=memory_ratio"
                        "&cols=flavor&cols=vcpus&cols=memory_gb&cols=tps&cols=qps&cols=qps_normalised",
        # issue 49: an older edition's table saying what the newer one prints, a text search, sizing's data sizes,
        # a flavour page by its readable address, Alibaba's tables as phone cards
        "document-superseded": "/documents/huawei-2023-08-03-rds/#table-20",
        "explorer-search": "/explore/?q=Kunpeng&latest=false",
        "sizing-data-sizes": "/sizing/?engine=mysql&version=5.7&metric=tps&target=4000",
        "flavor": "/flavors/alibaba/rds.ppas.st.h43/",
        "document-alibaba": "/documents/alibaba-2019-06-18-rds/#table-3",
        # issue 49.6-49.8: compare of single rows (bars named under them, a card per row on a phone), a document's
        # engine link landing on its tables, a flavour's and a sizing answer's provenance columns
        "compare-rows": "/compare/?" + "&".join(f"sel={r.pk}" for r in PublishedResult.objects.filter(
            table__document__slug=MYSQL_2025, engine_version__version="8.0", flavor__family__slug="dedicated",
            flavor__vcpus=8).order_by("pk")[:2]),
        "document-engine-link": "/documents/huawei-2023-08-03-rds/#table-26-heading",
        "flavor-ppas": "/flavors/alibaba/ppas.x8.2xlarge.2/",
        "sizing-sqlserver": "/sizing/?engine=sqlserver&metric=tps&target=1000",
    }
    # home.png, home.zh-hans.png (1280 px wide) ... and home.390.png, home.390.zh-hans.png (a phone).
    for width, size in ((1280, ""), (390, ".390")):
        page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
        for lang, suffix in (("en", ""), ("zh-hans", ".zh-hans")):
            for name, path in pages.items():
                url, _, fragment = path.partition("#")
                page.goto(f"{server}{url}{'&' if '?' in url else '?'}lang={lang}{'#' + fragment if fragment else ''}")
                wait_for_charts(page)
                page.screenshot(path=str(SCREENSHOTS / f"{name}{size}{suffix}.png"))


def test_screenshots_of_the_answers(server, page):
    shots = {"sqlserver-chart": "/engines/sqlserver/2014/", "explorer-default": "/explore/"}
    for width, size in ((1280, ""), (390, ".390")):
        page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
        for lang, suffix in (("en", ""), ("zh-hans", ".zh-hans")):
            for name, path in shots.items():
                open_page(page, server, path, lang)
                page.screenshot(path=str(SCREENSHOTS / f"{name}{size}{suffix}.png"))
            # the answers themselves, below the forms: explorer rows, the compare chart with its legend and table, sizing
            open_page(page, server, "/explore/", lang)
            page.locator("#results .table-scroll").screenshot(path=str(SCREENSHOTS / f"explorer-rows{size}{suffix}.png"))
            open_page(page, server, COMPARE, lang)
            page.locator("figure[data-chart]").screenshot(path=str(SCREENSHOTS / f"compare-chart{size}{suffix}.png"))
            page.locator(".compare-table").screenshot(path=str(SCREENSHOTS / f"compare-table{size}{suffix}.png"))
            open_page(page, server, SIZING, lang)
            page.locator("table.sizing").screenshot(path=str(SCREENSHOTS / f"sizing-answer{size}{suffix}.png"))
            open_page(page, server, SIZING_PPAS, lang)
            page.locator("table.sizing").screenshot(path=str(SCREENSHOTS / f"sizing-ppas-ro-qps{size}{suffix}.png"))
            open_page(page, server, COMPARE_LINES, lang)
            page.locator("figure[data-chart]").screenshot(path=str(SCREENSHOTS / f"compare-lines-chart{size}{suffix}.png"))
            page.locator(".compare-table").screenshot(path=str(SCREENSHOTS / f"compare-lines-table{size}{suffix}.png"))
            open_page(page, server, "/engines/postgresql/12/", lang)
            page.screenshot(path=str(SCREENSHOTS / f"engine-newest{size}{suffix}.png"))
