"""The run page as an operator sees it, in Chromium at 1280 and 390 px, for a real thread sweep
(sysbench against MariaDB, 2 steps of 2 s): chart first, one series per step, TPS on its own axis,
the best step named as the tool's own reports say, nothing wider than the screen, Back/Forward.
PERFDASH_SCREENSHOTS=1 also writes docs/screenshots/run-sweep-*.png."""

import os
import re
import time
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from runs.models import LogChunk, Run, RunState

from testbed.runs_support import (
    make_targets, make_user, wait_final,
)

pytestmark = pytest.mark.django_db(transaction=True)
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
        # A sweep reads as a sweep in the list: its best step's TPS, saying so and at which threads (issue 33.6).
        listed = page.locator(f"tr:has(a[href='/runs/{run.pk}/'])").inner_text()
        assert f"{max(reports):.2f}" in listed and f"best of sweep, at {best_threads} threads" in listed
        page.click(f"a[href='/runs/{run.pk}/']")
        page.wait_for_function(f"() => Number(document.getElementById('run-chart').dataset.samples) === {run.samples.count()}")
        assert page.inner_text("#best-step").startswith(f"Best step: {best_threads} threads.")
        assert_headline_in_view(page, width, f"{max(reports):.2f}", f"best of sweep, at {best_threads} threads")
        # The set-up shows the sweep, not the profile's single thread count beside it; the histogram is drawn.
        assert page.locator("#run-parameters tr[data-param='threads']").count() == 0
        page.wait_for_function("() => { const c = Chart.getChart('latency-histogram'); "
                               "return c && c.data.datasets[0].data.reduce((a, b) => a + b, 0) > 0; }")
        box = page.locator("#latency-histogram").bounding_box()
        assert box["height"] > 50 and box["width"] > 100, box
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
        # In Chinese: the same number, first on the screen too.
        page.goto(f"{live_server.url}/runs/{run.pk}/?lang=zh-hans")
        assert_headline_in_view(page, width, f"{max(reports):.2f}", f"扫描中的最佳一轮，{best_threads} 线程")
        context.close()


def assert_headline_in_view(page, width, tps, words):
    """The run's TPS (the tool's own final report, the best step's in a sweep) is on the first screen, above the
    charts, without scrolling sideways or down."""
    assert page.inner_text("#headline-tps") == tps
    assert words in page.inner_text("#run-headline")
    box = page.locator("#headline-tps").bounding_box()
    viewport = page.viewport_size
    assert 0 <= box["x"] and box["x"] + box["width"] <= width and box["y"] + box["height"] <= viewport["height"], box
    assert box["y"] < page.locator("#run-chart").bounding_box()["y"]


def _page_for(browser, live_server, staff, width=1280):
    client = Client()
    client.force_login(staff)
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    return context, context.new_page()


