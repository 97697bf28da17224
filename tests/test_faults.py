"""Faults around runs, on a production-shaped stack of the test's own (testbed/fault_stack.py): a Redis
server on a free port that the tests kill and restart empty, gunicorn (DEBUG off), a benchmark worker and
the reconciler (beat every second, short periods). Real sysbench and pgbench against the machine's
MariaDB and PostgreSQL, kept small.

Each "Done when" item of issue 10 is one test: nothing lost, nothing stuck, nothing leaked, nothing down."""

import os
import re
import signal
import tempfile
import time

import psycopg
import pytest
import redis
import requests
from django.conf import settings
from rest_framework.authtoken.models import Token

from runs.models import Run, RunState, Target

from testbed.fault_stack import Stack, files_containing, free_port, stop
from testbed.runs_support import (
    PASSWORD, make_targets, make_user, run_processes, tool_processes, wait_for,
)

from .tiers import tier

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_PORT = free_port()  # this module's own Redis: a free port, never one another process may hold


def database_url():
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture(scope="module")
@tier("fault")
def stack(django_db_setup, django_db_blocker, bench_users, tmp_path_factory):
    stack = Stack(database_url(), REDIS_PORT, tmp_path_factory.mktemp("faults"))
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def token(committed):
    return Token.objects.create(user=make_user("fault-staff", staff=True)).key


@pytest.fixture
def targets(committed):
    return make_targets()


def launch(stack, token, target, profile, **overrides):
    return requests.post(f"{stack.url}/api/v1/runs/", json={"target": target.pk, "profile": profile, "overrides": overrides},
                         headers={"Authorization": f"Token {token}"}, timeout=30)


def launched(stack, token, target, profile, **overrides):
    response = launch(stack, token, target, profile, **overrides)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def final(run_id, timeout=120):
    return wait_for(lambda: (r := Run.objects.get(pk=run_id)).is_final and r, timeout, message=f"run {run_id} to finish")


def task_results(stack, run_id):
    """What the benchmark workers' tasks for this run returned, from their logs."""
    logs = "".join(stack.read_log(f"fault-bench{n}") for n in range(1, stack.bench_count + 1))
    return re.findall(rf"Task runs\.run_benchmark\[run-{run_id}-\w+\] succeeded in [\d.]+s: '([^']*)'", logs)


def test_anonymous_pages_and_api_answer_200_while_redis_is_down(stack):
    # (First in the module: the catalogue imported for the session is still there.)
    paths = ["/", "/explore/", "/api/v1/results/", "/documents/huawei-2023-08-03-rds/", "/api/v1/vendors/"]
    for path in paths:  # warm: the pages are in Redis now
        assert requests.get(stack.url + path, timeout=10).status_code == 200
    stack.kill_redis()
    try:
        for _ in range(3):
            for path in paths:
                response = requests.get(stack.url + path, timeout=10)
                assert response.status_code == 200, (path, response.text[:2000])
        assert "Huawei" in requests.get(stack.url + "/", timeout=10).text  # rendered from PostgreSQL
    finally:
        stack.start_redis()
    log = stack.read_log("web")
    assert log.count("cache unavailable") == 1, log[-3000:]  # one warning, not one per request
    assert "Traceback" not in log
    # And the cache is used again once Redis is back (after CACHE_RETRY_AFTER_SECONDS, 5 s): polled, not slept.
    # Each poll asks for a page not asked before (the process keeps pages it served in its own memory, so a
    # repeated one would never reach the shared cache).
    polls = iter(range(1, 1000))

    def cached_again():
        assert requests.get(stack.url + f"/explore/?vendor=huawei&min_vcpus={next(polls)}", timeout=10).status_code == 200
        return redis.Redis(port=REDIS_PORT).keys(":1:*")  # Django's cache keys (the broker's are not prefixed so)

    wait_for(cached_again, timeout=20, interval=0.5, message="the cache to be used again after Redis came back")
    assert "cache available again" in stack.read_log("web")


