"""A campaign's edition in Chromium (issue 47.4-5), at 1280 and 390 px in both languages: the review page (the
drafted table with each row's n and interval, the diff against the previous edition of the series, the reference
document's printed TPS beside ours) and, once published from the page, the edition's document page with its
internal label; Back, Forward and reload keep each page right. TPS is on screen without sideways scrolling.
PERFDASH_SCREENSHOTS=1 (scripts/screenshots.sh) writes docs/screenshots/campaign-edition-<width>[.zh-hans].png and
campaign-edition-document-390[.zh-hans].png."""

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from runs.campaign_edition import draft_edition
from runs.models import BenchmarkProfile, Target
from testbed.runs_support import make_targets, make_user, seed_profiles_for_tests
from whitepaper.models import Document

from .test_campaign_edition import measured_campaign
from .test_campaigns import sized_mysql
from .test_runs_pages_browser import NO_OVERFLOW, login

pytestmark = pytest.mark.django_db(transaction=True)
REFERENCE = "huawei-2025-10-21-mysql"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


def unconsumed(targets):
    """The targets on a queue no worker consumes: this module's runs are ended by the test through the worker's own
    actions (committed, their messages are sent: the session's worker, when an earlier test started it, would take
    them first)."""
    Target.objects.filter(pk__in=[t.pk for t in targets]).update(queue="campaign-browser-tests")
    return [Target.objects.get(pk=t.pk) for t in targets]


def edition_world():
    """A series with an edition published a month ago and a new campaign drafted today, referring to a vendor's
    MySQL edition."""
    seed_profiles_for_tests()
    profiles = {p.slug: p for p in BenchmarkProfile.objects.all()}
    targets = unconsumed([make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8), sized_mysql("mysql-8-16", 8, 16)])
    staff = make_user("edition-browser-staff", staff=True)
    old = measured_campaign(profiles, targets, [[470.0, 472.0, 468.0], [760.0, 770.0, 765.0], [1700.0, 1710.0, 1705.0]])
    draft_edition(old, staff, day=timezone.localdate() - timedelta(days=30))
    from runs.campaign_edition import publish_edition

    publish_edition(old, staff)
    new = measured_campaign(profiles, targets, [[471.0, 473.0, 469.5], [900.0, 905.0, 910.0], [1700.0, 1710.0, 1705.0]])
    new.reference = Document.objects.get(slug=REFERENCE)
    new.save(update_fields=["reference"])
    draft_edition(new, staff)
    return staff, new


def tps_in_view(page, selector, width):
    """Every TPS cell of `selector` lies within the viewport's width (no sideways scrolling to read it)."""
    boxes = page.eval_on_selector_all(selector, "cells => cells.map(c => c.getBoundingClientRect().right)")
    assert boxes and all(right <= width for right in boxes), (selector, boxes, width)


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_review_page_and_the_published_edition_read_well_at_1280_and_390_px(live_server, browser, lang):
    staff, campaign = edition_world()
    shots, suffix = os.environ.get("PERFDASH_SCREENSHOTS") == "1", "" if lang == "en" else ".zh-hans"
    review = f"{live_server.url}/runs/campaigns/{campaign.pk}/edition/?lang={lang}"
    for width in (1280, 390):
        context = login(browser, live_server, staff, width)
        page = context.new_page()
        page.goto(review)
        assert page.evaluate(NO_OVERFLOW), f"the review page is wider than {width} px"
        tps_in_view(page, ".edition-rows td.tps", width)
        assert page.locator(".edition-rows td.tps").all_inner_texts() == ["471.17", "905.00", "1705.00"]
        assert page.locator(".edition-rows td.n").all_inner_texts() == ["3", "3", "3"]
        verdicts = page.eval_on_selector_all("#edition-previous li", "li => li.map(l => [l.dataset.status, l.dataset.change])")
        assert verdicts == [["changed", "false"], ["changed", "true"], ["same", "false"]], verdicts
        printed = page.locator("#edition-reference .printed").all_inner_texts()
        # One row each: the targets' family (general), and MariaDB is no MySQL version the document prints, so its
        # newest, 8.0 (table 4-1): 434, 1363, 2014, as printed; the engine and version named as differing.
        assert printed == ["434", "1363", "2014"], printed
        tps_in_view(page, "#edition-reference .ours", width)
        keys = page.eval_on_selector_all("#edition-reference article:first-of-type li", "li => li.map(l => l.dataset.key)")
        assert {"engine", "major_version"} <= set(keys), keys
        heading = page.locator("#edition-previous h2").inner_text()
        assert heading == ("Against the previous edition of the series" if lang == "en" else "与本系列上一版本对比")
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"campaign-edition-{width}{suffix}.png"), full_page=True)
        context.close()

    # Published from the page (the box ticked), then its document page; Back, Forward and reload.
    context = login(browser, live_server, staff, 390)
    page = context.new_page()
    page.goto(review)
    page.check("#edition-publish input[name=confirm]")
    page.click("#edition-publish button")
    page.wait_for_selector("#edition-published a")
    page.click("#edition-published a")
    page.wait_for_selector("table")
    document_url = page.url
    assert "/documents/internal-" in document_url
    assert page.evaluate(NO_OVERFLOW), "the edition's page is wider than 390 px"
    label = "Internal measurement" if lang == "en" else "内部测量"
    assert label in page.inner_text("main")
    if shots:
        page.screenshot(path=str(SCREENSHOTS / f"campaign-edition-document-390{suffix}.png"))
    page.go_back()
    page.wait_for_selector("#edition-published")
    assert "/edition/" in page.url
    page.go_forward()
    page.wait_for_url(document_url)
    page.reload()
    assert label in page.inner_text("main") and "905.00" in page.inner_text("main")
    context.close()


