"""One run from the browser: headless Chromium, the live server, a real Celery worker and sysbench
against MariaDB. Create the run with the form, watch samples arrive on the chart, see it succeed."""


import pytest
from django.test import Client

from runs.models import Run, RunState

from testbed.runs_support import (
    PASSWORD, make_targets, make_user,
)

HTMX_SETTLED = "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"
pytestmark = pytest.mark.django_db(transaction=True)


def test_create_a_run_watch_samples_arrive_and_see_it_succeed(committed, worker, live_server, page):
    targets = make_targets()
    staff = make_user("runs-browser", staff=True)
    client = Client()
    client.force_login(staff)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])

    page.goto(f"{live_server.url}/runs/new/")
    page.select_option("#id_target", str(targets["mysql"].pk))
    # Picking the target reloads the profile list (htmx) with the profiles of its engine only.
    page.wait_for_function("() => [...document.querySelectorAll('#id_profile option')].every(o => !o.text.includes('pgbench'))")
    page.wait_for_function(HTMX_SETTLED)  # the new select listens for changes only once htmx has settled it
    page.select_option("#id_profile", label="sysbench OLTP read-write, MySQL (Huawei whitepaper) — quick")
    # Picking the profile fills the parameters with its values (htmx): 1 table x 1000 rows, 3 s.
    page.wait_for_function("() => document.getElementById('id_tables').value === '1' && document.getElementById('id_duration_s').value === '3'")
    assert page.input_value("#id_rows_per_table") == "1000" and page.input_value("#id_thread_sweep") == ""
    page.fill("#id_duration_s", "4")
    page.click("#launch")
    page.wait_for_url(f"{live_server.url}/runs/*/")
    run = Run.objects.get()
    assert run.params["duration_s"] == 4 and run.requested_by == staff
    # Samples arrive on the chart while the run is running.
    try:
        page.wait_for_function("() => Number(document.getElementById('run-chart').dataset.samples || 0) > 0", timeout=60_000)
    except Exception:
        run.refresh_from_db()
        raise AssertionError(f"no samples on the chart: run {run.state} {run.reason!r}, {run.samples.count()} samples, "
                             f"page state {page.inner_text('#run-state')!r}; worker: {''.join(worker.output[-30:])}")
    page.wait_for_function("() => document.getElementById('run-status').dataset.final === 'true'", timeout=60_000)
    assert page.inner_text("#run-state") == "succeeded"
    run.refresh_from_db()
    assert run.state == RunState.SUCCEEDED
    page.wait_for_function(f"() => Number(document.getElementById('run-chart').dataset.samples) === {run.samples.count()}")
    assert page.inner_text("#summary-tps") == f"{run.summary['tps']:.2f}"
    # The status part, swapped in by htmx when the run ended, leads with the same TPS.
    assert page.inner_text("#run-status #headline-tps") == f"{run.summary['tps']:.2f}"
    assert PASSWORD not in page.content()
