"""One benchmark driven by two client hosts (runs/clients.py): two real Celery workers, each its own client
host, run real sysbench against the machine's MariaDB together.

The two client hosts are two worker processes on this machine with distinct names (`-n client-a@…`,
`RUNS_CLIENT_HOST=client-a`): network namespaces can be made here, but MariaDB, PostgreSQL and Redis
listen on 127.0.0.1 only, which a namespace cannot reach without changing the shared servers."""

import json
import math
import os
import re
import shlex
import shutil
import signal
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest

from runs.forms import profile_initial
from runs.models import BenchmarkProfile, ClientSample, ClientState, Run, RunClient, RunState, Target

from testbed.runs_support import (
    PASSWORD, keep_step_logs, logged_steps, make_targets, purge_queues, run_processes, start_worker, stop_worker, wait_final,
    wait_for, worker_env,
)

from .tiers import tier

pytestmark = pytest.mark.django_db(transaction=True)
QUEUE = "multi-test"
HOSTS = ("client-a", "client-b")
WORKER_ENV = {"RUNS_CLIENT_ARRIVAL_SECONDS": "8", "RUNS_CLIENT_LOST_SECONDS": "4", "RUNS_HEARTBEAT_SECONDS": "1"}
APP_NAME = "multi-client-test-worker"
TPS_RE = r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec\.\)"


@pytest.fixture
@tier("tool")
def clients_workers(django_db_setup, bench_users):
    """Two benchmark workers (-c 1) on the pool queue, each naming itself as another client host."""
    purge_queues()
    database = worker_env()["DATABASE_URL"] + f"?application_name={APP_NAME}"  # to know their sessions below
    procs = {host: start_worker(QUEUE, concurrency=1, name=host,
                                env={**WORKER_ENV, "RUNS_CLIENT_HOST": host, "DATABASE_URL": database})
             for host in HOSTS}
    yield procs
    for proc in procs.values():
        stop_worker(proc)
    purge_queues()
    # A backend of a stopped worker ends a moment after its process: wait, so the session can drop the test database.
    from django.db import connection

    def others():
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [APP_NAME])
            return cur.fetchone()[0]

    wait_for(lambda: others() == 0, timeout=15, message="the workers' database sessions to end")


@pytest.fixture
def target(committed):
    mariadb = make_targets()["mysql"]
    mariadb.queue = QUEUE
    mariadb.save()
    return mariadb


def launch(operator_api, target, **overrides):
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                          "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def final_tps(log):
    found = re.findall(TPS_RE, log, re.MULTILINE)
    assert len(found) == 1, f"expected one final report, found {found}"
    return float(found[0])


def histogram(log):
    """sysbench's printed latency histogram: {bucket value: count}."""
    block = log.split("Latency histogram", 1)[1].split("SQL statistics:", 1)[0]
    return {float(v): int(c) for v, c in re.findall(r"^\s+([\d.]+) \|\**\s+(\d+)\s*$", block, re.MULTILINE)}


def both_running(run_id):
    rows = list(RunClient.objects.filter(run_id=run_id))
    return len(rows) == 2 and all(ClientSample.objects.filter(client=c).exists() for c in rows)