def test_redis_restarted_empty_with_three_runs_queued(stack, token, targets):
    stop(stack.bench)  # nobody takes them: the three messages wait in Redis
    ids = [launched(stack, token, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=1),
           launched(stack, token, targets["postgresql"], "pgbench-tpcb-quick", duration_s=1),
           launched(stack, token, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=1)]
    assert redis.Redis(port=REDIS_PORT).llen("benchmarks") == 3
    stack.kill_redis()
    stack.start_redis()  # empty: the messages are gone
    assert redis.Redis(port=REDIS_PORT).llen("benchmarks") == 0
    stack.start_bench()
    runs = [final(run_id) for run_id in ids]
    assert [r.state for r in runs] == [RunState.SUCCEEDED] * 3, [r.reason for r in runs]
    for run in runs:
        # Run once: each planned command appears once in the log, and one task did the work.
        commands = [ln[2:] for ln in run.log.splitlines() if ln.startswith("$ ")]
        assert commands == run.command_line.splitlines(), run.log[:3000]
        # The worker logs the task's result just after it stored the final state: allow it a moment.
        deadline = time.monotonic() + 10
        while not task_results(stack, run.pk) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert task_results(stack, run.pk).count("succeeded") == 1
    assert "queued again" in stack.read_log("fault-reconciler")


def test_a_launch_while_redis_is_down_is_queued_later(stack, token, targets):
    stack.kill_redis()
    try:
        started = time.monotonic()
        response = launch(stack, token, targets["postgresql"], "pgbench-tpcb-quick", duration_s=1)
        assert time.monotonic() - started < 10
        assert response.status_code in (201, 503), response.text
        assert response.headers["Content-Type"].startswith("application/json")
    finally:
        stack.start_redis()
    if response.status_code == 201:
        run = final(response.json()["id"])
        assert run.state == RunState.SUCCEEDED, run.reason
    # No ghost: nothing is left queued.
    assert not Run.objects.exclude(state__in=[RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED]).exists()
    # Three outages so far: the site logged no traceback; beat (ticking every second) one line per outage
    # at most, not a stack trace per tick.
    assert "Traceback" not in stack.read_log("web")
    reconciler = stack.read_log("fault-reconciler")
    assert "Message Error" not in reconciler and "Traceback" not in reconciler, reconciler[-5000:]
    assert reconciler.count("broker unreachable") <= 3  # (none if beat was waiting to reconnect instead)


def test_a_run_on_a_queue_no_worker_consumes_fails_naming_the_queue(stack, token, targets):
    Target.objects.filter(pk=targets["postgresql"].pk).update(queue="nobody-listens")
    run_id = launched(stack, token, targets["postgresql"], "pgbench-tpcb-quick", duration_s=1)
    run = final(run_id, timeout=60)
    assert run.state == RunState.FAILED
    assert 'No worker consumes queue "nobody-listens"' in run.reason
    assert (run.finished_at - run.created_at).total_seconds() >= float(Stack.RUNS_ENV["RUNS_UNCLAIMED_FAIL_SECONDS"])


def test_sigkill_of_a_worker_mid_run_leaves_no_password_on_disk(stack, token, targets):
    started = time.time() - 1
    run_id = launched(stack, token, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=60)
    wait_for(lambda: Run.objects.get(pk=run_id).samples.exists(), timeout=60, message="a first sample")
    workdirs = list(stack.tmp.glob(f"perfdash-run{run_id}-*"))
    assert len(workdirs) == 1
    tmp_roots = {tempfile.gettempdir(), str(stack.tmp)}
    assert files_containing(PASSWORD, *tmp_roots, since=started) == []  # not even while sysbench runs
    os.killpg(stack.bench.pid, signal.SIGKILL)  # the whole worker: main process and its pool
    stack.bench.wait()
    # The stack's workers run their tools in its own temp directory (not this process's: run_processes looks there).
    wait_for(lambda: tool_processes(os.path.join(str(stack.tmp), f"perfdash-run{run_id}-")) == [], timeout=5,
             message="the orphaned tool to exit")
    assert files_containing(PASSWORD, *tmp_roots, since=started) == []
    run = final(run_id, timeout=30)  # the reconciler: the worker's pid is dead
    assert run.state == RunState.FAILED and "stopped reporting" in run.reason
    # SIGKILL never reached the `finally` that removes it: the reconciler, failing the dead run on this host, did
    # (issue 34.2: whoever fails a dead run removes its directory; a worker starting would too, test_reliability.py).
    assert not workdirs[0].exists()
    stack.start_bench()


