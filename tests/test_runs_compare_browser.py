"""Compare, series and regressions as a new operator meets them, in Chromium at 1280 and 390 px, on real
pgbench runs against the machine's PostgreSQL: five normal runs (a regression is judged from five earlier results), one against a target slowed for the
test's role (index scans off, restored afterwards), one with another thread count, then a launch with
two repeats. In the runs list the user ticks two runs, presses Compare and reads what differs; the series
marks the regression and shows the repeat group's mean and standard deviation; the regressions page lists
the regression; a repeat's page shows its group. PERFDASH_SCREENSHOTS=1 writes
docs/screenshots/runs-compare-*.png, runs-series-*.png, runs-regressions-*.png and runs-repeat-*.png."""

import os
import statistics
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from runs.models import Run, RunState

from testbed.runs_support import (
    make_targets, make_user, wait_final,
)
from .test_runs_history import throttle

pytestmark = pytest.mark.django_db(transaction=True)
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"


def run(api, target, **overrides):
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": "pgbench-ro-quick",
                                          "overrides": {"duration_s": 3, **overrides}}, format="json")
    assert response.status_code == 201, response.content
    done = wait_final(response.json()["id"], timeout=180)
    assert done.state == RunState.SUCCEEDED, done.reason
    return done


def test_compare_series_and_regressions_in_a_browser(committed, worker, live_server, browser):
    target = make_targets()["postgresql"]
    staff = make_user("compare-browser", staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    normal = [run(api, target) for _ in range(5)]
    throttle(True)
    try:
        slowed = run(api, target)
    finally:
        throttle(False)
    other = run(api, target, threads=1)
    slowed.refresh_from_db()
    assert slowed.regression is True
    launched = api.post("/api/v1/runs/", {"target": target.pk, "profile": "pgbench-ro-quick", "overrides": {"duration_s": 3},
                                          "repeats": 2}, format="json").json()
    repeats = [wait_final(r.pk, timeout=180) for r in Run.objects.filter(repeat_group_id=launched["repeat_group"]["id"])
               .order_by("repeat_index")]
    assert [r.state for r in repeats] == [RunState.SUCCEEDED] * 2, [r.reason for r in repeats]
    mean = statistics.fmean(r.summary["tps"] for r in repeats)
    stdev = statistics.stdev(r.summary["tps"] for r in repeats)

    client = Client()
    client.force_login(staff)
    shots = os.environ.get("PERFDASH_SCREENSHOTS") == "1"
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
        page = context.new_page()
        page.goto(f"{live_server.url}/runs/")
        page.check(f"input[name=run][value='{normal[-1].pk}']")
        page.check(f"input[name=run][value='{slowed.pk}']")
        page.click("#compare-form button")
        page.wait_for_url(f"**/runs/compare/?run={slowed.pk}&run={normal[-1].pk}")
        # What differs: the server setting that slowed it, no parameter.
        rows = page.locator("#compare-differences tr[data-group]")
        groups = rows.evaluate_all("rs => rs.map(r => [r.dataset.group, r.dataset.aspect, r.innerText])")
        assert ("server_setting", "setting:enable_indexscan") in [(g, a) for g, a, _ in groups]
        assert not [a for g, a, _ in groups if g == "parameter"]
        text = page.inner_text("#compare-results")
        assert "baseline" in text
        page.wait_for_function("() => window.Chart && Chart.getChart('compare-tps') && Chart.getChart('compare-tps').data.datasets.length === 2")
        assert page.evaluate(NO_OVERFLOW)
        # Each run's TPS on screen without scrolling sideways (at 390 px a run is a card, TPS first).
        tps = page.locator("#compare-results td.tps").evaluate_all(
            "cs => cs.map(c => { const b = c.getBoundingClientRect(); return [b.left, b.right, c.innerText]; })")
        assert len(tps) == 2 and all(0 <= left and right <= width and text.strip() for left, right, text in tps), tps
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-compare-{width}.png"), full_page=True)
        # Series: the regression marked; the other thread count is its own set-up.
        page.goto(f"{live_server.url}/runs/{slowed.pk}/")
        page.click("#run-regression a:has-text('series')")
        page.wait_for_function("() => window.Chart && Chart.getChart('series-chart')")
        assert page.locator("#series-runs .regression").count() == 1
        assert page.locator("#series-groups tbody tr").count() == 2
        group_row = page.inner_text(f"#series-repeats tr[data-repeat-group='{repeats[0].repeat_group_id}']")
        assert f"{mean:.2f}" in group_row and f"{stdev:.2f}" in group_row and "2 / 2" in group_row
        assert page.evaluate(NO_OVERFLOW)
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-series-{width}.png"), full_page=True)
        page.click("nav.subnav a:has-text('Regressions')")
        assert page.locator("#regressions tbody tr[data-run]").evaluate_all("rs => rs.map(r => +r.dataset.run)") == [slowed.pk]
        assert page.evaluate(NO_OVERFLOW)
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-regressions-{width}.png"), full_page=True)
        # A repeat's page: its place in the group, the other run, their mean and standard deviation.
        page.goto(f"{live_server.url}/runs/{repeats[1].pk}/")
        section = page.inner_text("#run-repeats")
        assert f"#{repeats[0].pk}" in section and f"{mean:.2f}" in section and f"{stdev:.2f}" in section
        assert page.evaluate(NO_OVERFLOW)
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-repeat-{width}.png"), full_page=False)
        context.close()
    assert other.regression is None  # a set-up of its own: nothing earlier to judge it against
