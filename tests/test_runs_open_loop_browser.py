"""An open-loop run's and a capacity run's page in Chromium at 1280 and 390 px, English and Chinese: the headline
first on the screen, nothing wider than the screen. The figures are the recorded pgbench run's
(tests/test_runs_open_loop.py). PERFDASH_SCREENSHOTS=1 also writes docs/screenshots/run-open-loop-*.png."""

import os
from pathlib import Path

import pytest
from django.test import Client

from runs import capacity
from runs.models import Run, RunState

from testbed.runs_support import make_targets, make_user
from .test_runs_open_loop import recorded_open_loop_summary

pytestmark = pytest.mark.django_db(transaction=True)
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"
CAPACITY = {"rate_tps": 500, "capacity_bound_ms": 50, "capacity_factor": 8, "capacity_max_tps": 1_000_000}


def test_open_loop_and_capacity_pages_read_well_at_both_widths_in_both_languages(committed, live_server, browser):
    from runs.models import BenchmarkProfile

    target = make_targets()["postgresql"]
    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    staff = make_user("open-loop-page", staff=True)
    summary, stats = recorded_open_loop_summary()
    overrides = {"rate_tps": 500, "latency_limit_ms": 1}
    open_run = Run.objects.create(target=target, profile=profile, params=profile.resolve(overrides), overrides=overrides,
                                  requested_by=staff, state=RunState.SUCCEEDED, summary=summary,
                                  insight={"latency": stats, "steps": [{"step": 1, "threads": 2, "latency": stats}]})
    params = profile.resolve(CAPACITY)
    steps = [{"offered_tps": 500, "achieved_tps": 496.8, "p50_ms": 0.5, "p95_ms": 0.9, "p99_ms": 2.1, "late_pct": 0.0,
              "skipped_pct": 0.0, "passed": True, "reason": ""},
             {"offered_tps": 4000, "achieved_tps": 3900.1, "p50_ms": 9.0, "p95_ms": 61.2, "p99_ms": 90.0, "late_pct": 7.5,
              "skipped_pct": 1.2, "passed": False, "reason": "p95 61.2 ms above the bound of 50.0 ms"}]
    cap_run = Run.objects.create(target=target, profile=profile, params=params, overrides=CAPACITY, requested_by=staff,
                                 state=RunState.SUCCEEDED, summary={**summary, "capacity": capacity.result(params, steps)})
    client = Client()
    client.force_login(staff)
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
        page = context.new_page()
        for lang, words in (("en", ("offered", "open loop, offered 500 TPS", "Sustains 500 TPS at p95 ≤ 50.0 ms")),
                            ("zh-hans", ("施加", "开环，施加 500 TPS", "在 p95 ≤ 50.0 毫秒下可持续 500 TPS"))):
            # A finished run's page still asks its live part once, which swaps the status in: measure after it.
            page.goto(f"{live_server.url}/runs/{open_run.pk}/?lang={lang}", wait_until="networkidle")
            headline = page.locator("#run-headline")
            box = headline.bounding_box()
            assert box["y"] + box["height"] <= 900 and box["x"] + box["width"] <= width
            assert words[0] in headline.inner_text() and words[1] in headline.inner_text()
            assert page.evaluate(NO_OVERFLOW), (lang, width, page.evaluate("() => document.documentElement.scrollWidth"))
            if os.environ.get("PERFDASH_SCREENSHOTS"):
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / f"run-open-loop-{lang}-{width}.png"), full_page=True)
            page.goto(f"{live_server.url}/runs/{cap_run.pk}/?lang={lang}", wait_until="networkidle")
            assert words[2] in page.inner_text("#run-capacity")
            # The latency-vs-throughput chart: the passing step's p95 at its achieved rate, the failing one's apart,
            # p99 of both, the bound a line at 50 ms across the rates; log scale, p99 90 / p95 0.9 being 100x.
            drawn = page.evaluate("""() => { const c = Chart.getChart(document.getElementById('capacity-chart'));
                return {sets: c.data.datasets.map(d => d.data.map(p => [p.x, p.y])), scale: c.options.scales.y.type}; }""")
            assert drawn == {"sets": [[[496.8, 0.9]], [[3900.1, 61.2]], [[496.8, 2.1], [3900.1, 90.0]],
                                      [[496.8, 50], [3900.1, 50]]], "scale": "logarithmic"}
            chart = page.locator("#capacity-chart").bounding_box()
            assert chart["width"] > 0.5 * min(width, 1000) and chart["height"] > 150
            assert page.evaluate(NO_OVERFLOW), (lang, width, page.evaluate("() => document.documentElement.scrollWidth"))
            if os.environ.get("PERFDASH_SCREENSHOTS"):
                page.screenshot(path=str(SCREENSHOTS / f"run-capacity-{lang}-{width}.png"), full_page=True)
        context.close()
