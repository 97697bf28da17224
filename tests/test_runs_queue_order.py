"""A queued run waits only behind a run a worker can take (issue 50.4): a run on a queue no live worker consumes held
every other target entry naming the same database until the unclaimed limit (600 s), and the waiting run's page named
the wrong thing ("on the same target"). Real worker (queues celery and benchmarks), real sysbench on MariaDB."""

import pytest

from runs.models import Run, RunState, Target

from testbed.runs_support import make_targets, wait_final, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PROFILE = "sysbench-oltp-rw-mysql-quick"


def launch(api, target, **overrides):
    response = api.post("/api/v1/runs/", {"target": target.pk, "profile": PROFILE, "overrides": overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_a_run_nobody_takes_does_not_hold_the_database(worker, committed, operator_api, operator):
    local = make_targets()["mysql"]
    # Another entry for the same server and database, on a pool no worker serves (a typo, a pool being set up).
    stranded_target = Target.objects.create(name="same-db-no-pool", engine="mysql", host="localhost", port=local.port,
                                            database=local.database, user=local.user, queue="nobody-listens")
    stranded = launch(operator_api, stranded_target, duration_s=1)
    first = launch(operator_api, local, duration_s=6)
    wait_for(lambda: Run.objects.get(pk=first).state != RunState.QUEUED, timeout=60, message="the run to be claimed")
    second = launch(operator_api, local, duration_s=1)
    page = operator.get(f"/runs/{second}/").content.decode()
    # It waits for the run a worker took, and says which entry and queue that is; never for the stranded one.
    assert f"run #{first}</a>" in page and "of target local-mariadb on queue benchmarks" in page, page
    assert f"run #{stranded}</a>" not in page
    assert operator_api.get(f"/api/v1/runs/{second}/").json()["waiting_for"] == first
    for run_id in (first, second):
        run = wait_final(run_id, timeout=120)
        assert run.state == RunState.SUCCEEDED, run.reason
    assert Run.objects.get(pk=stranded).state == RunState.QUEUED  # never taken; the reconciler fails it at its limit
