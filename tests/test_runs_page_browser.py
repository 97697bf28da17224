"""The run page as an operator sees it, in Chromium at 1280 and 390 px, for a real thread sweep
(sysbench against MariaDB, 2 steps of 2 s): chart first, one series per step, TPS on its own axis,
the best step named as the tool's own reports say, nothing wider than the screen, Back/Forward.
PERFDASH_SCREENSHOTS=1 also writes docs/screenshots/run-sweep-*.png."""

import os
import re
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from runs.models import RunState

from .runs_support import (  # noqa: F401 - fixtures
    bench_users, committed, make_targets, make_user, restore_catalogue, wait_final, worker,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"


def test_sweep_run_page_reads_well_at_both_widths(committed, worker, live_server, browser):
    targets = make_targets()
    staff = make_user("runs-page", staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    response = api.post("/api/v1/runs/", {"target": targets["mysql"].pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                          "overrides": {"thread_sweep": [1, 2], "duration_s": 2}}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"])
    assert run.state == RunState.SUCCEEDED, run.reason
    # The best step by the tool's own final reports, read from the log (not from the summary).
    reports = [float(x) for x in re.findall(r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec\.\)", run.log, re.MULTILINE)]
    assert len(reports) == 2
    best_threads = [1, 2][reports.index(max(reports))]

    client = Client()
    client.force_login(staff)
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
        page = context.new_page()
        page.goto(f"{live_server.url}/runs/")
        page.click(f"a[href='/runs/{run.pk}/']")
        page.wait_for_function(f"() => Number(document.getElementById('run-chart').dataset.samples) === {run.samples.count()}")
        assert page.inner_text("#best-step").startswith(f"Best step: {best_threads} threads.")
        # One TPS, QPS and p95 series per step; TPS on its own axis.
        labels = page.evaluate("() => Chart.getChart('run-chart').data.datasets.map(d => [d.label, d.yAxisID, d.data.length])")
        assert [(label, axis) for label, axis, _ in labels] == [
            ("#1 (1 threads) TPS", "tps"), ("#1 (1 threads) QPS", "qps"), ("#1 (1 threads) p95 latency (ms)", "ms"),
            ("#2 (2 threads) TPS", "tps"), ("#2 (2 threads) QPS", "qps"), ("#2 (2 threads) p95 latency (ms)", "ms")]
        assert sum(n for label, _, n in labels if label.endswith("TPS")) == run.samples.count()
        # Chart first, then the set-up, summary and log; nothing wider than the screen (the log wraps).
        chart = page.locator("#run-chart").bounding_box()
        log = page.locator("#run-log").bounding_box()
        assert chart["y"] + chart["height"] <= log["y"]
        assert chart["x"] >= 0 and chart["x"] + chart["width"] <= width
        assert page.evaluate(NO_OVERFLOW), page.evaluate("() => document.documentElement.scrollWidth")
        assert page.locator("#run-parameters tr[data-param='thread_sweep'] td").inner_text().startswith("1, 2")
        if os.environ.get("PERFDASH_SCREENSHOTS"):
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"run-sweep-{width}.png"), full_page=True)
        # History: Back to the list, Forward to the run, reload: the same run page.
        page.go_back()
        page.wait_for_url(f"{live_server.url}/runs/")
        page.go_forward()
        page.wait_for_url(f"{live_server.url}/runs/{run.pk}/")
        page.reload()
        assert page.inner_text("#run-state") == "succeeded"
        context.close()
