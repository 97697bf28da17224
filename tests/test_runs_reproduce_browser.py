"""Reproduce, publish and retract as staff would, in Chromium, with a real worker and sysbench:
from a catalogue row's "reproduce" link to a finished run touching nothing but the target, publish it
(with the confirmation), see it only when asking for internal measurements, retract it.

The row reproduced is itself an internal measurement of a quick profile (1 table x 1000 rows, 3 s):
a vendor row's methodology (64 x 10M rows, 3600 s) cannot run inside a test. On PostgreSQL: its server counters
are the benchmark database's, one per test worker, so no other test's work makes a run here "see other load" (a
MariaDB server's counters are server-wide, and the other test worker may be running sysbench on it meanwhile)."""

import re
from urllib.parse import urljoin

import pytest
from django.test import Client
from rest_framework.test import APIClient

from runs.models import Run, RunState
from runs.publish import publish_run
from whitepaper.models import PublishedResult

from testbed.runs_support import (
    make_targets, make_user, wait_final,
)

pytestmark = pytest.mark.django_db(transaction=True)
HTMX_SETTLED = "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"


def explorer_rows(page, base, query):
    """Every row the explorer lists for the query, following its "Next" links (it shows 100 a page)."""
    page.goto(f"{base}/explore/?{query}")
    rows = []
    while True:
        rows += page.evaluate("() => [...document.querySelectorAll('tr[data-result]')].map(r => Number(r.dataset.result))")
        following = page.locator("a[rel=next]")
        if not following.count():
            return rows
        page.goto(urljoin(page.url, following.first.get_attribute("href")))


def test_reproduce_publish_see_with_internal_only_and_retract(committed, worker, live_server, page):
    targets = make_targets()
    staff = make_user("repro-staff", staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    # A first quick run, published: the catalogue row to reproduce.
    first = api.post("/api/v1/runs/", {"target": targets["postgresql"].pk, "profile": "sysbench-oltp-rw-postgresql-quick",
                                       "overrides": {"duration_s": 3}}, format="json").json()
    assert wait_final(first["id"]).state == RunState.SUCCEEDED
    row = publish_run(first["id"])

    client = Client()
    client.force_login(staff)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    base = live_server.url
    assert row.pk in explorer_rows(page, base, "include_internal=true&engine=postgresql")
    page.click(f"tr[data-result='{row.pk}'] a.reproduce")
    page.wait_for_url(re.compile(r".*/runs/new/\?reproduce=\d+"))
    assert page.input_value("#id_tables") == "1" and page.input_value("#id_rows_per_table") == "1000"
    assert page.input_value("#id_duration_s") == "3" and page.input_value("#id_thread_sweep") == ""
    page.select_option("#id_target", str(targets["postgresql"].pk))  # the only thing touched
    page.wait_for_function(HTMX_SETTLED)
    assert page.input_value("#id_tables") == "1" and page.input_value("#id_duration_s") == "3"
    page.click("#launch")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    run = Run.objects.exclude(pk=first["id"]).get()
    assert run.reproduces_id == row.pk and run.params["tables"] == 1 and run.params["duration_s"] == 3
    page.wait_for_function("() => document.getElementById('run-status').dataset.final === 'true'", timeout=90_000)
    assert page.inner_text("#run-state") == "succeeded", Run.objects.get(pk=run.pk).reason
    page.reload()
    assert page.locator("#faithful").is_visible()  # same set-up as the row: like with like

    page.click("#publish")
    page.wait_for_url(f"{base}/runs/{run.pk}/publish/")
    assert Run.objects.get(pk=run.pk).published_result is None  # only asked, not done
    page.click("#confirm-publish")
    page.wait_for_url(f"{base}/runs/{run.pk}/")
    published = Run.objects.get(pk=run.pk).published_result
    assert published is not None and page.locator("#run-published").is_visible()

    # Customers see vendor numbers only unless they ask for internal measurements; then it is labelled.
    assert published.pk not in explorer_rows(page, base, "engine=postgresql")
    assert published.pk in explorer_rows(page, base, "engine=postgresql&include_internal=true")
    assert "Internal measurement" in page.inner_text(f"tr[data-result='{published.pk}']")
    anonymous = APIClient()
    assert published.pk not in [r["id"] for r in anonymous.get("/api/v1/results/?engine=postgresql&page_size=500").json()["results"]]
    with_internal = anonymous.get("/api/v1/results/?engine=postgresql&include_internal=true&page_size=500").json()["results"]
    assert published.pk in [r["id"] for r in with_internal]

    page.goto(f"{base}/runs/{run.pk}/")
    page.click("#retract")
    page.fill("textarea[name=reason]", "Smoke-sized run, not a capacity figure")
    page.click("#confirm-retract")
    page.wait_for_url(f"{base}/runs/{run.pk}/")
    assert "Smoke-sized run, not a capacity figure" in page.inner_text("#run-retracted")
    assert not PublishedResult.objects.filter(pk=published.pk).exists()
    assert published.pk not in explorer_rows(page, base, "engine=postgresql&include_internal=true")