def test_two_clients_drive_one_run(clients_workers, operator_api, target, client, operator_user, live_server, browser):
    run_id = launch(operator_api, target, threads=4, duration_s=4, client_hosts=2)
    run = wait_final(run_id, timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    one, two = RunClient.objects.filter(run=run).order_by("index")
    assert {one.host, two.host} == set(HOSTS) and one.state == two.state == ClientState.DONE
    assert (one.threads, two.threads) == (2, 2)
    # Client 1 (the run's log) prepared and cleaned up once; client 2 ran its run step only.
    assert run.log.count("oltp_read_write prepare") == 1 and run.log.count("oltp_read_write cleanup") == 2  # reset + cleanup
    assert "prepare" not in two.log and "cleanup" not in two.log
    assert "Number of threads: 2" in run.log and "Number of threads: 2" in two.log
    # Both clients' interval lines are stored, under their host.
    for c in (one, two):
        assert c.samples.filter(step=1).count() >= 3
    # The run's TPS is the sum of the two clients' own final reports.
    reports = [final_tps(run.log), final_tps(two.log)]
    assert run.summary["tps"] == pytest.approx(sum(reports), abs=0.011)
    assert run.summary["client_hosts"] == 2
    shares = {c["host"]: c for c in run.summary["clients"]}
    assert shares[one.host]["tps"] == reports[0] and shares[two.host]["tps"] == reports[1]
    assert sum(c["share_pct"] for c in run.summary["clients"]) == pytest.approx(100, abs=0.2)
    # Their run steps started within one second of each other, by their own clocks.
    starts = [datetime.fromisoformat(c.step_starts["run-1"]) for c in (one, two)]
    assert abs((starts[0] - starts[1]).total_seconds()) < 1.0
    # The run's interval samples are the sums of the clients' lines of the same interval.
    merged = ClientSample.objects.filter(client__run=run, merged=True)
    assert run.samples.count() >= 3 and merged.count() == 2 * run.samples.count()
    assert sum(s.tps for s in run.samples.all()) == pytest.approx(sum(s.tps for s in merged), abs=0.05)
    # p95 is read from the two histograms added up (sysbench's rank rule), not an average of the two p95.
    counts = histogram(run.log)
    for value, n in histogram(two.log).items():
        counts[value] = counts.get(value, 0) + n
    needed, running = max(1, math.floor(sum(counts.values()) * 0.95 + 0.5)), 0
    for value in sorted(counts):
        running += counts[value]
        if running >= needed:
            break
    assert run.insight["latency"]["p95_ms"] == round(value, 2) == run.summary["latency_p95_ms"]
    assert [c["host"] for c in run.insight["steps"][0]["clients"]] == [one.host, two.host]
    # Shown through the API and on the run page.
    body = operator_api.get(f"/api/v1/runs/{run.pk}/").json()
    assert [c["host"] for c in body["clients"]] == [one.host, two.host]
    record = operator_api.get(f"/api/v1/runs/{run.pk}/export/").json()
    assert [len(c["samples"]) for c in record["clients"]] == [one.samples.count(), two.samples.count()]
    assert PASSWORD not in json.dumps(record)
    client.force_login(operator_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "client-a" in html and "client-b" in html and "Client hosts" in html
    assert not run_processes(run.pk)
    # In Chromium, both languages, both widths: the clients' table scrolls in its box, the page does not.
    for width in (1280, 390):
        for lang, heading in (("en", "Client hosts"), ("zh-hans", "客户端主机")):
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
            page = context.new_page()
            page.goto(f"{live_server.url}/runs/{run.pk}/?lang={lang}")
            assert page.inner_text("#run-clients-heading") == heading
            assert page.locator("#run-clients tbody tr").count() == 2
            assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
            box = page.locator("#run-clients").locator("xpath=..").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
            context.close()


def rank_rule(values, pct):
    """docs/measurements.md: the value at rank floor(n p / 100 + 0.5) of the ordered values."""
    return sorted(values)[max(1, math.floor(len(values) * pct / 100 + 0.5)) - 1]


def pg_report(log, name):
    """A figure of pgbench's own final report in a client's log ("tps = 150.9", "... skipped: 0 (0.000%)")."""
    patterns = {"tps": r"^tps = ([\d.]+) \(without", "transactions": r"^number of transactions actually processed: (\d+)",
                "skipped": r"^number of transactions skipped: (\d+)", "late": r"^number of transactions above the [\d.]+ ms "
                r"latency limit: (\d+)/"}
    found = re.findall(patterns[name], log, re.MULTILINE)
    assert len(found) == 1, (name, found)
    return float(found[0]) if name == "tps" else int(found[0])


def test_two_clients_warm_up_together_and_report_only_their_measured_step(clients_workers, operator_api, target):
    """Issue 46.4: a quick profile's 2 s warm-up (as seed_profiles makes it) with two client hosts: both meet at the
    barrier before the warm-up and again before the measured step, and the run's TPS is the sum of the two clients'
    final reports of the measured step, never of their warm-ups (each log holds both reports)."""
    run_id = launch(operator_api, target, threads=4, duration_s=3, warmup_s=2, client_hosts=2)
    run = wait_final(run_id, timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    one, two = RunClient.objects.filter(run=run).order_by("index")
    for key in ("warmup-1", "run-1"):  # each step started together, by the clients' own clocks
        starts = [datetime.fromisoformat(c.step_starts[key]) for c in (one, two)]
        assert abs((starts[0] - starts[1]).total_seconds()) < 1.0, (key, starts)
    measured = []
    for log in (run.log, two.log):
        tool_runs = [out for command, out in logged_steps(log) if command.split()[-1] == "run"]
        assert len(tool_runs) == 2, log  # the warm-up step, then the measured one
        assert len(re.findall(TPS_RE, log, re.MULTILINE)) == 2
        measured.append(final_tps(tool_runs[1]))
    assert run.summary["tps"] == pytest.approx(sum(measured), abs=0.011)
    for c in (one, two):
        assert c.samples.filter(warmup=True).exists() and c.samples.filter(warmup=False).exists()
    assert run.samples.filter(warmup=True).exists()


def test_two_clients_offer_half_the_rate_each_and_the_p95_is_that_of_their_logs_together(clients_workers, operator_api,
                                                                                         committed, client, operator_user):
    """Issue 35.3 with pgbench: 301 TPS offered by two client hosts, 151 + 150 (pgbench -R each); p50/p95/p99 are those
    of the two clients' own -l logs taken together, by hand here; late and skipped (-L) and the achieved rate summed."""
    target = make_targets()["postgresql"]
    target.queue = QUEUE
    target.save()
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "pgbench-ro-quick", "overrides": {
        "rate_tps": 301, "latency_limit_ms": 20, "threads": 2, "client_hosts": 2, "duration_s": 4}}, format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    links = tempfile.mkdtemp(prefix="open-loop-client-logs-")  # beside the workers' work directories: one file system
    try:
        wait_for(keep_step_logs(run_id, links), timeout=120, interval=0.05, message="the run to end")
        logs = {path.name.split("-latency-")[0]: path.read_text().splitlines() for path in Path(links).iterdir()}
    finally:
        shutil.rmtree(links, ignore_errors=True)
    run = Run.objects.get(pk=run_id)
    assert run.state == RunState.SUCCEEDED, run.reason
    one, two = RunClient.objects.filter(run=run).order_by("index")
    # Each client's pgbench was given its share of the rate and the same -L, with one client each (-c 1).
    argv = [next(shlex.split(ln[2:]) for ln in log.splitlines() if ln.startswith("$ pgbench") and " -R " in ln)
            for log in (run.log, two.log)]
    assert [a[a.index("-R") + 1] for a in argv] == ["151", "150"]
    assert [a[a.index("-L") + 1] for a in argv] == ["20", "20"] and [a[a.index("-c") + 1] for a in argv] == ["1", "1"]
    assert [a for a in argv[0] if a.startswith("--sampling-rate=")] == ["--sampling-rate=1"] == \
        [a for a in argv[1] if a.startswith("--sampling-rate=")]  # every transaction logged by both
    # Achieved: each client's own "tps =" line, near its share (Poisson: 150 x 4 = 600 +- 25, 4 %, so within 15 %);
    # the run's is their sum; late and skipped are the sums of their reports.
    tps = [pg_report(log, "tps") for log in (run.log, two.log)]
    assert all(abs(t / share - 1) <= 0.15 for t, share in zip(tps, (151, 150))), tps
    figures = run.summary["open_loop"]
    assert figures["offered_tps"] == 301 and figures["achieved_tps"] == pytest.approx(sum(tps), abs=0.011)
    assert [(c["offered_tps"], c["tps"]) for c in run.summary["clients"]] == [(151, tps[0]), (150, tps[1])]
    for name in ("late", "skipped"):
        assert figures[name] == sum(pg_report(log, name) for log in (run.log, two.log))
    # The percentiles, by hand, from both clients' logs together: the time column of every completed transaction.
    assert len(logs) == 2, list(logs)
    values = [int(f[2]) for lines in logs.values() for f in (ln.split() for ln in lines) if f[2].isdigit()]
    transactions = [pg_report(log, "transactions") for log in (run.log, two.log)]
    assert len(values) == sum(transactions) == run.summary["transactions"]
    for pct in (50, 95, 99):
        assert figures[f"p{pct}_ms"] == rank_rule(values, pct) / 1000, pct
    own = [rank_rule([int(f[2]) for f in (ln.split() for ln in lines) if f[2].isdigit()], 95) / 1000 for lines in logs.values()]
    assert run.summary["latency_p95_ms"] == figures["p95_ms"] and run.insight["latency"]["p95_ms"] == figures["p95_ms"]
    print(f"p95 of each client's log {own}, their mean {sum(own) / 2:.3f}, merged {figures['p95_ms']} ms; tps {tps}")
    # Merged, the logged latencies themselves are not kept: not in the clients' reports, the run's record or its insight.
    record = operator_api.get(f"/api/v1/runs/{run.pk}/export/").json()
    assert "exact_us" not in json.dumps(record) and [len(c["reports"]) for c in record["clients"]] == [1, 1]
    assert not run_processes(run.pk)
    # The run page's clients table: each host's offered share beside its threads.
    client.force_login(operator_user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    rows = re.findall(r'<tr data-client="(\d)">(.*?)</tr>', page, re.S)
    assert "Offered (TPS)" in page and [(i, re.findall(r"<td>([^<]*)</td>", cells)[3]) for i, cells in rows] == [
        ("1", "151"), ("2", "150")]


def test_a_capacity_search_by_two_sysbench_clients_gives_each_its_share_of_every_step(clients_workers, operator_api, target):
    """Issue 35.3 with sysbench (--rate) and the capacity search: every step's rate is split between the two clients
    (client 2 is told each next rate by client 1), and each step is judged on the clients' histograms added up."""
    run_id = launch(operator_api, target, rate_tps=41, threads=2, client_hosts=2, duration_s=3, capacity_bound_ms=500,
                    capacity_factor=2, capacity_max_tps=82)
    run = wait_final(run_id, timeout=180)
    assert run.state == RunState.SUCCEEDED, run.reason
    two = RunClient.objects.get(run=run, index=2)
    steps = run.summary["capacity"]["steps"]
    offered = [s["offered_tps"] for s in steps]
    # The first rate, then x2 up to the maximum; if a step fails on this busy machine the search narrows between the
    # last passing and the first failing rate (tests/test_runs_capacity.py checks the search): every step counts here.
    assert offered[0] == 41 and offered[1:2] in ([82], []), offered
    rates = [[int(a.split("=")[1]) for ln in log.splitlines() if ln.startswith("$ sysbench") and " run" in ln
              for a in shlex.split(ln[2:]) if a.startswith("--rate=")] for log in (run.log, two.log)]
    assert rates == [[(o + 1) // 2 for o in offered], [o // 2 for o in offered]]  # 41 = 21 + 20, 82 = 41 + 41, ...
    # Each step's p95, by hand, from the two clients' printed histograms of that step added up (sysbench's rank rule),
    # and its achieved rate, their sum.
    blocks = [log.split("Latency histogram")[1:] for log in (run.log, two.log)]
    assert [len(b) for b in blocks] == [len(steps)] * 2
    for k, step in enumerate(steps):
        counts = {}
        for client_blocks in blocks:
            histogram_text = client_blocks[k].split("SQL statistics:", 1)[0]
            for v, c in re.findall(r"^\s+([\d.]+) \|\**\s+(\d+)\s*$", histogram_text, re.MULTILINE):
                counts[float(v)] = counts.get(float(v), 0) + int(c)
        values = [v for v in sorted(counts) for _ in range(counts[v])]
        assert step["p95_ms"] == round(rank_rule(values, 95), 2), k
        achieved = [final_tps(client_blocks[k]) for client_blocks in blocks]
        assert step["achieved_tps"] == pytest.approx(sum(achieved), abs=0.011), k
    assert not run_processes(run.pk)


def test_blips_of_the_dashboards_database_lose_nothing_of_a_two_client_run(clients_workers, operator_api, target):
    """Issue 50.1 for several client hosts: the barrier, each client's lines, reports, the merge and the end are writes
    and reads of the dashboard's database too. Its two workers' sessions are terminated again and again (found by
    their application name) from the launch to the end; the run succeeds with every interval of both clients."""
    import random

    import psycopg

    run_id = launch(operator_api, target, threads=4, duration_s=6, client_hosts=2)
    blips = 0
    random.seed(501)
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        while not Run.objects.get(pk=run_id).is_final:
            time.sleep(random.uniform(0.3, 0.8))
            blips += bool(pg.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
                                     "application_name = %s", [APP_NAME]).fetchone()[0])
    run = Run.objects.get(pk=run_id)
    assert run.state == RunState.SUCCEEDED, (run.reason, run.log[-2000:])
    assert blips >= 5
    one, two = RunClient.objects.filter(run=run).order_by("index")
    assert one.state == two.state == ClientState.DONE
    for c, log in ((one, run.log), (two, two.log)):  # each client's lines, against what its sysbench printed
        printed = [float(m) for m in re.findall(r"^\[ (\d+)s \] thds:", log, re.M)]
        assert printed == [float(t) for t in range(1, len(printed) + 1)] and len(printed) >= 5, printed
        assert sorted(c.samples.filter(step=1).values_list("t", flat=True)) == printed
    assert run.summary["tps"] == pytest.approx(final_tps(run.log) + final_tps(two.log), abs=0.011)


def test_more_client_hosts_than_workers_on_the_pool_are_refused_at_launch_naming_the_count(clients_workers, operator_api, target, client, operator_user):
    # Issue 23.7: three client hosts asked of a pool two workers consume; before, accepted and failed 120 s later.
    message = f'client_hosts (3) is more than the benchmark workers consuming queue "{QUEUE}" now (2)'
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                          "overrides": {"threads": 3, "client_hosts": 3}}, format="json")
    assert response.status_code == 400 and list(response.json()["errors"]) == ["client_hosts"], response.content
    assert message in response.json()["errors"]["client_hosts"][0]
    client.force_login(operator_user)
    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    form = {"target": target.pk, "profile": profile.pk, "repeats": "1", **profile_initial(profile), "threads": "3", "client_hosts": "3"}
    page = client.post("/runs/new/", {k: v for k, v in form.items() if v is not None})
    assert page.status_code == 200 and message in " ".join(page.context["form"].errors["client_hosts"])
    assert not Run.objects.exists()


def test_a_client_that_never_arrives_fails_the_run(clients_workers, operator_api, target):
    # Two workers consume the pool, so two client hosts are accepted; one worker is busy with another target's run,
    # so client 2 finds no free worker and never arrives.
    busy_target = Target.objects.get(engine="postgresql")  # made with the MariaDB target
    busy_target.queue = QUEUE
    busy_target.save()
    busy = operator_api.post("/api/v1/runs/", {"target": busy_target.pk, "profile": "pgbench-ro-quick", "overrides": {"duration_s": 60}},
                    format="json").json()["id"]
    wait_for(lambda: Run.objects.get(pk=busy).state == RunState.RUNNING, timeout=60, message="the other run to occupy a worker")
    run_id = launch(operator_api, target, threads=2, duration_s=3, client_hosts=2)
    run = wait_final(run_id, timeout=120)
    assert run.state == RunState.FAILED
    assert "Client(s) 2 of 2 did not reach the start of run step 1 within 8 s" in run.reason, run.reason
    states = dict(RunClient.objects.filter(run=run).values_list("index", "state"))
    assert states[2] == ClientState.STOPPED and states[1] in (ClientState.STOPPED, ClientState.FAILED)
    assert not run.samples.exists() and not run_processes(run_id)
    assert operator_api.post(f"/api/v1/runs/{busy}/cancel/").status_code == 202
    wait_final(busy, timeout=60)


def test_a_killed_client_fails_the_run_and_stops_the_other(clients_workers, operator_api, target):
    run_id = launch(operator_api, target, threads=2, duration_s=30, client_hosts=2)
    wait_for(lambda: both_running(run_id), timeout=90, message="both clients to report")
    victim = RunClient.objects.get(run_id=run_id, index=2)
    proc = clients_workers[victim.host]
    killed_at = time.monotonic()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    run = wait_final(run_id, timeout=60)
    took = time.monotonic() - killed_at
    assert run.state == RunState.FAILED
    assert f"Client 2 of 2 ({victim.host}) failed: it stopped reporting" in run.reason, run.reason
    assert took < 25, f"the other client ran on for {took:.0f} s"
    other = RunClient.objects.get(run_id=run_id, index=1)
    assert other.state == ClientState.FAILED and "[dashboard] run stopped (cancelled)" in run.log
    wait_for(lambda: not run_processes(run_id), timeout=10, message="no sysbench left")


def test_cancel_stops_every_client(clients_workers, operator_api, target):
    run_id = launch(operator_api, target, threads=2, duration_s=30, client_hosts=2)
    wait_for(lambda: both_running(run_id), timeout=90, message="both clients to report")
    asked = time.monotonic()
    assert operator_api.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 202
    run = wait_final(run_id, timeout=60)
    assert run.state == RunState.CANCELLED and time.monotonic() - asked < 20
    assert run.reason.startswith("Cancelled while running step 1 of 1 (2 threads)"), run.reason  # the run's threads
    assert set(RunClient.objects.filter(run=run).values_list("state", flat=True)) == {ClientState.STOPPED}
    assert not run_processes(run_id)
    assert Run.objects.get(pk=run_id).log.count("oltp_read_write cleanup") == 2
