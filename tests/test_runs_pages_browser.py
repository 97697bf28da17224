"""The runs pages at 1280 and 390 px in both languages (issue 23.9), in Chromium, on stored runs: the targets
table, the runs list and the compare page fit their column at 1280 px (name and engine in view at both widths);
the runs list has reason and duration columns and an "only mine" checkbox; every series of a run's charts has a
colour of its own (not only a dash), and a pgbench run's chart has no QPS axis (pgbench prints no QPS).
PERFDASH_SCREENSHOTS=1 writes docs/screenshots/runs-list-<width>[.zh-hans].png, runs-targets-*, runs-compare-stored-*
and runs-detail-* (the run page's charts, sysbench)."""

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from runs.models import BenchmarkProfile, Run, RunState, Sample, ServerSample, Target

from testbed.runs_support import PASSWORD, make_user
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db(transaction=True)
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"
# Per table box: the table's width against its box's, and where the first two header cells lie.
FITS = """sel => Array.from(document.querySelectorAll(sel)).map(box => {
  const table = box.querySelector('table'), cells = table.querySelectorAll('thead th, tbody tr:first-child td');
  const first = table.querySelector('tbody tr:first-child');
  return {table: table.scrollWidth, box: box.clientWidth, id: table.id || table.className,
          cells: first ? Array.from(first.children).slice(0, 3).map(c => [c.getBoundingClientRect().left, c.getBoundingClientRect().right]) : []};
})"""


def stored_world(user):
    seed_profiles_for_tests()
    profiles = {p.slug: p for p in BenchmarkProfile.objects.all()}
    targets = []
    for name, engine, port in (("staging-postgresql-16-primary", "postgresql", 5432), ("staging-mariadb-10-primary", "mysql", 3306),
                               ("analytics-replica-eu-west", "postgresql", 5433)):
        t = Target(name=name, engine=engine, host=f"{name}.db.internal.example.com", port=port, database="benchmark_db",
                   user="perfdash_bench", vcpus=16, memory_gb=64, server_version="PostgreSQL 16.4 (Debian 16.4-1.pgdg120+1) on x86_64-pc-linux-gnu"
                   if engine == "postgresql" else "10.11.19-MariaDB-0+deb12u1")
        t.set_password(PASSWORD)
        t.save()
        targets.append(t)
    now = timezone.now()

    def run(target, slug, state, tps=None, qps=None, reason="", seconds=63, by=user, **fields):
        profile = profiles[slug]
        r = Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=by, state=state,
                               reason=reason, started_at=now - timedelta(seconds=seconds + 5),
                               finished_at=now - timedelta(seconds=5) if state in (RunState.SUCCEEDED, RunState.FAILED) else None,
                               summary={"tps": tps, "qps": qps, "transactions": 1000, "threads": 2, "step": 1} if tps else {},
                               server_version=target.server_version, tool_version="16.4", **fields)
        for t in range(1, 6):
            Sample.objects.create(run=r, step=1, threads=2, t=t, tps=(tps or 0) + t, qps=qps and qps + 20 * t, latency_avg_ms=1.5,
                                  latency_p95_ms=2.5 if qps else None)
            ServerSample.objects.create(run=r, step=1, t=t, sampled_at=now, server_tps=(tps or 0) + t, running=3, buffer_hit_pct=99.5,
                                        client_cpu_pct=40.0)
        return r

    pg = run(targets[0], "pgbench-ro-quick", RunState.SUCCEEDED, tps=10543.21, seconds=4)
    pg2 = run(targets[0], "pgbench-ro-quick", RunState.SUCCEEDED, tps=10021.9, seconds=4, client_bound=True)
    sb = run(targets[1], "sysbench-oltp-rw-mysql-quick", RunState.SUCCEEDED, tps=812.35, qps=16247.0, seconds=3725)
    failed = run(targets[2], "pgbench-tpcb-quick", RunState.FAILED, seconds=2,
                 reason="Cannot connect to analytics-replica-eu-west.db.internal.example.com:5433: connection refused. "
                        "Is the server running on that host and accepting TCP/IP connections?")
    theirs = run(targets[1], "sysbench-oltp-rw-mysql-quick", RunState.SUCCEEDED, tps=790.5, qps=15810.0, seconds=3,
                 by=make_user("someone-else", operator=True))
    return {"targets": targets, "pg": pg, "pg2": pg2, "sb": sb, "failed": failed, "theirs": theirs}


def login(browser, live_server, user, width):
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    return context