def _shot(page, name):
    if os.environ.get("PERFDASH_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


@pytest.mark.parametrize("profile,overrides,name", [
    ("pgbench-ro-quick", {"duration_s": 5, "threads": 2}, "run-single"),  # 10 client-seconds: every transaction logged
    ("sysbench-oltp-rw-postgresql-quick", {"duration_s": 5, "thread_sweep": [1, 2]}, "run-sweep-live"),
])
def test_run_page_live_and_finished_with_evidence(committed, worker, live_server, browser, profile, overrides, name):
    """Live: both charts fill while the tool runs (tool TPS beside server TPS, running threads, hit
    ratio, client CPU). Finished: latency per step and the evidence table, as the run's log says."""
    targets = make_targets()
    staff = make_user(f"insight-{name}", staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    response = api.post("/api/v1/runs/", {"target": targets["postgresql"].pk, "profile": profile, "overrides": overrides},
                        format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    context, page = _page_for(browser, live_server, staff)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    last_step = len(overrides.get("thread_sweep") or [1])
    page.wait_for_function(
        f"() => document.getElementById('run-state').textContent === 'running' && document.body.textContent.includes('step {last_step} of')"
        if last_step > 1 else "() => document.getElementById('run-state').textContent === 'running'", timeout=60_000)
    # Both charts drawing the step running now (the last one of a sweep) with a few points.
    page.wait_for_function(
        f"() => ['run-chart', 'evidence-chart'].every(id => Chart.getChart(id) && Chart.getChart(id).data.datasets"
        f".some(d => d.label.startsWith('#{last_step} ') && d.data.length >= 3))", timeout=60_000)
    live = page.evaluate("() => Chart.getChart('evidence-chart').data.datasets.filter(d => d.data.length).map(d => d.label)")
    assert any(label.endswith("server TPS") for label in live) and any(label.endswith("tool TPS") for label in live)
    assert any(label.endswith("client CPU (%)") for label in live) and any(label.endswith("running threads") for label in live)
    assert page.inner_text("#run-state") == "running"
    _shot(page, f"{name.replace('-live', '')}-live-1280.png")

    run = wait_final(run_id, timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    page.reload()
    page.wait_for_function(f"() => Number(document.getElementById('evidence-chart').dataset.samples) === {run.server_samples.count()}")
    rows = page.locator("#run-latency tbody tr[data-step]")
    assert rows.count() == last_step
    # The transactions of each step's latency row are the tool's own count in its final report.
    if run.profile.tool == "pgbench":
        counts = [int(x) for x in re.findall(r"^number of transactions actually processed:\s*(\d+)", run.log, re.MULTILINE)]
    else:
        counts = [int(x) for x in re.findall(r"^\s*total number of events:\s+(\d+)", run.log, re.MULTILINE)]
    assert [int(rows.nth(i).locator("td").nth(6).inner_text()) for i in range(rows.count())] == counts
    # Server-side TPS agrees with the tool's within 5 % on PostgreSQL (its counters are this database's).
    for i in range(last_step):
        agreement = float(page.locator("#run-evidence tbody tr").nth(i).locator("td.agreement").inner_text().rstrip(" %"))
        assert abs(agreement - 100) <= 5, (agreement, run.insight["steps"][i]["server"])
    assert page.evaluate(NO_OVERFLOW)
    assert (page.locator("#run-client-bound").count() == 1) == bool(run.client_bound)
    _shot(page, f"{name.replace('-live', '')}-finished-1280.png")
    context.close()
    context, page = _page_for(browser, live_server, staff, width=390)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    page.wait_for_function("() => Number(document.getElementById('evidence-chart').dataset.samples) > 0")
    assert page.evaluate(NO_OVERFLOW), page.evaluate("() => document.documentElement.scrollWidth")
    _shot(page, f"{name.replace('-live', '')}-finished-390.png")
    context.close()


def test_watching_a_live_run_costs_one_request_per_report_interval(committed, worker, live_server, browser):
    """Issue 39.4: a live run's page makes one request per report interval (the status, both charts' new samples
    and the log's new lines in one answer), an opened "Server settings" stays open, and the worker appends the log
    rather than rewriting it; once the run ends the log is one text again. A lost poll does not end the stream."""
    targets = make_targets()
    staff = make_user("live-watcher", staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    interval = 2
    response = api.post("/api/v1/runs/", {"target": targets["postgresql"].pk, "profile": "pgbench-ro-quick",
                                          "overrides": {"duration_s": 24, "threads": 2, "report_interval_s": interval}},
                        format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    context, page = _page_for(browser, live_server, staff)
    failed = []

    def fail_once(route):  # one poll lost (a server restarting): the stream goes on
        if failed:
            return route.continue_()
        failed.append(route.request.url)
        return route.abort()

    page.route("**/*part=live*", fail_once)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    page.wait_for_function("() => document.getElementById('run-state').textContent === 'running'"
                           " && Number(document.getElementById('run-chart').dataset.samples) >= 1", timeout=60_000)
    page.wait_for_selector("#run-settings-details")
    page.click("#run-settings-details summary")
    assert page.evaluate("() => document.getElementById('run-settings-details').open")

    assert failed, "no poll was lost"
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    start = time.monotonic()
    chunks_before = list(LogChunk.objects.filter(run_id=run_id).values_list("id", "text"))
    log_before = len(page.inner_text("#run-log"))
    x0 = page.evaluate("() => Math.max(...Chart.getChart('run-chart').data.datasets[0].data.map(p => p.x))")
    # Watch ten seconds of the run (by the tool's own clock on the chart).
    page.wait_for_function(f"() => Math.max(...Chart.getChart('run-chart').data.datasets[0].data.map(p => p.x)) >= {x0 + 10}",
                           timeout=60_000)
    seconds = time.monotonic() - start
    watched = list(requests)
    assert Run.objects.get(pk=run_id).state == RunState.RUNNING  # still live at the end of the window
    assert page.evaluate("() => document.getElementById('run-settings-details').open"), "the opened settings closed"
    assert all(f"/runs/{run_id}/?part=live" in url for url in watched), watched
    assert 3 <= len(watched) <= seconds // interval + 1, (len(watched), seconds, watched)
    # The log: new rows appended, the earlier ones untouched; the page appended the new lines to what it showed.
    chunks_after = list(LogChunk.objects.filter(run_id=run_id).values_list("id", "text"))
    assert chunks_after[:len(chunks_before)] == chunks_before and len(chunks_after) > len(chunks_before)
    assert Run.objects.get(pk=run_id).log == ""
    assert len(page.inner_text("#run-log")) > log_before

    run = wait_final(run_id, timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    assert "".join(t for _, t in chunks_after) in run.log + "\n" and not LogChunk.objects.filter(run_id=run_id).exists()
    page.wait_for_function("() => document.getElementById('run-status').dataset.final === 'true'")
    page.wait_for_selector("#summary-tps")
    assert page.inner_text("#summary-tps") == f"{run.summary['tps']:.2f}"
    assert page.evaluate("() => document.getElementById('run-settings-details').open")
    context.close()
