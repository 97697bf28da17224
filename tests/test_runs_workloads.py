"""A profile names its workload, and only the workloads the tool bundles or the project ships can be named
(issue 34.5): sysbench's oltp_* tests (sysbench 1.0's manual lists them; /usr/share/sysbench), the project's
pgbench scripts (runs/drivers/scripts: ro, rw) and pgbench's builtins (`pgbench -b list`: tpcb-like as tpcb,
select-only, simple-update). A path, an option or an unknown name is refused on save (the admin, the one place
profiles are written), naming the field; a profile stored around that is refused at launch (API and form) and by
the worker, and the tool never sees it. Every value a tool's argv is built from is checked at the drivers too."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from runs.dispatch import enqueue
from runs.drivers import BadArgument, Connection, NotRunnable, pgbench, sysbench
from runs.models import BenchmarkProfile, Run, RunState, Target

from testbed.runs_support import PASSWORD, make_targets, wait_final

# Written by hand from the manuals: sysbench 1.0's README ("oltp_*.lua - a collection of OLTP-like database
# benchmarks") and the files it installs; pgbench 15's "-b scriptname: tpcb-like, simple-update, select-only".
SYSBENCH_OLTP = ["oltp_delete", "oltp_insert", "oltp_point_select", "oltp_read_only", "oltp_read_write",
                 "oltp_update_index", "oltp_update_non_index", "oltp_write_only"]
HOSTILE = ["/tmp/x.lua", "--help", "oltp_nope", "../../tmp/x", "oltp_read_write --mysql-host=evil", "x.lua", "ro.sql",
           "bulk_insert", "oltp_common", "-b", "OLTP_READ_WRITE"]


@pytest.fixture
def superuser(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "x-Pass-123456"))
    return client


def profile_form(tool, engine, workload, slug="p1"):
    return {"slug": slug, "name": "a profile", "tool": tool, "engine": engine, "workload": workload, "tables": "1",
            "rows_per_table": "1000", "scale": "1", "range": "1000", "threads": "2", "thread_sweep": "[]",
            "duration_s": "3", "report_interval_s": "1", "warmup_s": "0", "prepared": "on"}


@pytest.mark.django_db
@pytest.mark.parametrize("workload", HOSTILE)
@pytest.mark.parametrize("tool,engine", [("sysbench", "mysql"), ("pgbench", "postgresql")])
def test_it_refuses_a_path_an_option_or_an_unknown_workload_in_the_admin(superuser, tool, engine, workload):
    response = superuser.post("/admin/runs/benchmarkprofile/add/", profile_form(tool, engine, workload))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "workload" in errors, errors
    assert "not a workload" in errors["workload"][0]
    assert not BenchmarkProfile.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("tool,engine,workload", [
    *[("sysbench", "mysql", w) for w in SYSBENCH_OLTP], ("pgbench", "postgresql", "ro"), ("pgbench", "postgresql", "rw"),
    ("pgbench", "postgresql", "tpcb"), ("pgbench", "postgresql", "select-only"), ("pgbench", "postgresql", "simple-update"),
])
def test_it_saves_the_named_workloads_of_each_tool(superuser, tool, engine, workload):
    response = superuser.post("/admin/runs/benchmarkprofile/add/", profile_form(tool, engine, workload))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert BenchmarkProfile.objects.get(slug="p1").workload == workload


@pytest.mark.django_db
def test_it_refuses_another_tools_workload(superuser):
    response = superuser.post("/admin/runs/benchmarkprofile/add/", profile_form("pgbench", "postgresql", "oltp_read_write"))
    assert "workload" in response.context["adminform"].form.errors
    response = superuser.post("/admin/runs/benchmarkprofile/add/", profile_form("sysbench", "mysql", "ro"))
    assert "workload" in response.context["adminform"].form.errors
    assert not BenchmarkProfile.objects.exists()


def stored_around_validation(workload, slug="evil"):
    """A profile written without its validation (a shell, an old row): what the launch and the worker must refuse."""
    return BenchmarkProfile.objects.create(slug=slug, name="evil", tool="sysbench", engine="mysql", workload=workload,
                                           tables=1, rows_per_table=1000, threads=2, duration_s=3)


@pytest.mark.django_db
def test_it_refuses_to_launch_a_stored_invalid_profile_through_the_api_and_the_form(operator_api, operator, profiles):
    target = Target(name="maria", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench")
    target.set_password(PASSWORD)
    target.save()
    stored_around_validation("/tmp/x.lua")
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": "evil"}, format="json")
    assert response.status_code == 400
    message = response.json()["errors"]["profile"][0]
    assert "evil cannot run" in message and "'/tmp/x.lua' is not a workload sysbench runs" in message
    response = operator.post("/runs/new/", {"target": target.pk, "profile": BenchmarkProfile.objects.get(slug="evil").pk})
    assert response.status_code == 200
    assert "is not a workload sysbench runs" in response.context["form"].errors["profile"][0]
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_worker_never_gives_the_tool_a_stored_invalid_workload(committed, worker, operator_user):
    tmp_path = Path(tempfile.mkdtemp(prefix="pd", dir="/tmp"))  # short (not the xdist TMPDIR): the field holds 40 characters
    marker = tmp_path / "ran"
    script = tmp_path / "x.lua"
    script.write_text(f'os.execute("touch {marker}")\nfunction event() end\n')
    target = make_targets()["mysql"]
    good = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    evil = stored_around_validation(str(script))
    # A run made around launch_run, its stored parameters naming the file: the worker is the last gate. (It plans from
    # the parameters frozen on the run at launch, never from the profile as it is now: a profile edited after a launch
    # changes nothing of that run.)
    run = Run.objects.create(target=target, profile=evil, params={**good.resolve({}), "workload": str(script)},
                             requested_by=operator_user)
    enqueue(run)
    run = wait_final(run.pk)
    assert run.state == RunState.FAILED
    assert f"Workload '{script}' is not one this tool runs: choose one of oltp_read_write" in run.reason
    assert not marker.exists()
    assert "sysbench" not in run.command_line  # no step was planned, none ran
    # The file really is code sysbench runs: given as a workload by hand, it writes the marker.
    subprocess.run(["sysbench", str(script)], capture_output=True, timeout=30, cwd=tmp_path)
    assert marker.exists()
    shutil.rmtree(tmp_path)


def test_the_drivers_refuse_any_other_workload_and_values_not_of_their_kind():
    conn = Connection("mysql", "127.0.0.1", 3306, "sbtest", "bench")
    params = {"tables": 1, "rows_per_table": 1000, "threads": 2, "thread_sweep": [], "duration_s": 3,
              "report_interval_s": 1, "warmup_s": 0, "prepared": True}
    for workload in [*HOSTILE, " oltp_read_write"]:  # (a form strips the spaces; nothing else does)
        with pytest.raises(NotRunnable):
            sysbench.plan(conn, {**params, "workload": workload}, "/w")
        with pytest.raises(NotRunnable):
            pgbench.plan(Connection("postgresql", "127.0.0.1", 5432, "sbtest", "bench"),
                         {**params, "scale": 1, "range": 1000, "workload": workload}, "/w")
    for bad in ({"threads": "2; id"}, {"tables": -1}, {"duration_s": True}, {"thread_sweep": ["$(id)"]}, {"prepared": "yes"}):
        with pytest.raises(BadArgument):
            sysbench.plan(conn, {**params, "workload": "oltp_read_write", **bad}, "/w")
    for field, value in (("host", "--help"), ("host", "-oProxyCommand=id"), ("port", "3306 --x"), ("database", "-d"),
                         ("user", "a b"), ("engine", "sqlite"), ("tls_mode", "prefer")):
        fields = {"engine": "mysql", "host": "db.example", "port": 3306, "database": "sbtest", "user": "bench", field: value}
        with pytest.raises(BadArgument, match=field):
            Connection(**fields)


def test_pgbench_builtins_are_given_by_name():
    conn = Connection("postgresql", "127.0.0.1", 5432, "sbtest", "bench")
    params = {"scale": 1, "threads": 2, "thread_sweep": [], "duration_s": 3, "report_interval_s": 1, "warmup_s": 0,
              "prepared": True}
    run_argv = [s.argv for s in pgbench.plan(conn, {**params, "workload": "select-only"}, "/w") if s.phase == "run"][0]
    assert run_argv[run_argv.index("-b") + 1] == "select-only" and "-f" not in run_argv
    tpcb = [s.argv for s in pgbench.plan(conn, {**params, "workload": "tpcb"}, "/w") if s.phase == "run"][0]
    assert "-b" not in tpcb and "-f" not in tpcb  # pgbench's default builtin, tpcb-like
    assert os.path.isfile(pgbench.SCRIPTS["ro"]) and os.path.isfile(pgbench.SCRIPTS["rw"])