def test_database_connections_terminated_mid_run(stack, token, targets):
    """A blip of the dashboard's database (issue 34.4): the worker reconnects and retries its writes within
    RUNS_DATABASE_GRACE_SECONDS (30 s), so the run goes on and succeeds with every sample; the web reconnects."""
    run_id = launched(stack, token, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=8)
    wait_for(lambda: Run.objects.get(pk=run_id).samples.exists(), timeout=60, message="a first sample")
    headers = {"Authorization": f"Token {token}"}
    assert requests.get(f"{stack.url}/api/v1/runs/{run_id}/", headers=headers, timeout=10).status_code == 200
    with psycopg.connect(database_url().replace("postgres://", "postgresql://"), autocommit=True) as pg:
        killed = pg.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
    assert killed >= 2  # at least the worker's and gunicorn's
    from django.db import connection

    connection.close()  # ours may have gone too
    run = final(run_id, timeout=60)
    assert run.state == RunState.SUCCEEDED, run.reason
    assert "reconnected, nothing lost" in run.log
    assert run.samples.filter(warmup=False).count() >= 7  # 1 s intervals over 8 s
    wait_for(lambda: tool_processes(os.path.join(str(stack.tmp), f"perfdash-run{run_id}-")) == [], timeout=5,
             message="the tool to end")
    # The web side: the next request on the same gunicorn worker answers 200 (CONN_HEALTH_CHECKS).
    assert requests.get(f"{stack.url}/api/v1/runs/{run_id}/", headers=headers, timeout=10).status_code == 200
    assert requests.get(f"{stack.url}/", timeout=10).status_code == 200
    again = final(launched(stack, token, targets["mysql"], "sysbench-oltp-rw-mysql-quick", duration_s=1))
    assert again.state == RunState.SUCCEEDED, again.reason


# --- Campaigns (issue 47.2): a killed worker, a restarted broker and a pause lose no run and leave no cell short ---

