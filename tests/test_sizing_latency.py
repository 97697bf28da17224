"""Issue 35.5: a capacity search publishes as its own metric (sustained_tps, its p95 bound stored), never as TPS,
and sizing with a latency bound answers from those figures only, saying so when there are none."""

import csv
import io
import re

import pytest
from rest_framework.test import APIClient

from runs import capacity
from runs.models import Run, RunState
from whitepaper.models import PublishedResult

from .test_runs_trust import make_target

PROFILE = "pgbench-ro-quick"
SEARCH = {"rate_tps": 1000, "capacity_bound_ms": 50.0, "capacity_factor": 2.0, "capacity_max_tps": 100_000, "duration_s": 10}


def step(offered, passed, p95=2.0):
    return {"offered_tps": offered, "achieved_tps": offered * 0.999 if passed else offered * 0.7, "p50_ms": 0.5,
            "p95_ms": p95 if passed else 900.0, "p99_ms": 4.0, "late_pct": 0.0, "skipped_pct": 0.0, "lag_grows": not passed,
            "passed": passed, "reason": "" if passed else "the schedule lag grew: the server fell behind the offered rate"}


def capacity_run(profiles, target, steps, bound=50.0):
    params = profiles[PROFILE].resolve({**SEARCH, "capacity_bound_ms": bound})
    found = capacity.result(params, steps)
    # the summary's tps is the last step's achieved rate, as the engine leaves it: never what is published
    return Run.objects.create(target=target, profile=profiles[PROFILE], params=params, state=RunState.SUCCEEDED,
                              server_version="15.10", tool_version="15.10",
                              summary={"tps": steps[-1]["achieved_tps"], "qps": steps[-1]["achieved_tps"], "threads": 2,
                                       "capacity": found})


def publish(client, run):
    response = client.post(f"/runs/{run.pk}/publish/")
    assert response.status_code == 302, response.content
    return Run.objects.get(pk=run.pk).published_result


@pytest.mark.django_db
def test_a_capacity_search_publishes_its_sustained_rate_and_bound_never_as_tps(client, staff_user, profiles):
    target = make_target("pg-cap", "postgresql", vcpus=4, memory_gb=16)
    run = capacity_run(profiles, target, [step(1000, True), step(2000, True), step(4000, False), step(3000, True, p95=7.5),
                                          step(3500, False)])
    client.force_login(staff_user)
    row = publish(client, run)
    assert row.tps is None and row.qps is None  # not the 3500 x 0.7 = 2450 the summary's last step achieved
    assert str(row.sustained_tps) == "3000.00" and str(row.latency_bound_ms) == "50.00"
    assert row.is_internal and "capacity at p95 ≤ 50.0 ms (open-loop)" in row.table.label
    assert row.table.columns == ["flavor", "vcpus", "memory_gb", "sustained_tps"]
    assert row.table.methodology.parameters["loop"] == "open-loop capacity search"
    assert row.measurement["capacity"] == {"bound_ms": 50.0, "budget_pct": 1.0, "sustained_achieved_tps": 2997.0,
                                           "sustained_p95_ms": 7.5, "failed_tps": 3500, "failed_p95_ms": 900.0,
                                           "failed_reason": "the schedule lag grew: the server fell behind the offered rate",
                                           "steps": 5}
    page = client.get(row.table.document.get_absolute_url()).content.decode()
    assert ("open-loop capacity search: p95 7.5 ms at the sustained rate, bound 50.0 ms; failed at 3500: the schedule "
            "lag grew") in page
    record = APIClient().get(f"/runs/{run.pk}/record/").content.decode()  # public: anyone may read it
    assert "Sustains 3000.00 TPS at p95 ≤ 50.0 ms" in record and 'id="record-tps"' not in record
    api = APIClient().get(f"/api/v1/results/{row.pk}/").json()
    assert (api["tps"], api["sustained_tps"], api["latency_bound_ms"], api["printed"]["sustained_tps"]) == (
        None, 3000.0, 50.0, "3000.00")
    exported = APIClient().get("/api/v1/results/?format=csv&include_internal=true&engine=postgresql")
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode("utf-8-sig")))}
    assert (rows[str(row.pk)]["tps"], rows[str(row.pk)]["sustained_tps"], rows[str(row.pk)]["latency_bound_ms"]) == (
        "", "3000.00", "50.00")


@pytest.mark.django_db
def test_a_search_whose_first_step_failed_cannot_be_published(client, staff_user, profiles):
    target = make_target("pg-cap", "postgresql", vcpus=4, memory_gb=16)
    run = capacity_run(profiles, target, [step(1000, False)])
    assert run.summary["tps"] == 700.0 and not run.can_publish
    client.force_login(staff_user)
    client.post(f"/runs/{run.pk}/publish/")
    assert Run.objects.get(pk=run.pk).published_result is None


@pytest.fixture
def published(client, staff_user, profiles):
    """Three capacity searches on PostgreSQL (4 vCPU: 2,000 TPS at 50 ms; 8 vCPU: 4,000 at 20 ms; 16 vCPU: 8,000 at
    100 ms) and a closed-loop run of 2 vCPU at 9,000 TPS, all published."""
    client.force_login(staff_user)
    rows = {}
    for vcpus, top, bound in ((4, 2000, 50.0), (8, 4000, 20.0), (16, 8000, 100.0)):
        target = make_target(f"pg-{vcpus}", "postgresql", vcpus=vcpus, memory_gb=vcpus * 4)
        rows[vcpus] = publish(client, capacity_run(profiles, target, [step(top, True), step(top * 2, False)], bound=bound))
    closed = make_target("pg-2", "postgresql", vcpus=2, memory_gb=8)
    rows[2] = publish(client, Run.objects.create(
        target=closed, profile=profiles[PROFILE], params=profiles[PROFILE].resolve({}), state=RunState.SUCCEEDED,
        server_version="15.10", tool_version="15.10", summary={"tps": 9000.0, "qps": 9000.0, "threads": 2}))
    assert rows[2].tps == 9000 and rows[2].sustained_tps is None
    client.logout()
    return rows


