"""The rules of multi-client runs without a worker (runs/clients.py, runs/params.py): how threads are split,
how the clients' interval lines and final reports become the run's, and the client_hosts parameter through
the form and the API (one error shape). Expected values are worked out by hand in the comments."""

from datetime import datetime, timedelta, timezone

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from runs.clients import merge_reports, sum_by_time
from runs.models import Run, Target
from runs.params import client_params

from testbed.runs_support import PASSWORD

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=timezone.utc)


def test_it_splits_the_threads_of_every_step_as_evenly_as_it_can():
    params = {"threads": 5, "thread_sweep": [8, 16, 3], "client_hosts": 2, "jobs": 3}
    one, two = client_params(params, 1), client_params(params, 2)
    assert (one["threads"], two["threads"]) == (3, 2)  # 5 = 3 + 2, the first client the extra one
    assert (one["thread_sweep"], two["thread_sweep"]) == ([4, 8, 2], [4, 8, 1])
    assert (one["jobs"], two["jobs"]) == (2, 1)  # 3 jobs = 2 + 1, never more than the client's fewest threads


def test_it_splits_an_offered_rate_as_the_threads_and_every_client_logs_at_client_ones_sampling():
    params = {"threads": 3, "thread_sweep": [], "client_hosts": 2, "rate_tps": 1001, "duration_s": 10,
              "report_interval_s": 1, "scale": 1, "range": 1000, "workload": "ro", "prepared": True}
    one, two = client_params(params, 1), client_params(params, 2)
    assert (one["rate_tps"], two["rate_tps"]) == (501, 500)  # 1001 = 501 + 500, the first client the extra one
    assert one["log_basis"] == two["log_basis"] == {"threads": [2], "rate_tps": 501}
    from runs.drivers import Connection, pgbench

    conn = Connection("postgresql", "127.0.0.1", 5432, "sbtest", "bench")
    argv = [next(s for s in pgbench.plan(conn, p, "/w") if s.phase == "run").argv for p in (one, two)]
    assert [a[a.index("-R") + 1] for a in argv] == ["501", "500"] and [a[a.index("-c") + 1] for a in argv] == ["2", "1"]
    # pgbench --sampling-rate: LOG_LINES_PER_SECOND 4,000 / the most TPS: client 1's 501 -> 1 for both
    assert [next(x for x in a if x.startswith("--sampling-rate=")) for a in argv] == ["--sampling-rate=1"] * 2
    fast = {**params, "rate_tps": 12_031, "workload": "ro"}  # 6,016 + 6,015: 4,000 / 6,016 = 0.66 (own share: 0.67)
    argv = [next(s for s in pgbench.plan(conn, client_params(fast, i), "/w") if s.phase == "run").argv for i in (1, 2)]
    assert [next(x for x in a if x.startswith("--sampling-rate=")) for a in argv] == ["--sampling-rate=0.66"] * 2


def test_it_merges_open_loop_reports_from_the_clients_records_and_sums_late_and_skipped():
    # client a logged 10 transactions (1..10 ms), client b 10 (11..20 ms), whole microseconds as pgbench logs them
    a = {"latency": {"histogram": [[1.0, 10]], "sampling_rate": 1.0}, "exact_us": [[1000 * i, 1] for i in range(1, 11)]}
    b = {"latency": {"histogram": [[2.0, 10]], "sampling_rate": 1.0}, "exact_us": [[1000 * i, 1] for i in range(11, 21)]}
    merged, lat = merge_reports([
        {**report(1, "a", 100.0, 10, None, late=1, skipped=2, lag_avg_ms=0.5, lag_max_ms=3.0, lag_grows=False,
                  latency_limit_ms=15.0), **a, "offered_tps": 51},
        {**report(2, "b", 90.0, 10, None, late=9, skipped=0, lag_avg_ms=1.5, lag_max_ms=2.0, lag_grows=True,
                  latency_limit_ms=15.0), **b, "offered_tps": 50}])
    # 20 values 1..20 ms: p95 rank floor(20 x 0.95 + 0.5) = 19 -> 19 ms; p50 rank 10 -> 10 ms; p99 rank 20 -> 20 ms.
    # Each client's own p95 is 10 and 20 ms: their average, 15 ms, is not the merged p95.
    assert (lat["p50_ms"], lat["p95_ms"], lat["p99_ms"], lat["count"]) == (10.0, 19.0, 20.0, 20)
    assert merged["latency_p95_ms"] == 19.0 and lat["method"] == "the clients' pgbench -l logs merged"
    assert merged["tps"] == 190.0 and merged["late"] == 10 and merged["skipped"] == 2
    assert merged["late_pct"] == 50.0  # 10 late of the 20 processed
    assert merged["skipped_pct"] == 9.091  # 2 skipped of the 22 scheduled (20 processed + 2 skipped), as pgbench counts
    assert merged["lag_avg_ms"] == 1.0 and merged["lag_max_ms"] == 3.0 and merged["lag_grows"] is True
    assert [(c["offered_tps"], c["late"], c["skipped"]) for c in merged["clients"]] == [(51, 1, 2), (50, 9, 0)]


def line(client, seconds, tps, **more):
    return {"client": client, "at": T0 + timedelta(seconds=seconds), "threads": 2, "tps": tps, "qps": tps * 20,
            "reads": tps * 14, "writes": tps * 4, "other": tps * 2, "errors_per_s": 0.0, "reconnects_per_s": 0.0, **more}


