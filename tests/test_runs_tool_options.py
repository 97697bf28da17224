"""Every option the drivers pass means what we think it means, according to the installed tools' own
--help (sysbench 1.0.20, pgbench 15). The expected meanings are written here by hand from the manuals;
an option the driver passes that is not listed, or whose help line says something else, fails.
(pgbench's -d is --debug, not the database: that mistake slowed every pgbench run to a third.)"""

import re
import shutil
import subprocess

import pytest

from runs.drivers import Connection, pgbench, sysbench

pytestmark = pytest.mark.skipif(not (shutil.which("pgbench") and shutil.which("sysbench")), reason="tools not installed")

PG = Connection("postgresql", "127.0.0.1", 5432, "sbtest", "bench")
MY = Connection("mysql", "127.0.0.1", 3306, "sbtest", "bench")

# short option -> (long name in `pgbench --help`, takes a value)
PGBENCH_MEANING = {
    "-i": ("initialize", False), "-I": ("init-steps", True), "-q": ("quiet", False), "-s": ("scale", True),
    "-M": ("protocol", True), "-P": ("progress", True), "-c": ("client", True), "-j": ("jobs", True),
    "-T": ("time", True), "-v": ("vacuum-all", False), "-r": ("report-per-command", False), "-f": ("file", True), "-D": ("define", True),
    "-h": ("host", True), "-p": ("port", True), "-U": ("username", True),
}
# sysbench options and the help text that names their meaning
SYSBENCH_MEANING = {
    "--config-file": "File containing command line options", "--db-driver": "database driver",
    "--tables": "Number of tables", "--table-size": "Number of rows per table", "--threads": "number of threads",
    "--db-ps-mode": "prepared statements usage mode", "--time": "limit for total execution time",
    "--report-interval": "periodically report intermediate statistics", "--percentile": "percentile to calculate",
    "--forced-shutdown": "seconds to wait after the --time limit before forcing shutdown",
}
PG_PARAMS = {"scale": 2, "range": 1000, "threads": 4, "jobs": 2, "thread_sweep": [2, 4], "duration_s": 5,
             "report_interval_s": 1, "warmup_s": 3, "prepared": True}
SB_PARAMS = {"tables": 2, "rows_per_table": 100, "threads": 4, "thread_sweep": [2, 4], "duration_s": 5,
             "report_interval_s": 1, "warmup_s": 3, "prepared": False, "workload": "oltp_read_write"}


def help_text(*argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    return done.stdout + done.stderr


@pytest.mark.parametrize("workload", ["ro", "rw", "tpcb"])
def test_every_pgbench_option_is_the_documented_one(workload):
    helptext = help_text("pgbench", "--help")
    steps = pgbench.plan(PG, {**PG_PARAMS, "workload": workload}, "/w")
    for step in steps:
        argv = step.argv[1:]
        positional = []
        i = 0
        while i < len(argv):
            arg = argv[i]
            if not arg.startswith("-"):
                positional.append(arg)
                i += 1
                continue
            assert arg in PGBENCH_MEANING, f"{step.phase}: pgbench option {arg} is not one we meant to pass"
            long_name, takes_value = PGBENCH_MEANING[arg]
            line = next((ln for ln in helptext.splitlines() if re.match(rf"\s+{re.escape(arg)}, --", ln)), "")
            assert f"--{long_name}" in line, f"pgbench --help says {arg} is {line.strip()!r}, not --{long_name}"
            i += 2 if takes_value else 1
        # The database is the one positional argument: pgbench [OPTION]... [DBNAME]
        assert positional == ["sbtest"], (step.phase, positional)


@pytest.mark.parametrize("conn", [MY, PG], ids=["mysql", "pgsql"])
def test_every_sysbench_option_is_the_documented_one(conn):
    helptext = help_text("sysbench", "--help") + help_text("sysbench", "oltp_read_write", "help")
    normalized = helptext.replace("_", "-")  # lua script options print as --table_size; sysbench accepts both
    for step in sysbench.plan(conn, SB_PARAMS, "/w"):
        options = [a.split("=", 1)[0] for a in step.argv[1:] if a.startswith("--")]
        for option in options:
            assert option in SYSBENCH_MEANING, f"{step.phase}: sysbench option {option} is not one we meant to pass"
            line = next((ln for ln in normalized.splitlines() if ln.strip().startswith(option + "=")), "")
            assert SYSBENCH_MEANING[option].lower() in line.lower(), f"sysbench help for {option}: {line.strip()!r}"
        command = {"reset": "cleanup", "prepare": "prepare", "warmup": "run", "run": "run", "cleanup": "cleanup"}[step.phase]
        assert [a for a in step.argv[1:] if not a.startswith("--")] == ["oltp_read_write", command]
    # The config file carries the connection; each of its keys is a documented option of the driver.
    prefix = {"mysql": "mysql", "postgresql": "pgsql"}[conn.engine]
    config = sysbench.secret_files(conn, "pw")["sysbench.cfg"]
    for key in re.findall(r"^([a-z-]+)=", config, re.MULTILINE):
        assert key.startswith(prefix + "-") and re.search(rf"^\s+--{key}=", helptext, re.MULTILINE), key
