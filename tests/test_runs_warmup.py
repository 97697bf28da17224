"""Quick profiles warm up (issue 46.4): a 2 s warm-up step, measured and left out of the run's figures, before the 3 s
measured step. The other tests run the quick profiles without it (testbed.runs_support.seed_profiles_for_tests); these
run them as `seed_profiles` makes them. Real worker, real sysbench on MariaDB and pgbench on PostgreSQL; the expected
figures are the tool's own lines, read from the log (`$ <argv>` then what the tool printed), never the run's."""

import re

import pytest
from django.core.management import call_command

from runs.models import Run, RunState

from testbed.runs_support import logged_steps, make_targets, printed_intervals, wait_final

pytestmark = pytest.mark.django_db(transaction=True)


def launch_as_seeded(api, engine, profile):
    call_command("seed_profiles", stdout=open("/dev/null", "w"))  # the quick profiles' own 2 s warm-up
    response = api.post("/api/v1/runs/", {"target": make_targets()[engine].pk, "profile": profile}, format="json")
    assert response.status_code == 201, response.content
    run = wait_final(response.json()["id"], timeout=120)
    assert run.state == RunState.SUCCEEDED, run.reason
    assert run.params["warmup_s"] == 2 and run.params["duration_s"] == 3
    return run


def test_a_quick_sysbench_run_warms_up_for_2_s_and_reports_only_its_measured_step(worker, committed, operator_api):
    run = launch_as_seeded(operator_api, "mysql", "sysbench-oltp-rw-mysql-quick")
    steps = logged_steps(run.log)
    tool_runs = [(command, out) for command, out in steps if command.split()[-1] == "run"]
    assert len(tool_runs) == 2, run.log  # the warm-up, then the measured step: two sysbench processes
    (warm_command, warm_out), (measured_command, measured_out) = tool_runs
    assert "--time=2" in warm_command.split() and "--time=3" in measured_command.split(), (warm_command, measured_command)
    # Every interval line of each step is stored once, under its own step kind.
    stored = Run.objects.get(pk=run.pk).samples
    assert sorted(stored.filter(warmup=True).values_list("t", flat=True)) == printed_intervals(warm_out)
    assert sorted(stored.filter(warmup=False).values_list("t", flat=True)) == printed_intervals(measured_out)
    assert printed_intervals(warm_out), warm_out
    # The run's TPS is the measured step's final report ("transactions: N (X per sec.)"), not the warm-up's.
    printed = [float(x) for x in re.findall(r"transactions:\s+\d+\s+\(([\d.]+) per sec\.\)", measured_out)]
    assert len(printed) == 1, measured_out
    assert run.summary["tps"] == pytest.approx(printed[0], abs=0.01)
    # ... and the API says the same: the warm-up's samples flagged, the figures the measured step's.
    answer = operator_api.get(f"/api/v1/runs/{run.pk}/").json()
    assert answer["summary"]["tps"] == pytest.approx(printed[0], abs=0.01)


def test_a_quick_pgbench_run_warms_up_for_2_s_and_reports_only_its_measured_step(worker, committed, operator_api):
    run = launch_as_seeded(operator_api, "postgresql", "pgbench-ro-quick")
    tool_runs = [(command, out) for command, out in logged_steps(run.log) if command.split("$ ")[1].startswith("pgbench")
                 and " -i" not in command]
    durations = [command.split()[command.split().index("-T") + 1] for command, _ in tool_runs]
    assert durations == ["2", "3"], run.log  # pgbench -T: the warm-up's seconds, then the measured step's
    measured_out = tool_runs[1][1]
    # pgbench's own figure of the measured step ("tps = X (without initial connection time)").
    printed = [float(x) for x in re.findall(r"^tps = ([\d.]+) \(without initial connection time\)", measured_out, re.M)]
    assert len(printed) == 1, measured_out
    assert run.summary["tps"] == pytest.approx(printed[0], rel=1e-6)
    stored = Run.objects.get(pk=run.pk).samples
    assert stored.filter(warmup=True).exists() and stored.filter(warmup=False).exists()
    # pgbench's progress lines ("progress: 1.0 s, ...") of each step, each stored under its step kind.
    def progress(out):
        return [float(t) for t in re.findall(r"^progress: ([\d.]+) s,", out, re.M)]

    assert sorted(stored.filter(warmup=True).values_list("t", flat=True)) == progress(tool_runs[0][1])
    assert sorted(stored.filter(warmup=False).values_list("t", flat=True)) == progress(measured_out)