def sizing(**params):
    return APIClient().get("/api/v1/sizing/", {"engine": "postgresql", **params})


@pytest.mark.django_db
@pytest.mark.parametrize(("target", "bound", "answer"), [
    (3000, 50, 8),     # 4 vCPU sustains only 2,000; 8 vCPU 4,000 at 20 ms (<= 50); not 16 vCPU (the smallest first)
    (1000, 50, 4),     # 4 vCPU: 2,000 at 50 ms
    (1000, 20, 8),     # 4 vCPU's 50 ms bound is above 20 ms: 8 vCPU at 20 ms
    (5000, 100, 16),   # only 16 vCPU sustains 5,000, at 100 ms
])
def test_sizing_with_a_latency_bound_answers_from_capacity_searches(published, target, bound, answer):
    body = sizing(target=target, latency_bound_ms=bound)
    assert body.status_code == 200, body.content
    body = body.json()
    assert body["metric"] == "sustained_tps" and body["latency_bound_ms"] == bound
    assert [a["result"]["id"] for a in body["answers"]][:1] == [published[answer].pk]
    first = body["answers"][0]
    assert first["value"] >= target and first["latency_bound_ms"] <= bound
    assert "never from closed-loop TPS" in body["note"]
    # the closed-loop row's 9,000 TPS, above every target here, never answers
    assert published[2].pk not in [a["result"]["id"] for a in body["answers"]]


@pytest.mark.django_db
def test_no_figure_under_the_bound_is_said_plainly_not_answered_from_closed_loop_tps(published, client):
    body = sizing(target=3000, latency_bound_ms=10).json()
    assert body["answers"] == [] and body["metric"] == "sustained_tps"
    assert "No published figure sustains that rate with p95 ≤ 10 ms" in body["note"]
    assert "Vendor whitepapers state no latency" in body["note"]
    # without a bound the vendors' and the closed-loop run's TPS answer as before, and no note
    plain = sizing(target=3000, include_internal="true").json()
    assert plain["metric"] == "tps" and plain["note"] == "" and published[2].pk in [a["result"]["id"] for a in plain["answers"]]
    html = client.get("/sizing/", {"engine": "postgresql", "target": 3000, "latency_bound_ms": 10}).content.decode()
    assert 'id="sizing-no-latency"' in html and "Vendor whitepapers state no latency" in html


@pytest.mark.django_db
def test_the_sizing_page_with_a_bound_shows_the_sustained_rate_and_its_bound(published, client, django_assert_max_num_queries):
    with django_assert_max_num_queries(20):
        html = client.get("/sizing/", {"engine": "postgresql", "target": 3000, "latency_bound_ms": 50}).content.decode()
    assert "The smallest flavours sustaining 3000 TPS with p95 ≤ 50 ms (open-loop capacity searches)" in html
    cells = re.findall(r'data-col="(sustained_tps|latency_bound_ms)">([^<]*)<', html)
    assert cells == [("sustained_tps", "4000.00"), ("latency_bound_ms", "20.00")]
    assert 'id="sizing-latency-note"' in html


@pytest.mark.django_db
@pytest.mark.parametrize(("params", "field", "words"), [
    ({"latency_bound_ms": "0"}, "latency_bound_ms", "greater than or equal to 0.01"),
    ({"latency_bound_ms": "-5"}, "latency_bound_ms", "greater than or equal to 0.01"),
    ({"latency_bound_ms": "fast"}, "latency_bound_ms", "Enter a number"),
    ({"latency_bound_ms": "9999999"}, "latency_bound_ms", "less than or equal to 600000"),
    ({"latency_bound_ms": "50", "metric": "qps"}, "metric", "A latency bound sizes for TPS"),
])
def test_a_bad_latency_bound_is_refused_naming_the_field(published, params, field, words):
    response = sizing(target=3000, **params)
    assert response.status_code == 400, response.content
    assert any(words in m for m in response.json()["errors"][field]), response.json()


@pytest.mark.django_db
def test_an_open_loop_run_is_never_published_as_tps(client, staff_user, profiles):
    # Its TPS is the rate it was offered (998.7 of 1,000 here), not what the server sustains: published as TPS it would
    # sit beside closed-loop TPS with no caveat. Only a capacity search publishes an open-loop figure (sustained_tps).
    target = make_target("pg-open", "postgresql", vcpus=4, memory_gb=16)
    run = Run.objects.create(target=target, profile=profiles[PROFILE], params=profiles[PROFILE].resolve({"rate_tps": 1000}),
                             state=RunState.SUCCEEDED, server_version="15.10", tool_version="15.10",
                             summary={"tps": 998.7, "qps": 998.7, "threads": 2})
    rows = PublishedResult.objects.count()
    client.force_login(staff_user)
    assert 'id="publish"' not in client.get(f"/runs/{run.pk}/").content.decode()
    response = client.get(f"/runs/{run.pk}/publish/", follow=True)
    assert response.redirect_chain == [(f"/runs/{run.pk}/", 302)]
    assert "is the rate it was offered, not what the server sustains" in response.content.decode()
    assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    assert Run.objects.get(pk=run.pk).published_result is None
    assert PublishedResult.objects.count() == rows
