"""A queued run waits only behind a run a worker can take (issue 50.4): a run on a queue no live worker consumes held
every other target entry naming the same database until the unclaimed limit (600 s), and the waiting run's page named
the wrong thing ("on the same target"). Real worker (queues celery and benchmarks), real sysbench on MariaDB."""

import pytest

from runs.models import Run, RunState, Target

from testbed.runs_support import logged_steps, make_targets, printed_intervals, wait_final, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

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


def test_a_redelivered_message_never_starts_a_run_twice(worker, committed, operator_api):
    """Issue 50.10: Redis hands an unacknowledged message to a worker again after the visibility timeout (12 h), and a
    run may last longer (a sweep of day-long steps). The message is only a wake-up call: the claim is one conditional
    UPDATE (queued -> preparing), so a second delivery of a run that is preparing or running finds it taken and
    returns, whichever worker gets it; one tool per step, one run's figures."""
    from runs.dispatch import enqueue
    from testbed.runs_support import run_processes

    target = make_targets()["mysql"]
    run_id = launch(operator_api, target, duration_s=5)
    wait_for(lambda: Run.objects.get(pk=run_id).samples.exists(), timeout=60, message="a first sample")
    assert enqueue(Run.objects.select_related("target").get(pk=run_id))  # the same message again, as a redelivery
    while not Run.objects.get(pk=run_id).is_final:  # the session worker has a second pool process free for it
        tools = [argv for _, argv in run_processes(run_id) if argv[0] == "sysbench"]
        assert len(tools) <= 1, tools
    run = wait_final(run_id)
    assert run.state == RunState.SUCCEEDED, run.reason
    # reset, prepare, the warm-up (a run of warmup_s), the measured run, cleanup: each command logged once.
    steps = logged_steps(run.log)
    assert [command.split()[-1] for command, _ in steps] == ["cleanup", "prepare", "run", "run", "cleanup"], run.log
    # One run's figures: every interval sysbench printed in the measured step stored once (sysbench prints 4 or 5
    # lines in 5 s: its last may fall after --time on a loaded machine), against the tool's own lines in the log.
    printed = printed_intervals(steps[3][1])
    assert printed == [float(s) for s in range(1, len(printed) + 1)] and len(printed) >= 4, printed
    assert sorted(run.samples.filter(warmup=False).values_list("t", flat=True)) == printed
    assert sorted(run.samples.filter(warmup=True).values_list("t", flat=True)) == printed_intervals(steps[2][1])
