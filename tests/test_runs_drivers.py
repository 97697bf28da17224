"""Drivers: argv builders and parsers, pure functions, on output recorded from the installed tools
(sysbench 1.0.20 against MariaDB 10.11 and PostgreSQL 15, pgbench 15; tests/recorded/)."""

from pathlib import Path

import pytest

from runs.drivers import Connection, NotRunnable, Step, hammerdb, judge_step, pgbench, redact, sysbench
from runs.runner import Outcome

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
                       "latency_avg_ms": 2.41, "latency_max_ms": 21.97, "latency_p95_ms": 5.67,
                       "statements_per_transaction": 20}  # 50,233 / 2,491 = 20.2: the 25 ignored errors' statements


def test_sysbench_pgsql_recorded_output():
    text = recorded("sysbench-1.0.20-pgsql-oltp_read_write.stdout.txt")
    samples = [s for s in map(sysbench.parse_interval, text.splitlines()) if s]
    assert [s["tps"] for s in samples] == [14.98, 185.10, 3.00]
    assert samples[2]["latency_p95_ms"] == 1013.60
    summary = sysbench.parse_summary(text)
    assert summary["transactions"] == 205 and summary["tps"] == 63.24 and summary["latency_max_ms"] == 1009.45


def test_a_step_is_judged_by_one_rule_for_one_client_and_for_each_client():
    """A step's outcome, on the tools' recorded output: the reasons written out by hand."""
    run = Step(phase="run", argv=["sysbench"], threads=8, index=1)
    report = recorded("sysbench-1.0.20-mysql-oltp_read_write.stdout.txt")
    reason, summary = judge_step(sysbench, run, Outcome(0, report, ""), 60, [SECRET])
    assert reason == "" and summary["tps"] == 829.33
    assert judge_step(sysbench, run, Outcome(None, "", "", "timeout"), 60, [SECRET]) == (
        "run step with 8 threads exceeded its time limit (60 s); the tool was stopped.", {})
    assert judge_step(sysbench, run, Outcome(None, "", "", "timeout"), 60, [SECRET], host="client-b")[0] == (
        "run step exceeded its time limit (60 s); the tool was stopped.")
    prepare = Step(phase="prepare", argv=["sysbench"])  # no threads to name (it said "with - threads")
    assert judge_step(sysbench, prepare, Outcome(None, "", "", "timeout"), 60, [SECRET])[0] == (
        "prepare step exceeded its time limit (60 s); the tool was stopped.")
    too_many = recorded("sysbench-1.0.20-mysql-too-many-threads.stdout.txt")
    assert judge_step(sysbench, run, Outcome(1, too_many, ""), 60, [SECRET], host="client-b")[0] == (
        "run failed on client-b: Worker threads failed to initialize: FATAL: error 1040: Too many connections")
    # No reason from the tool: its exit status; a secret it printed never reaches the reason.
    assert judge_step(sysbench, run, Outcome(2, f"connect {SECRET}", ""), 60, [SECRET]) == ("run failed: exit status 2", {})
    assert judge_step(sysbench, run, Outcome(1, f"FATAL: bad password {SECRET}", ""), 60, [SECRET])[0] == (
        "run failed: FATAL: bad password ********")
    # Exit 0 without the final report is a failure too; a prepare step has no report to look for.
    assert judge_step(sysbench, run, Outcome(0, "Threads started!", ""), 60, [SECRET], host="client-b") == (
        "run step printed no final report on client-b", {})
    assert judge_step(sysbench, Step(phase="prepare", argv=["sysbench"], threads=1, index=0),
                      Outcome(0, "Creating table 'sbtest1'...", ""), 60, [SECRET]) == ("", {})


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
    # Alibaba's command line without -r (pgbench 15 with -r, -P and -j > 1 measures latency wrong: runs/drivers/pgbench.py).
    assert run[:13] == ["pgbench", "-M", "prepared", "-P", "1", "-c", "64", "-j", "64", "-T", "120", "-v", "-f"] and "-r" not in run
    assert run[13].endswith("scripts/ro.sql") and Path(run[13]).read_text().startswith("\\set aid random_gaussian(1, :range, 10.0)")
    assert run[14:18] == ["-D", "scale=1000", "-D", "range=10000000"]
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


# --- latency: percentiles from the tools' own output ---------------------------------------------------
def test_sysbench_latency_from_its_recorded_histogram():
    stdout = (RECORDED / "sysbench-1.0.20-mysql-oltp_read_write-histogram.stdout.txt").read_text()
    lat = sysbench.parse_latency(stdout)
    # The report's own lines: 95th percentile 21.50, max 51.62, 641 events.
    assert lat["p95_ms"] == 21.50 and lat["max_ms"] == 51.62 and lat["count"] == 641
    # By hand from the printed histogram (sysbench's rule: the first bucket whose running count reaches
    # floor(641 x p / 100 + 0.5)): p50 -> the 321st value, in bucket 7.702; p99 -> the 635th, bucket 36.236.
    assert lat["p50_ms"] == 7.70 and lat["p99_ms"] == 36.24
    assert len(lat["histogram"]) == 149 and lat["histogram"][0] == [1.759, 1] and lat["histogram"][-1] == [51.945, 1]
    assert sysbench.parse_latency("no report") == {}