def test_it_sums_the_clients_lines_of_the_same_interval_by_time_not_by_index():
    # Client 2 started 0.3 s late and missed its first line: by index its first line would be paired with
    # client 1's first; by time it belongs to the second interval.
    samples = [line(1, 1.02, 100.0), line(1, 2.02, 110.0), line(1, 3.02, 120.0),
               line(2, 2.31, 50.0), line(2, 3.31, 60.0)]
    merged, incomplete = sum_by_time(samples, T0, 1, clients=2)
    assert incomplete == [1]  # only client 1 reported the first second: not a sum of the run
    assert [(slot, s["t"], s["tps"], s["qps"], s["threads"]) for slot, s in merged] == [
        (2, 2.0, 160.0, 3200.0, 4), (3, 3.0, 180.0, 3600.0, 4)]
    assert all(s["latency_p95_ms"] is None for _, s in merged)  # a percentile cannot be summed


def test_it_weights_the_interval_mean_latency_by_each_clients_rate():
    merged, _ = sum_by_time([line(1, 1.0, 300.0, latency_avg_ms=2.0), line(2, 1.1, 100.0, latency_avg_ms=6.0)], T0, 1, 2)
    assert merged[0][1]["latency_avg_ms"] == 3.0  # (300 x 2 + 100 x 6) / 400


def report(index, host, tps, transactions, histogram, **summary):
    return {"index": index, "host": host, "threads": 2, "latency": {"histogram": histogram},
            "summary": {"tps": tps, "qps": tps * 20, "transactions": transactions, "queries": transactions * 20,
                        "errors": 0, "reconnects": 0, "reads": 0, "writes": 0, "other": 0, **summary}}


def test_it_merges_the_final_reports_and_reads_percentiles_from_the_merged_histogram():
    fast = [[1.0, 95], [2.0, 5]]  # client a: p95 = 1.0 ms (rank 95 of 100)
    slow = [[2.0, 50], [8.0, 50]]  # client b: p95 = 8.0 ms (rank 95 of 100)
    merged, lat = merge_reports([
        report(1, "a", 300.25, 900, fast, latency_avg_ms=1.0, latency_min_ms=0.5, latency_max_ms=3.0, total_time_s=3.01),
        report(2, "b", 100.5, 300, slow, latency_avg_ms=5.0, latency_min_ms=1.5, latency_max_ms=9.0, total_time_s=3.02)])
    assert merged["tps"] == 400.75 and merged["qps"] == 8015.0 and merged["transactions"] == 1200
    assert merged["latency_min_ms"] == 0.5 and merged["latency_max_ms"] == 9.0 and merged["total_time_s"] == 3.02
    assert merged["latency_avg_ms"] == 2.0  # (900 x 1 + 300 x 5) / 1200
    # 200 transactions: rank floor(200 x 0.95 + 0.5) = 190; 95 at 1 ms, 55 more at 2 ms (150), 50 at 8 ms -> 8 ms.
    # p50: rank 100 -> 2 ms. The average of the two p95 would have said 4.5 ms.
    assert merged["latency_p95_ms"] == 8.0 and lat["p50_ms"] == 2.0 and lat["count"] == 200
    assert merged["client_hosts"] == 2
    assert [(c["host"], c["tps"], c["share_pct"]) for c in merged["clients"]] == [("a", 300.25, 74.9), ("b", 100.5, 25.1)]


@pytest.fixture
def target():
    t = Target(name="maria", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench", queue="zone-b")
    t.set_password(PASSWORD)
    t.save()
    return t


@override_settings(RUNS_MAX_CLIENT_HOSTS=4, RUNS_POOL_CLIENT_HOSTS={"zone-b": 2})
@pytest.mark.parametrize("overrides,message", [
    ({"client_hosts": 3, "threads": 8}, 'client_hosts (3) exceeds the limit of pool "zone-b" (2 client hosts).'),
    ({"client_hosts": 2, "threads": 1}, "client_hosts (2) must not exceed the threads of any step (1)"),
    ({"client_hosts": 2, "threads": 8, "thread_sweep": [4, 1]}, "must not exceed the threads of any step (1)"),
    ({"client_hosts": 0}, "client_hosts must be between 1 and 64, got 0."),
    ({"client_hosts": "two"}, "client_hosts must be a whole number"),
])
def test_it_refuses_more_client_hosts_than_the_pool_or_the_threads_allow(operator_user, target, profiles, client, overrides, message):
    api = APIClient()
    api.force_authenticate(operator_user)
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick", "overrides": overrides},
                        format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid" and list(body["errors"]) == ["client_hosts"], body
    assert message in body["errors"]["client_hosts"][0]
    client.force_login(operator_user)
    form = {"target": target.pk, "profile": profiles["sysbench-oltp-rw-mysql-quick"].pk,
            **{k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in overrides.items()}}
    page = client.post("/runs/new/", form)
    assert page.status_code == 200 and message in " ".join(page.context["form"].errors["client_hosts"])
    assert not Run.objects.exists()


@override_settings(RUNS_POOL_CLIENT_HOSTS={"zone-b": 2})
def test_it_keeps_a_one_client_run_as_it_was_and_records_more(operator_user, target, profiles):
    api = APIClient()
    api.force_authenticate(operator_user)
    one = api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick"}, format="json").json()
    two = api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                     "overrides": {"client_hosts": 2, "threads": 4}}, format="json")
    assert "client_hosts" not in one["params"] and one["clients"] == []
    # No worker consumes zone-b here, so two client hosts are refused at launch, naming the count (issue 23.7);
    # tests/test_runs_multi_client.py records a two-client run with two real workers.
    assert two.status_code == 400
    assert 'is more than the benchmark workers consuming queue "zone-b" now (0)' in two.json()["errors"]["client_hosts"][0]
    schema = api.get("/api/v1/schema/?format=json").json()
    assert "client_hosts" in schema["components"]["schemas"]["RunOverrides"]["properties"]
