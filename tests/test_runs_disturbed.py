"""The client host's condition (issue 46.6): a run records its client host's load averages and cores before the
first step and after the last, checked against /proc/loadavg read by the test itself around real sysbench runs on
the machine's MariaDB, and the worker applies its limit (RUNS_CLIENT_LOAD_LIMIT_PER_CORE: a worker of the test's own
at 0 marks its run disturbed, the suite's at 1000 does not); a run that started on a client loaded beyond its
cores is `disturbed`: left out of compare's
figures and verdicts unless asked for (`include_disturbed=true`), not judged for regression nor a baseline of later
results, and published only with an acknowledgement that the published row then carries (page, API, CSV)."""

import csv
import io
import os
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs import actions
from runs.models import RepeatGroup, Run, RunState, Target
from testbed.runs_support import make_targets, make_user, wait_final

BUSY = {"start": {"load": [5.0, 4.0, 3.0], "cores": 2}}  # 2.5 runnable tasks per core as the run started
QUIET = {"start": {"load": [0.5, 0.4, 0.3], "cores": 2}}


def loadavg():
    with open("/proc/loadavg") as fh:
        return [float(v) for v in fh.read().split()[:3]]


LOAD_QUEUE = "load-test"


@pytest.mark.django_db(transaction=True)
def test_a_real_run_records_its_client_hosts_load_and_the_worker_applies_its_limit(committed, worker, tmp_path):
    from testbed.runs_support import queue_worker

    operator = make_user("load-op", operator=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    shared = make_targets()["mysql"]
    own = Target.objects.get(pk=shared.pk)
    own.pk, own.name, own.queue = None, "mysql-load-queue", LOAD_QUEUE
    own.save()

    def launch(target):
        response = api.post("/api/v1/runs/", {"target": target.pk, "profile": "sysbench-oltp-rw-mysql-quick",
                                              "overrides": {"duration_s": 2}}, format="json")
        assert response.status_code == 201, response.content
        run = wait_final(response.json()["id"], timeout=180)
        assert run.state == RunState.SUCCEEDED, run.reason
        return run

    before = loadavg()
    # The suite's shared worker: a limit of 1000 per core (testbed/runs_support.py), never reached here.
    calm = launch(shared)
    # A worker of this test's own with a limit of 0: any load at all is beyond it, so its run is disturbed.
    with queue_worker(LOAD_QUEUE, "runs-load", tmp_path, concurrency=1, RUNS_CLIENT_LOAD_LIMIT_PER_CORE="0"):
        busy = launch(own)
    after = loadavg()
    for run in (calm, busy):
        start, end = run.client_load["start"], run.client_load["end"]
        assert start["cores"] == end["cores"] == os.cpu_count()
        # The 15-minute average moves slowly: the workers' readings lie near the test's own, read around the runs.
        for reading in (start, end):
            assert len(reading["load"]) == 3 and start["load"][0] > 0
            assert min(before[2], after[2]) - 0.5 <= reading["load"][2] <= max(before[2], after[2]) + 0.5, (before, reading, after)
        body = api.get(f"/api/v1/runs/{run.pk}/").json()
        assert body["client_load"] == run.client_load and body["disturbed"] is run.disturbed
    assert (calm.disturbed, busy.disturbed) == (False, True)
    data = api.get(f"/api/v1/runs/compare/?run={calm.pk}&run={busy.pk}&base={calm.pk}").json()
    assert [e["n"] for e in data["entries"]] == [1, 0] and data["entries"][1]["disturbed"] == [busy.pk]
    data = api.get(f"/api/v1/runs/compare/?run={calm.pk}&run={busy.pk}&base={calm.pk}&include_disturbed=true").json()
    assert [e["n"] for e in data["entries"]] == [1, 1] and data["comparisons"][0]["verdict"] == "single-run"


@pytest.mark.django_db
def test_disturbed_runs_are_left_out_unless_asked_for(client, operator_user, profiles):
    from .test_runs_trust import make_target

    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    target = make_target()
    groups = [RepeatGroup.objects.create(count=5) for _ in range(2)]
    tps = {0: [1000.0, 1010.0, 990.0, 1005.0, 2000.0], 1: [1100.0, 1110.0, 1090.0, 1105.0, 1095.0]}
    runs = {}
    for g, group in enumerate(groups):
        for i, value in enumerate(tps[g], start=1):
            # The baseline's fifth run started on a busy client host (and measured 2000 TPS).
            load = BUSY if (g, i) == (0, 5) else QUIET
            runs[g, i] = Run.objects.create(target=target, profile=quick, params=quick.resolve({}), state=RunState.SUCCEEDED,
                                            repeat_group=group, repeat_index=i, summary={"tps": value, "threads": 2},
                                            client_load=load, disturbed=load is BUSY)
    api = APIClient()
    api.force_authenticate(operator_user)
    query = f"/api/v1/runs/compare/?group={groups[0].pk}&group={groups[1].pk}&base={groups[0].pk}"
    data = api.get(query).json()
    base = data["entries"][0]
    assert base["n"] == 4 and base["mean_tps"] == pytest.approx(1001.25) and base["disturbed"] == [runs[0, 5].pk]
    assert data["include_disturbed"] is False and data["comparisons"][0]["verdict"] == "faster"
    counted = api.get(query + "&include_disturbed=true").json()
    assert counted["entries"][0]["n"] == 5 and counted["entries"][0]["mean_tps"] == pytest.approx(1201.0)
    assert counted["comparisons"][0]["verdict"] != "faster"  # 2000 TPS among them: the spread swamps the change
    bad = api.get(query + "&include_disturbed=yes")
    assert bad.status_code == 400 and list(bad.json()["errors"]) == ["include_disturbed"]
    client.force_login(operator_user)
    page = client.get(query.replace("/api/v1/runs/", "/runs/")).content.decode()
    assert 'id="compare-disturbed"' in page and f"Runs {runs[0, 5].pk} started while the client host was loaded" in page
    assert "include_disturbed=true" in page
    page = client.get(f"/runs/{runs[0, 5].pk}/").content.decode()
    assert 'id="run-client-load" class="warning"' in page and "disturbed: the client host was loaded" in page


@pytest.mark.django_db
def test_a_disturbed_run_is_not_judged_nor_a_baseline(profiles):
    from .test_runs_trust import make_target

    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    target, params = make_target(), quick.resolve({})
    for minutes, value in ((60, 100.0), (50, 101.0), (40, 99.0), (30, 100.5), (20, 99.5)):
        Run.objects.create(target=target, profile=quick, params=params, state=RunState.SUCCEEDED, summary={"tps": value},
                           finished_at=timezone.now() - timedelta(minutes=minutes), client_load=QUIET, disturbed=False)
    busy = Run.objects.create(target=target, profile=quick, params=params, state=RunState.CLEANING_UP, client_load=BUSY,
                              disturbed=True)
    assert actions.succeed(busy, {"tps": 50.0})
    busy.refresh_from_db()
    assert busy.regression is None and busy.trend["disturbed"] is True  # half the TPS, but measured on a busy client
    later = Run.objects.create(target=target, profile=quick, params=params, state=RunState.CLEANING_UP, client_load=QUIET,
                               disturbed=False)
    assert actions.succeed(later, {"tps": 100.2})
    later.refresh_from_db()
    assert busy.pk not in later.trend["earlier_runs"] and later.trend["n"] == 5 and later.regression is False


@pytest.mark.django_db
def test_a_disturbed_run_is_published_only_with_an_acknowledgement_that_the_row_keeps(client, staff_user, profiles):
    from .test_runs_trust import make_target

    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    target = make_target("maria", "mysql", vcpus=2, memory_gb=4)
    run = Run.objects.create(target=target, profile=quick, params=quick.resolve({}), state=RunState.SUCCEEDED,
                             server_version="10.11.19-MariaDB", tool_version="1.0.20", client_load=BUSY, disturbed=True,
                             summary={"tps": 800.0, "qps": 16000.0, "threads": 2})
    client.force_login(staff_user)
    confirm = client.get(f"/runs/{run.pk}/publish/").content.decode()
    assert 'id="publish-disturbed"' in confirm and 'name="acknowledge_other_load"' in confirm
    refused = client.post(f"/runs/{run.pk}/publish/")
    assert refused.status_code == 400 and 'id="acknowledge-error"' in refused.content.decode()
    assert Run.objects.get(pk=run.pk).published_result is None
    assert client.post(f"/runs/{run.pk}/publish/", {"acknowledge_other_load": "on"}).status_code == 302
    row = Run.objects.get(pk=run.pk).published_result
    body = APIClient().get(f"/api/v1/results/{row.pk}/").json()
    assert body["client_disturbed"] == {"runs": [run.pk], "acknowledged": True, "acknowledged_by": staff_user.username}
    answer = APIClient().get("/api/v1/results/", {"format": "csv", "include_internal": "true", "document": "internal-measurements"})
    [exported] = [r for r in csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())) if r["id"] == str(row.pk)]
    assert exported["client_disturbed"] == "acknowledged"
    page = client.get(row.table.document.get_absolute_url()).content.decode()
    cells = re.search(rf'<tr data-result="{row.pk}">(.*?)</tr>', page, re.S).group(1)
    assert 'data-flag="disturbed"' in cells
