"""Sizing with a latency bound (issue 35.5) in Chromium at 1280 and 390 px, English and Chinese: the answer from a
published capacity search with its bound, and the plain "no published figure states a latency" when there is none;
nothing wider than the screen. PERFDASH_SCREENSHOTS=1 also writes docs/screenshots/sizing-latency-*.png."""

import os
from pathlib import Path

import pytest

from runs import capacity, publish
from runs.models import BenchmarkProfile, Run, RunState

from testbed.runs_support import make_user
from .test_runs_trust import make_target

pytestmark = pytest.mark.django_db(transaction=True)
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"
SEARCH = {"rate_tps": 1000, "capacity_bound_ms": 20, "capacity_factor": 2, "capacity_max_tps": 100_000}


def test_sizing_with_a_latency_bound_reads_well_at_both_widths_in_both_languages(committed, live_server, browser):
    profile = BenchmarkProfile.objects.get(slug="pgbench-ro-quick")
    params = profile.resolve(SEARCH)
    steps = [{"offered_tps": 4000, "achieved_tps": 3996.0, "p50_ms": 0.5, "p95_ms": 3.1, "p99_ms": 6.0, "late_pct": 0.0,
              "skipped_pct": 0.0, "passed": True, "reason": ""},
             {"offered_tps": 8000, "achieved_tps": 6100.0, "p50_ms": 30.0, "p95_ms": 400.0, "p99_ms": 900.0, "late_pct": 40.0,
              "skipped_pct": 0.0, "passed": False, "reason": "p95 400.0 ms above the bound of 20.0 ms"}]
    run = Run.objects.create(target=make_target("pg-8", "postgresql", vcpus=8, memory_gb=32), profile=profile, params=params,
                             state=RunState.SUCCEEDED, server_version="15.10", tool_version="15.10",
                             summary={"tps": 6100.0, "threads": 2, "capacity": capacity.result(params, steps)})
    publish.publish_run(run.pk, user=make_user("sizing-latency", staff=True))
    for width in (1280, 390):
        page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
        for lang, found, none in (("en", "The smallest flavours sustaining 3000 TPS with p95 ≤ 50 ms", "Vendor whitepapers state no latency"),
                                  ("zh-hans", "3000 TPS", "厂商白皮书")):
            page.goto(f"{live_server.url}/sizing/?engine=postgresql&target=3000&latency_bound_ms=50&lang={lang}")
            assert found in page.inner_text("table.sizing caption")
            assert page.inner_text("[data-col=sustained_tps]") == "4000.00"
            assert page.inner_text("[data-col=latency_bound_ms]") == "20.00"
            assert page.evaluate(NO_OVERFLOW), (lang, width)
            if os.environ.get("PERFDASH_SCREENSHOTS"):
                page.screenshot(path=str(SCREENSHOTS / f"sizing-latency-{lang}-{width}.png"), full_page=True)
            page.goto(f"{live_server.url}/sizing/?engine=postgresql&target=3000&latency_bound_ms=10&lang={lang}")
            assert none in page.inner_text("#sizing-no-latency")
            assert page.evaluate(NO_OVERFLOW), (lang, width)
            if os.environ.get("PERFDASH_SCREENSHOTS"):
                page.screenshot(path=str(SCREENSHOTS / f"sizing-latency-none-{lang}-{width}.png"), full_page=True)
        page.context.close()