def launch_campaign(stack, token, targets, repeats, **overrides):
    response = requests.post(f"{stack.url}/api/v1/campaigns/", json={
        "name": "fault campaign", "profile": "sysbench-oltp-rw-mysql-quick", "overrides": overrides,
        "targets": [t.pk for t in targets], "repeats": repeats}, headers={"Authorization": f"Token {token}"}, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def campaign(stack, token, campaign_id):
    response = requests.get(f"{stack.url}/api/v1/campaigns/{campaign_id}/", headers={"Authorization": f"Token {token}"},
                            timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def campaign_final(stack, token, campaign_id, timeout=240):
    return wait_for(lambda: (c := campaign(stack, token, campaign_id))["state"] in ("finished", "cancelled") and c,
                    timeout, interval=1, message=f"campaign {campaign_id} to finish")


def ended(campaign_id):
    """Each run of the campaign as it ended: what an assertion shows when a cell is short."""
    return list(campaign_runs(campaign_id).order_by("pk").values_list("pk", "state", "retry_of", "reason"))


def campaign_runs(campaign_id):
    return Run.objects.filter(repeat_group__campaign_cell__campaign_id=campaign_id)


def sized_targets(targets):
    from .test_campaigns import sized_mysql

    return [targets["mysql"], sized_mysql("fault-mysql-4-8", 4, 8)]


def test_a_campaign_whose_worker_is_killed_mid_run_finishes_with_every_cells_n(stack, token, targets):
    campaign_id = launch_campaign(stack, token, sized_targets(targets), 2, duration_s=3)
    wait_for(lambda: campaign_runs(campaign_id).filter(samples__isnull=False, state=RunState.RUNNING).exists(),
             timeout=90, message="a campaign run measuring")
    killed = campaign_runs(campaign_id).get(state=RunState.RUNNING)
    finished_before = set(campaign_runs(campaign_id).filter(state=RunState.SUCCEEDED).values_list("pk", flat=True))
    os.killpg(stack.bench.pid, signal.SIGKILL)
    stack.bench.wait()
    stack.start_bench()
    found = campaign_final(stack, token, campaign_id)
    assert found["state"] == "finished"
    killed.refresh_from_db()
    assert killed.state == RunState.FAILED and "stopped reporting" in killed.reason
    retry = Run.objects.get(retry_of=killed)
    assert retry.state == RunState.SUCCEEDED and retry.block == killed.block, retry.reason
    for cell in found["cells"]:
        assert cell["n"] == 2 and cell["mean_tps"] > 0, (cell, ended(campaign_id))
    # No finished run lost: each run that had succeeded before the kill is in its cell's runs, and so in its series.
    counted = {run for cell in found["cells"] for run in cell["runs"]}
    assert finished_before <= counted and retry.pk in counted and killed.pk not in counted
    assert [r for cell in found["cells"] for r in cell["retries"]] == [
        {"round": killed.block, "run": killed.pk, "retry": retry.pk}]


def test_a_campaign_whose_broker_is_restarted_empty_finishes_with_every_cells_n(stack, token, targets):
    campaign_id = launch_campaign(stack, token, sized_targets(targets), 2, duration_s=2)
    wait_for(lambda: campaign_runs(campaign_id).filter(state=RunState.SUCCEEDED).exists(), timeout=90,
             message="a first campaign run to succeed")
    finished_before = set(campaign_runs(campaign_id).filter(state=RunState.SUCCEEDED).values_list("pk", flat=True))
    stack.kill_redis()
    stack.start_redis()  # empty: the campaign's queued messages are gone
    found = campaign_final(stack, token, campaign_id)
    assert found["state"] == "finished"
    assert [cell["n"] for cell in found["cells"]] == [2, 2], ended(campaign_id)
    assert finished_before <= {run for cell in found["cells"] for run in cell["runs"]}
    assert "queued again" in stack.read_log("fault-reconciler")


def test_a_paused_campaign_starts_nothing_until_it_resumes(stack, token, targets):
    headers = {"Authorization": f"Token {token}"}
    campaign_id = launch_campaign(stack, token, [targets["mysql"]], 3, duration_s=2)
    wait_for(lambda: campaign_runs(campaign_id).exclude(state=RunState.QUEUED).exists(), timeout=90,
             message="the campaign's first run to start")
    assert requests.post(f"{stack.url}/api/v1/campaigns/{campaign_id}/pause/", headers=headers, timeout=30).status_code == 200
    first = wait_for(lambda: campaign_runs(campaign_id).filter(state__in=[RunState.SUCCEEDED, RunState.FAILED]).first(),
                     timeout=90, message="the active run to finish")
    assert first.state == RunState.SUCCEEDED, first.reason  # a pause lets the active run finish
    # Held, not lost: over the requeue period and two reconciler passes after it (RUNS_REQUEUE_AFTER_SECONDS 3, a pass
    # every second) the worker starts none and the reconciler neither sends nor fails them. A window, as nothing
    # happening can only be watched for so long.
    window = float(Stack.RUNS_ENV["RUNS_REQUEUE_AFTER_SECONDS"]) + 2
    time.sleep(window)
    assert list(campaign_runs(campaign_id).exclude(pk=first.pk).values_list("state", "held")) == [(RunState.QUEUED, True)] * 2, ended(campaign_id)
    assert campaign(stack, token, campaign_id)["state"] == "paused"
    assert requests.post(f"{stack.url}/api/v1/campaigns/{campaign_id}/resume/", headers=headers, timeout=30).status_code == 200
    found = campaign_final(stack, token, campaign_id)
    assert found["state"] == "finished" and found["cells"][0]["n"] == 3 and found["cells"][0]["retries"] == []
