"""Drivers: argv builders and parsers, pure functions, on output recorded from the installed tools
(sysbench 1.0.20 against MariaDB 10.11 and PostgreSQL 15, pgbench 15; tests/recorded/)."""

from pathlib import Path

import pytest

from runs.drivers import Connection, NotRunnable, hammerdb, pgbench, redact, sysbench

RECORDED = Path(__file__).resolve().parent / "recorded"
MYSQL = Connection("mysql", "db.example", 3306, "sbtest", "bench")
PG = Connection("postgresql", "10.0.0.5", 5432, "sbtest", "bench")
SECRET = 'p,a#s s\'w'
SYSBENCH_PARAMS = {"tables": 64, "rows_per_table": 10_000_000, "threads": 200, "thread_sweep": [8, 16], "duration_s": 3600,
                   "report_interval_s": 3, "warmup_s": 0, "prepared": True, "workload": "oltp_read_write"}
PGBENCH_PARAMS = {"scale": 1000, "range": 10_000_000, "threads": 64, "jobs": None, "thread_sweep": [], "duration_s": 120,
                  "report_interval_s": 1, "warmup_s": 10, "prepared": True, "workload": "ro"}


def recorded(name):
    return (RECORDED / name).read_text()


def test_sysbench_plan_prepare_sweep_cleanup_and_no_password_in_argv():
    steps = sysbench.plan(MYSQL, SYSBENCH_PARAMS, "/tmp/w")
    assert [s.phase for s in steps] == ["reset", "prepare", "run", "run", "cleanup"]
    assert [s.threads for s in steps if s.phase == "run"] == [8, 16]
    run = steps[2].argv
    assert run[0] == "sysbench" and run[-2:] == ["oltp_read_write", "run"]
    for expected in ("--config-file=/tmp/w/sysbench.cfg", "--db-driver=mysql", "--tables=64", "--table-size=10000000",
                     "--threads=8", "--time=3600", "--report-interval=3", "--forced-shutdown=1", "--db-ps-mode=auto"):
        assert expected in run
    assert steps[0].argv[-1] == "cleanup" and steps[1].argv[-1] == "prepare" and steps[-1].argv[-1] == "cleanup"
    files = sysbench.secret_files(MYSQL, SECRET)
    assert all(SECRET not in " ".join(s.argv) for s in steps)
    assert sysbench.secret_env(MYSQL, SECRET) == {}
    # Values with ',' or '#' must be quoted in sysbench's config file.
    assert f'mysql-password="{SECRET}"' in files["sysbench.cfg"].splitlines()
    assert 'mysql-host="db.example"' in files["sysbench.cfg"]


def test_sysbench_pgsql_driver_and_prepared_statements_off():
    argv = sysbench.build_argv("run", PG, {**SYSBENCH_PARAMS, "prepared": False}, "/w", threads=4, duration_s=5)
    assert "--db-driver=pgsql" in argv and "--db-ps-mode=disable" in argv
    assert "pgsql-password=" in sysbench.secret_files(PG, "x")["sysbench.cfg"]


def test_sysbench_interval_lines_and_summary_mysql():
    text = recorded("sysbench-1.0.20-mysql-oltp_read_write.stdout.txt")
    samples = [s for s in map(sysbench.parse_interval, text.splitlines()) if s]
    assert len(samples) == 3
    assert samples[0] == {"t": 1.0, "threads": 2, "tps": 514.33, "qps": 10373.47, "reads": 7270.52, "writes": 2069.30,
                          "other": 1033.65, "latency_p95_ms": 11.87, "errors_per_s": 3.0, "reconnects_per_s": 0.0}
    summary = sysbench.parse_summary(text)
    assert summary == {"reads": 35224, "writes": 10002, "other": 5007, "transactions": 2491, "tps": 829.33, "queries": 50233,
                       "qps": 16724.04, "errors": 25, "reconnects": 0, "total_time_s": 3.0029, "latency_min_ms": 0.84,
                       "latency_avg_ms": 2.41, "latency_max_ms": 21.97, "latency_p95_ms": 5.67}


def test_sysbench_pgsql_recorded_output():
    text = recorded("sysbench-1.0.20-pgsql-oltp_read_write.stdout.txt")
    samples = [s for s in map(sysbench.parse_interval, text.splitlines()) if s]
    assert [s["tps"] for s in samples] == [14.98, 185.10, 3.00]
    assert samples[2]["latency_p95_ms"] == 1013.60
    summary = sysbench.parse_summary(text)
    assert summary["transactions"] == 205 and summary["tps"] == 63.24 and summary["latency_max_ms"] == 1009.45


def test_sysbench_interval_is_stdout_only_and_ignores_other_lines():
    line = "[ 1s ] thds: 2 tps: 514.33 qps: 10373.47 (r/w/o: 7270.52/2069.30/1033.65) lat (ms,95%): 11.87 err/s: 3.00 reconn/s: 0.00"
    assert sysbench.parse_interval(line, "stderr") is None
    assert sysbench.parse_interval("Threads started!") is None
    assert sysbench.parse_summary("Initializing worker threads...\n") == {}