def test_pgbench_latency_from_its_recorded_transaction_log():
    lines = [*(RECORDED / "pgbench-15-ro-log.step1.txt").read_text().splitlines(),
             *(RECORDED / "pgbench-15-ro-log.step1.1.txt").read_text().splitlines(), "0 301 skipped 0 1795442474 765514"]
    argv = ["pgbench", "-l", "--log-prefix=latency-step1", "--sampling-rate=1"]
    lat = pgbench.parse_latency("", "", lines, argv)
    # By hand (sort -n of column 3, in microseconds): 600 completed transactions (the skipped one is not a
    # latency); ranks floor(600 x p / 100 + 0.5) = 300, 570, 594 -> 32, 121, 3011 us; max 7929 us; mean 139.875 us.
    assert lat["count"] == 600
    assert (lat["p50_ms"], lat["p95_ms"], lat["p99_ms"], lat["max_ms"]) == (0.032, 0.121, 3.011, 7.929)
    assert lat["mean_ms"] == 0.140 and lat["sampling_rate"] == 1.0 and lat["method"] == "pgbench -l"
    assert sum(c for _, c in lat["histogram"]) == 600
    sampled = pgbench.parse_latency("", "", lines, ["pgbench", "--sampling-rate=0.01"])
    assert sampled["sampling_rate"] == 0.01 and sampled["method"] == "pgbench -l --sampling-rate=0.01"


# --- TLS: each tool's arguments, environment and files from the target's one description (runs/access.py) -----
def _access(engine, mode, host="db.example", ca="CA-PEM", cert="CERT-PEM", key="KEY-PEM"):
    from runs.access import TargetAccess, TLSSettings

    return TargetAccess(engine, host, 3306 if engine == "mysql" else 5432, "sbtest", "bench", SECRET,
                        TLSSettings(mode, ca, cert, key))


def test_sysbench_mysql_tls_is_three_files_in_the_work_directory_and_one_switch():
    setup = _access("mysql", "verify-ca").tool_setup(sysbench, "/w")
    assert setup.disk_files == {"/w/cacert.pem": "CA-PEM", "/w/client-cert.pem": "CERT-PEM", "/w/client-key.pem": "KEY-PEM"}
    assert setup.env == {}
    argv = sysbench.plan(setup.conn, SYSBENCH_PARAMS, "/w")[2].argv
    assert "--mysql-ssl=on" in argv and not any("KEY-PEM" in a or "pem" in a for a in argv)
    plain = _access("mysql", "disable", ca="", cert="", key="").tool_setup(sysbench, "/w")
    assert plain.disk_files == {} and not any("ssl" in a for a in sysbench.plan(plain.conn, SYSBENCH_PARAMS, "/w")[2].argv)


def test_sysbench_mysql_refuses_what_it_cannot_verify():
    from runs.access import Unsupported

    with pytest.raises(Unsupported, match="verify-full cannot be honoured by sysbench 1.0.20"):
        _access("mysql", "verify-full").tool_setup(sysbench, "/w")
    with pytest.raises(Unsupported, match="needs the target's CA certificate and a client certificate and key"):
        _access("mysql", "verify-ca", cert="", key="").tool_setup(sysbench, "/w")


def test_libpq_tools_take_the_mode_and_the_files_from_the_environment():
    for driver in (pgbench, sysbench):
        setup = _access("postgresql", "verify-full").tool_setup(driver, "/w")
        assert setup.env["PGSSLMODE"] == "verify-full" and setup.env["PGSSLROOTCERT"] == "/w/cacert.pem"
        assert setup.env["PGSSLCERT"] == "/w/client-cert.pem" and setup.env["PGSSLKEY"] == "/w/client-key.pem"
        assert set(setup.disk_files) == {"/w/cacert.pem", "/w/client-cert.pem", "/w/client-key.pem"}
    # disable is said, not left to libpq's default (prefer), and writes nothing.
    plain = _access("postgresql", "disable", ca="", cert="", key="").tool_setup(pgbench, "/w")
    assert plain.env == {"PGPASSWORD": SECRET, "PGSSLMODE": "disable"} and plain.disk_files == {}


def test_sysbench_reaches_a_mysql_localhost_over_tcp():
    # libmariadb reads "localhost" as the Unix socket and ignores the port.
    conn = Connection("mysql", "localhost", 3422, "sbtest", "bench")
    assert 'mysql-host="127.0.0.1"' in sysbench.secret_files(conn, "x")["sysbench.cfg"]
    assert 'pgsql-host="localhost"' in sysbench.secret_files(Connection("postgresql", "localhost", 5432, "d", "u"), "x")["sysbench.cfg"]


def test_an_ipv6_target_is_described_in_brackets():
    assert _access("postgresql", "disable", host="fd00::5").describe() == "[fd00::5]:5432"


@pytest.mark.parametrize(("recording", "statements"), [
    ("sysbench-1.0.20-mysql-oltp_read_write.stdout.txt", 20),  # 50,233 queries / 2,491 transactions: BEGIN, 18, COMMIT
    ("sysbench-1.0.20-mysql-oltp_point_select-rate.stdout.txt", 1),  # 2,436 / 2,436
])
def test_sysbench_states_the_statements_it_counted_per_transaction(recording, statements):
    text = (Path(__file__).parent / "recorded" / recording).read_text()
    assert sysbench.parse_summary(text)["statements_per_transaction"] == statements
