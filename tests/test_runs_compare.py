"""Comparing runs: two real pgbench runs (a real Celery worker against the machine's PostgreSQL) of
different thread counts list exactly the parameters that differ; a sweep is matched to a single-step
run by thread count; % against the baseline is computed here by hand from the tools' own reports.
Bad selections answer 400 naming the parameter, on the page and in the API."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import Run, RunState

from testbed.runs_support import (
    make_targets, make_user, wait_final,
)
from testbed.runs_support import seed_profiles_for_tests

PROFILE = "pgbench-ro-quick"


def launch(api, target, **overrides):
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def finish(run_id, worker):
    try:
        run = wait_final(run_id, timeout=120)
    except AssertionError:
        raise AssertionError(f"{Run.objects.filter(pk=run_id).values('state', 'reason', 'log').first()}\n"
                             + "".join(worker.output[-60:])) from None
    assert run.state == RunState.SUCCEEDED, run.reason
    return run


@pytest.mark.django_db(transaction=True)
def test_two_real_runs_of_different_thread_counts_list_exactly_what_differs(committed, worker, client):
    operator = make_user("compare-op", operator=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    target = make_targets()["postgresql"]
    # One after another: a queued run behind another retries only a few times on this branch's task.
    one = finish(launch(api, target, threads=1), worker)
    two = finish(launch(api, target, threads=2), worker)
    sweep = finish(launch(api, target, thread_sweep=[1, 2]), worker)

    response = api.get(f"/api/v1/runs/compare/?run={one.pk}&run={two.pk}")
    assert response.status_code == 200, response.content
    data = response.json()
    parameters = {d["key"]: d["values"] for d in data["differences"] if d["group"] == "parameter"}
    # The only parameter set differently: -c 1 against -c 2 (same profile, duration, interval, scale, range, jobs).
    assert parameters == {"threads": ["1", "2"]}
    same = {d["key"] for d in data["same"]}
    assert {"profile", "tool", "duration_s", "report_interval_s", "scale", "range", "prepared", "tool_version",
            "server_version", "target", "vcpus", "memory_gb", "client_host"} <= same
    # % against the baseline (the first run), by hand from the tools' own final reports.
    t1, t2 = one.summary["tps"], two.summary["tps"]
    results = {r["run"]: r for r in data["results"]}
    assert results[one.pk]["is_base"] and results[one.pk]["tps_pct"] == 0.0
    assert results[two.pk]["tps_pct"] == round(100 * (t2 - t1) / t1, 1)
    # The samples to overlay are the tool's interval lines of each run (x = seconds since the step started).
    samples = {s["run"]: s for s in data["samples"]}
    assert [p[1] for p in samples[two.pk]["steps"][0]["points"]] == list(
        two.samples.filter(warmup=False).order_by("id").values_list("tps", flat=True))

    # Baseline = the second run; the sweep is matched to the single-step runs by thread count.
    data = api.get(f"/api/v1/runs/compare/?run={one.pk}&run={two.pk}&run={sweep.pk}&base={two.pk}").json()
    assert data["base"] == two.pk
    steps = {s["threads"]: s["tps"] for s in sweep.summary["steps"]}
    by_threads = {t["threads"]: {c["run"]: c for c in t["runs"]} for t in data["by_threads"]}
    assert sorted(by_threads) == [1, 2]
    assert by_threads[1][sweep.pk]["tps"] == steps[1] and by_threads[1][one.pk]["tps"] == t1
    assert by_threads[1][two.pk]["tps"] is None and by_threads[1][sweep.pk]["tps_pct"] is None  # the baseline has no 1-thread step
    assert by_threads[2][sweep.pk]["tps_pct"] == round(100 * (steps[2] - t2) / t2, 1)
    parameters = {d["key"]: d["values"] for d in data["differences"] if d["group"] == "parameter"}
    assert parameters == {"threads": ["1", "2", "2"], "thread_sweep": ["–", "–", "1, 2"]}

    # The page: the same table of differences, readable by a new user.
    client.force_login(operator)
    page = client.get(f"/runs/compare/?run={one.pk}&run={two.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-aspect="threads" data-group="parameter"' in html
    assert 'data-aspect="duration_s" data-group="parameter"' not in html


@pytest.mark.django_db
def test_bad_selections_name_the_parameter(client):
    operator = make_user("compare-op2", operator=True)
    client.force_login(operator)
    api = APIClient()
    api.force_authenticate(operator)
    for query, field in (("run=1", "run"), ("run=abc&run=2", "run"), ("run=999998&run=999999", "run"),
                         ("" + "&".join(f"run={i}" for i in range(1, 8)), "run")):
        response = api.get(f"/api/v1/runs/compare/?{query}")
        assert response.status_code == 400 and list(response.json()["errors"]) == [field], (query, response.content)
        page = client.get(f"/runs/compare/?{query}")
        assert page.status_code == 400 and f'data-field="{field}"' in page.content.decode()
    anonymous = APIClient().get("/api/v1/runs/compare/?run=1&run=2")
    assert anonymous.status_code in (401, 403)


@pytest.mark.django_db
def test_compare_page_queries_do_not_grow_with_runs(client):
    from runs.models import BenchmarkProfile, Sample, Target

    seed_profiles_for_tests()
    operator = make_user("compare-op3", operator=True)
    client.force_login(operator)
    target = Target.objects.create(name="pg", engine="postgresql", host="127.0.0.1", port=5432, database="db", user="u")
    profile = BenchmarkProfile.objects.get(slug=PROFILE)
    runs = []
    for threads in (1, 2, 3, 4, 5, 6):
        run = Run.objects.create(target=target, profile=profile, params=profile.resolve({"threads": threads}),
                                 state=RunState.SUCCEEDED, summary={"tps": 100.0 * threads, "threads": threads})
        Sample.objects.bulk_create([Sample(run=run, t=t, threads=threads, tps=99.0 * threads) for t in (1, 2, 3)])
        runs.append(run)
    counts = []
    for n in (2, 6):
        with CaptureQueriesContext(connection) as ctx:
            response = client.get("/runs/compare/?" + "&".join(f"run={r.pk}" for r in runs[:n]))
        assert response.status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1], counts
    # base=<not among them> is refused, naming base
    response = client.get(f"/runs/compare/?run={runs[0].pk}&run={runs[1].pk}&base={runs[2].pk}")
    assert response.status_code == 400 and 'data-field="base"' in response.content.decode()
