"""The compare page's verdicts as a reader meets them (issue 46), in Chromium at 1280 and 390 px, in English and
Chinese: two interleaved series of five runs (blocks share a drift, the second set-up about 20 % faster in each)
and two single runs. Each series' mean TPS with n, its interval over the runs and cv, and the verdict word with its %
and interval are on screen without sideways scrolling; "make baseline" swaps the verdict, and Back, Forward and
reload keep the address and the page together. The runs are stored rows (the verdicts of real runs are
tests/test_runs_interleaved.py); the figures expected here are computed by hand from those rows' TPS.
PERFDASH_SCREENSHOTS=1 also writes docs/screenshots/runs-verdicts-*.png."""

import math
import os
import statistics
import uuid
from pathlib import Path

import pytest
from django.test import Client

from runs.models import RepeatGroup, Run, RunState

pytestmark = [pytest.mark.django_db(transaction=True)]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"
BASE = [1000.0, 1100.0, 950.0, 1050.0, 1020.0]  # the baseline's TPS in blocks 1-5
FACTORS = [1.21, 1.19, 1.20, 1.22, 1.18]  # the other set-up's TPS / the baseline's, block by block


def stored_series(target, profile):
    launch = uuid.uuid4().hex
    groups = [RepeatGroup.objects.create(count=5, launch=launch, position=i) for i in (0, 1)]
    for block, (tps, factor) in enumerate(zip(BASE, FACTORS), start=1):
        for group, value in zip(groups, (tps, tps * factor)):
            Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=RunState.SUCCEEDED,
                               repeat_group=group, repeat_index=block, block=block,
                               summary={"tps": value, "qps": value * 20, "threads": 2})
    return groups


def test_verdicts_on_the_compare_page_in_both_languages_and_widths(committed, live_server, browser):
    from .test_runs_trust import make_target
    from runs.models import BenchmarkProfile
    from testbed.runs_support import make_user

    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    target = make_target()
    base, other = stored_series(target, profile)
    # By hand: the geometric mean of the per-block ratios, +20.0 %; the baseline's mean and cv over its five runs.
    ratio = math.exp(statistics.fmean(math.log(f) for f in FACTORS))
    mean, cv = statistics.fmean(BASE), statistics.stdev(BASE) / statistics.fmean(BASE)
    singles = [Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=RunState.SUCCEEDED,
                                  summary={"tps": v, "qps": v * 20, "threads": 2}) for v in (1000.0, 1100.0)]

    client = Client()
    client.force_login(make_user("verdict-viewer", operator=True))
    shots = os.environ.get("PERFDASH_SCREENSHOTS") == "1"
    words = {"en": ("faster", "slower", "baseline", "n = 1: the spread between runs is unknown"),
             "zh-hans": ("更快", "更慢", "基准", "n = 1：运行之间的离散程度未知")}
    for width in (1280, 390):
        for lang, (faster, slower, baseline, single) in words.items():
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
            page = context.new_page()
            address = f"{live_server.url}/runs/compare/?group={base.pk}&group={other.pk}&lang={lang}"
            page.goto(address)
            verdict = page.locator(f"#compare-results tr[data-entry='group:{other.pk}'] td.tps-verdict")
            text = verdict.inner_text()
            assert faster in text and f"{100 * (ratio - 1):+.1f} %" in text, text
            box = verdict.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, (width, lang, box)
            tps = page.inner_text(f"#compare-results tr[data-entry='group:{base.pk}'] td.tps")
            assert f"{mean:,.2f}" in tps.replace("\u00a0", ",") or f"{mean:.2f}" in tps, tps
            assert "n = 5" in tps and f"{100 * cv:.1f} %" in tps, tps
            assert page.evaluate(NO_OVERFLOW), (width, lang)
            page.screenshot(path=f"/tmp/runs-verdicts-{width}-{lang}.png", full_page=False)
            if shots:
                page.screenshot(path=str(SCREENSHOTS / f"runs-verdicts-{width}-{lang}.png"), full_page=False)
            # The other series as the baseline: the verdict turns, the address says so; Back, Forward, reload.
            page.click(f"#compare-results tr[data-entry='group:{other.pk}'] a[href*='base=group']")
            page.wait_for_url(f"**base=group:{other.pk}**")
            assert slower in page.inner_text(f"#compare-results tr[data-entry='group:{base.pk}'] td.tps-verdict")
            assert baseline in page.inner_text(f"#compare-results tr[data-entry='group:{other.pk}'] td.tps-verdict")
            page.go_back()
            page.wait_for_url(address)
            assert faster in page.inner_text(f"#compare-results tr[data-entry='group:{other.pk}'] td.tps-verdict")
            page.go_forward()
            page.wait_for_url(f"**base=group:{other.pk}**")
            page.reload()
            assert slower in page.inner_text(f"#compare-results tr[data-entry='group:{base.pk}'] td.tps-verdict")
            # Two single runs: the % and "n = 1", no verdict word.
            page.goto(f"{live_server.url}/runs/compare/?run={singles[0].pk}&run={singles[1].pk}&base={singles[0].pk}&lang={lang}")
            cell = page.inner_text(f"#compare-results tr[data-run='{singles[1].pk}'] td.tps-verdict")
            assert "+10.0 %" in cell and single in cell and faster not in cell, cell
            assert page.evaluate(NO_OVERFLOW)
            context.close()