def campaign_all_but_one_run():
    """A campaign over three sizes, 2 rounds, every run succeeded but the last one queued: its page is live."""
    from runs import actions
    from runs.campaigns import launch_campaign
    from runs.models import Run

    seed_profiles_for_tests()
    operator = make_user("campaign-browser-op", operator=True)
    targets = unconsumed([make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8), sized_mysql("mysql-8-16", 8, 16)])
    campaign = launch_campaign(name="Live matrix", profile=BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick"),
                               overrides={}, targets=targets, user=operator, repeats=2)
    runs = list(Run.objects.filter(repeat_group__campaign_cell__campaign=campaign).order_by("pk"))
    for i, run in enumerate(runs[:-1]):
        assert actions.claim(run, "w", 1, "h", 2) and actions.start_measuring(run) and actions.start_cleanup(run)
        assert actions.succeed(run, {"tps": 100.0 * run.target.vcpus + i, "qps": 2000.0 * run.target.vcpus})
    return operator, campaign, runs[-1], targets


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_campaign_page_fills_in_live_at_1280_and_390_px(live_server, browser, lang):
    from runs import actions

    operator, campaign, last, targets = campaign_all_but_one_run()
    # Rounds run the cells in a shuffled order: the cell still waiting is the last run's target's.
    waiting = ["1 / 2" if t.pk == last.target_id else "2 / 2" for t in targets]
    url = f"{live_server.url}/runs/campaigns/{campaign.pk}/?lang={lang}"
    chart_points = ("() => { const c = window.Chart && Chart.getChart('campaign-chart');"
                    " return c ? c.data.datasets.reduce((n, d) => n + d.data.length, 0) : null; }")
    for width in (1280, 390):
        context = login(browser, live_server, operator, width)
        page = context.new_page()
        page.goto(url)
        live = width == 1280  # first at 1280 px while its last run waits; at 390 px once it has finished
        assert page.locator("#campaign-live").get_attribute("data-state") == ("running" if live else "finished")
        assert page.evaluate(NO_OVERFLOW), f"the campaign page is wider than {width} px"
        tps_in_view(page, "#campaign-series td.mean", width)
        assert page.locator("#campaign-series td.n").all_inner_texts() == (waiting if live else ["2 / 2"] * 3)
        page.wait_for_function(f"() => ({chart_points})() === 3")
        if live:
            # The last run ends while the page is open: its next poll shows the campaign finished, every cell 2 of 2.
            assert actions.claim(last, "w", 1, "h", 2) and actions.start_measuring(last) and actions.start_cleanup(last)
            assert actions.succeed(last, {"tps": 100.0 * last.target.vcpus + 5, "qps": 2000.0 * last.target.vcpus})
            page.wait_for_function("() => document.querySelector('#campaign-live').dataset.state === 'finished'",
                                   timeout=15000)
            assert page.locator("#campaign-series td.n").all_inner_texts() == ["2 / 2"] * 3
            page.wait_for_function(f"() => ({chart_points})() === 3")
            finished = "finished" if lang == "en" else "已完成"
            assert page.locator(".campaign-state strong").inner_text() == finished
        if os.environ.get("PERFDASH_SCREENSHOTS") == "1":
            page.screenshot(path=str(SCREENSHOTS / f"campaign-{width}{'' if lang == 'en' else '.zh-hans'}.png"), full_page=True)
        # A round's run, then Back, Forward and reload.
        page.click("#campaign-matrix tbody tr:first-child td.run a")
        page.wait_for_url("**/runs/*/")
        run_url = page.url
        page.go_back()
        page.wait_for_selector("#campaign-live[data-state=finished]")
        page.go_forward()
        page.wait_for_url(run_url)
        page.go_back()
        page.reload()
        assert page.locator("#campaign-live").get_attribute("data-state") == "finished"
        context.close()