def test_sysbench_failure_reasons():
    reason = sysbench.failure_reason(recorded("sysbench-1.0.20-mysql-too-many-threads.stdout.txt"))
    assert reason == "Worker threads failed to initialize: FATAL: error 1040: Too many connections"
    denied = sysbench.failure_reason(recorded("sysbench-1.0.20-mysql-access-denied.stdout.txt"))
    assert "Access denied" in denied
    assert sysbench.parse_version(recorded("sysbench-1.0.20-mysql-prepare.stdout.txt")) == "1.0.20"


def test_pgbench_plan_uses_pgpassword_and_the_alibaba_script():
    steps = pgbench.plan(PG, PGBENCH_PARAMS, "/w")
    assert [s.phase for s in steps] == ["prepare", "warmup", "run", "cleanup"]
    run = steps[2].argv
    assert run[:14] == ["pgbench", "-M", "prepared", "-P", "1", "-c", "64", "-j", "64", "-T", "120", "-v", "-r", "-f"]
    assert run[14].endswith("scripts/ro.sql") and Path(run[14]).read_text().startswith("\\set aid random_gaussian(1, :range, 10.0)")
    assert run[15:19] == ["-D", "scale=1000", "-D", "range=10000000"]
    # pgbench [OPTION]... [DBNAME]: the database is positional and last (-d would be --debug).
    assert run[-7:] == ["-h", "10.0.0.5", "-p", "5432", "-U", "bench", "sbtest"] and "-d" not in run
    assert steps[0].argv[:5] == ["pgbench", "-i", "-q", "-s", "1000"]
    assert steps[-1].argv[:4] == ["pgbench", "-i", "-I", "d"]
    assert pgbench.secret_env(PG, SECRET) == {"PGPASSWORD": SECRET} and pgbench.secret_files(PG, SECRET) == {}
    assert all(SECRET not in " ".join(s.argv) for s in steps)
    tpcb = pgbench.build_argv("run", PG, {**PGBENCH_PARAMS, "workload": "tpcb", "prepared": False, "jobs": 8}, threads=32, duration_s=60)
    assert "-f" not in tpcb and tpcb[1:3] == ["-M", "simple"] and tpcb[tpcb.index("-j") + 1] == "8"


def test_pgbench_progress_on_stderr_and_summary_15():
    out, err = recorded("pgbench-15-ro.stdout.txt"), recorded("pgbench-15-ro.stderr.txt")
    samples = [s for s in (pgbench.parse_interval(line, "stderr", threads=2) for line in err.splitlines()) if s]
    assert [(s["t"], s["tps"], s["latency_avg_ms"], s["errors_per_s"]) for s in samples] == [(1.0, 56041.3, 0.021, 0.0), (2.0, 52389.2, 0.022, 0.0)]
    assert pgbench.parse_interval(err.splitlines()[1], "stdout") is None
    summary = pgbench.parse_summary(out, err)
    assert summary["tps"] == 61659.687294 and summary["transactions"] == 184392 and summary["errors"] == 0
    assert summary["query_mode"] == "prepared" and summary["clients"] == 2 and summary["statements_per_transaction"] == 1
    tpcb = pgbench.parse_summary(recorded("pgbench-15-tpcb.stdout.txt"))
    assert tpcb["tps"] == 2605.780866 and tpcb["transaction_type"] == "<builtin: TPC-B (sort of)>" and "qps" not in tpcb


def test_pgbench_older_formats():
    # pgbench 12/13 (documentation examples): no "failed" column, tps with/without connections establishing.
    line = "progress: 5.0 s, 545.0 tps, lat 1.830 ms stddev 0.546"
    assert pgbench.parse_interval(line, "stderr", threads=4) == {
        "t": 5.0, "threads": 4, "tps": 545.0, "qps": None, "latency_avg_ms": 1.830, "latency_p95_ms": None,
        "errors_per_s": None, "reconnects_per_s": None}
    old = ("transaction type: <builtin: TPC-B (sort of)>\nnumber of transactions actually processed: 10000\n"
           "latency average = 15.844 ms\ntps = 618.764555 (including connections establishing)\n"
           "tps = 622.977698 (excluding connections establishing)\n")
    assert pgbench.parse_summary(old)["tps"] == 622.977698
    assert pgbench.parse_version("pgbench (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)") == "15.20"


def test_hammerdb_is_a_clearly_marked_stub():
    with pytest.raises(NotRunnable, match="cannot run on these workers"):
        hammerdb.plan(MYSQL, {}, "/w")


def test_redact():
    assert redact(f"password={SECRET} again {SECRET}", [SECRET, ""]) == "password=******** again ********"