def measure(page, width, where):
    assert page.evaluate(NO_OVERFLOW), f"{where} is wider than {width} px"
    boxes = page.evaluate(FITS, ".table-scroll")
    for box in boxes:
        if width == 1280:
            assert box["table"] <= box["box"], f"{where}: table {box['id']} is {box['table']} px in a {box['box']} px column"
        for left, right in box["cells"][:2]:  # the first columns (name, engine / state) are in view without scrolling
            assert 0 <= left and right <= width, f"{where}: a first column of {box['id']} lies at {left:.0f}-{right:.0f} px"
    return boxes


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_the_runs_pages_fit_at_1280_and_390_px(live_server, browser, lang):
    user = make_user("pages-browser", staff=True)
    world = stored_world(user)
    shots = os.environ.get("PERFDASH_SCREENSHOTS") == "1"
    suffix = "" if lang == "en" else ".zh-hans"
    for width in (1280, 390):
        context = login(browser, live_server, user, width)
        page = context.new_page()
        tag = f"-{width}"
        page.goto(f"{live_server.url}/runs/targets/?lang={lang}")
        measure(page, width, f"targets at {width} ({lang})")
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-targets{tag}{suffix}.png"), full_page=True)
        page.goto(f"{live_server.url}/runs/?lang={lang}")
        measure(page, width, f"runs list at {width} ({lang})")
        headers = page.locator(".runs-table thead th").all_inner_texts()
        assert ("Reason" in headers and "Duration" in headers) if lang == "en" else ("原因" in headers and "测试时长" in headers), headers
        row = lambda run: page.locator(f".runs-table tr:has(input[value='{run.pk}'])")  # noqa: E731
        assert "connection refused" in row(world["failed"]).locator("td.reason").inner_text()
        # Durations from the stored start and end: 4 s, 3,725 s = 1 h 2 min 5 s (shown to the minute), 2 s.
        durations = [row(world[k]).locator("td.duration").inner_text() for k in ("pg", "sb", "failed")]
        assert durations == (["4 s", "1 h 2 min", "2 s"] if lang == "en" else ["4 秒", "1 小时 2 分", "2 秒"]), durations
        # "only mine" is a checkbox named by its label, not a select reading "Unknown".
        mine = page.locator("input[name=mine]")
        assert mine.get_attribute("type") == "checkbox"
        assert page.locator("label[for=id_mine]").inner_text().strip(" :：") == ("only mine" if lang == "en" else "只看我的")
        assert "Unknown" not in page.inner_text("form.inline-form") and "未知" not in page.inner_text("form.inline-form")
        assert page.locator(".runs-table tbody tr input[name=run]").count() == 5
        mine.check()
        page.wait_for_url("**mine=on**")
        page.wait_for_function("() => document.querySelectorAll('.runs-table tbody tr input[name=run]').length === 4")
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-list{tag}{suffix}.png"), full_page=True)
        page.goto(f"{live_server.url}/runs/compare/?run={world['pg'].pk}&run={world['pg2'].pk}&run={world['sb'].pk}&lang={lang}")
        page.wait_for_function("() => window.Chart && Chart.getChart('compare-tps')")
        measure(page, width, f"compare at {width} ({lang})")
        if width == 1280:  # the client-bound badge and "make baseline" in view (before: cut off at 1,347 px)
            for selector in (f"#compare-results tr[data-run='{world['pg2'].pk}'] .warning", f"#compare-results tr[data-run='{world['sb'].pk}'] a[href*=base]"):
                box = page.locator(selector).bounding_box()
                assert box and box["x"] + box["width"] <= width, (selector, box)
        if shots:
            page.screenshot(path=str(SCREENSHOTS / f"runs-compare-stored{tag}{suffix}.png"), full_page=True)
        for key in ("pg", "sb"):
            page.goto(f"{live_server.url}/runs/{world[key].pk}/?lang={lang}")
            chart = page.wait_for_function("""() => { const c = window.Chart && Chart.getChart('run-chart'), e = Chart.getChart('evidence-chart');
                if (!c || !e || c.canvas.dataset.samples !== "5" || e.canvas.dataset.samples !== "5") return null;
                // each chart has redrawn: what has data is shown (the evidence chart redraws on a timer)
                if ([c, e].some(ch => ch.data.datasets.some(d => !!d.hidden === !!d.data.length))) return null;
                const shown = ch => ch.data.datasets.filter(d => !d.hidden).map(d => d.borderColor);
                return {key: document.title, run: shown(c), evidence: shown(e), qps: c.options.scales.qps.display, qpsDrawn: !!(c.scales.qps && c.scales.qps.width)}; }""").json_value()
            # Every series shown has a colour of its own (before: the step's one blue, told apart by dash only).
            assert len(chart["run"]) == len(set(chart["run"])) >= (3 if key == "sb" else 2), chart
            assert len(chart["evidence"]) == len(set(chart["evidence"])) >= 4, chart
            # pgbench prints no QPS: no empty QPS axis; sysbench's QPS has its axis.
            assert chart["qps"] is (key == "sb") and chart["qpsDrawn"] is (key == "sb"), chart
            measure(page, width, f"run {key} at {width} ({lang})")
            if shots and key == "sb":
                page.screenshot(path=str(SCREENSHOTS / f"runs-detail{tag}{suffix}.png"), full_page=False)
        context.close()
