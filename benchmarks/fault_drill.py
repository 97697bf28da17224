#!/usr/bin/env python
"""Fault drill: does any fault lose a run, leave one stuck, orphan a tool or leave the password on disk?

On a production-shaped stack of its own (tests/fault_stack.py: a Redis server on FAULT_DRILL_REDIS_PORT,
default 6392; gunicorn with DEBUG off; a benchmark worker -c 1; the reconciler with beat every second),
against its own PostgreSQL database (FAULT_DRILL_DATABASE_URL, default perfdash_fault_drill) and the
machine's MariaDB and PostgreSQL as benchmark targets, it repeats ROUNDS times:

  kill    a sysbench run is running (first sample seen); SIGKILL of the whole benchmark worker; a new
          worker is started. Measured: seconds from the kill to the run's final state, tool processes
          still alive 5 s after the kill (orphans), files under the temp directory containing the
          password, whether the new worker removed the dead run's work directory.
  broker  the benchmark worker is stopped, three quick runs are launched (two sysbench on MariaDB, one
          pgbench on PostgreSQL), Redis is killed and restarted empty (their messages are gone), a worker
          is started. Measured: seconds from the restart to the last run's final state, runs lost (still
          queued at the deadline), stuck (active at the deadline), run twice (a command repeated in the log).

Usage:  .venv/bin/python benchmarks/fault_drill.py [ROUNDS]      (default 5)
Latest output: benchmarks/fault_drill.out.txt
"""

import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
REDIS_PORT = int(os.environ.get("FAULT_DRILL_REDIS_PORT", "6392"))
os.environ["DATABASE_URL"] = os.environ.get("FAULT_DRILL_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_fault_drill")
os.environ["REDIS_URL"] = f"redis://127.0.0.1:{REDIS_PORT}/0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
DEADLINE_S = 120


def ensure_database():
    import psycopg

    name = os.environ["DATABASE_URL"].rsplit("/", 1)[1]
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as pg:
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            pg.execute(f"CREATE DATABASE {name}")


def main():
    ensure_database()
    import django

    django.setup()
    import requests
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from runs.models import Run, RunState, Target
    from tests.fault_stack import Stack, files_containing, stop
    from tests.runs_support import DB_USER, MYSQL_DB, PASSWORD, PG_DB, ensure_database_users, run_processes

    call_command("migrate", verbosity=0)
    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    ensure_database_users()
    user, _ = User.objects.get_or_create(username="drill-staff", defaults={"is_staff": True})
    token, _ = Token.objects.get_or_create(user=user)
    targets = {}
    for engine, port, db in (("mysql", 3306, MYSQL_DB), ("postgresql", 5432, PG_DB)):
        target, _ = Target.objects.get_or_create(name=f"drill-{engine}", defaults=dict(
            engine=engine, host="127.0.0.1", port=port, database=db, user=DB_USER))
        target.set_password(PASSWORD)
        target.queue = "benchmarks"
        target.save()
        targets[engine] = target
    # Runs left by an interrupted earlier drill must not hold a target.
    Run.objects.exclude(state__in=[RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED]).update(
        state=RunState.CANCELLED, reason="drill reset")

    def launch(engine, profile, **overrides):
        response = requests.post(f"{stack.url}/api/v1/runs/", json={"target": targets[engine].pk, "profile": profile,
                                 "overrides": overrides}, headers={"Authorization": f"Token {token.key}"}, timeout=30)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def wait_final(ids, deadline_s=DEADLINE_S):
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            if all(r.is_final for r in Run.objects.filter(pk__in=ids)):
                return True
            time.sleep(0.1)
        return False

    def ran_twice(run):
        commands = [ln[2:] for ln in run.log.splitlines() if ln.startswith("$ ")]
        return len(commands) > len(run.command_line.splitlines())

    print(f"settings of the stack: {' '.join(f'{k}={v}' for k, v in Stack.RUNS_ENV.items())} "
          f"(production defaults: 15 / 30 / 600 / 40 / 2)", flush=True)
    work = Path(tempfile.mkdtemp(prefix="perfdash-fault-drill-"))
    stack = Stack(os.environ["DATABASE_URL"], REDIS_PORT, work)
    kill_rows, broker_rows = [], []
    try:
        stack.start()
        for round_ in range(1, ROUNDS + 1):
            # --- kill drill ---------------------------------------------------------------------
            run_id = launch("mysql", "sysbench-oltp-rw-mysql-quick", duration_s=60)
            start = time.monotonic()
            while not Run.objects.get(pk=run_id).samples.exists() and time.monotonic() - start < 60:
                time.sleep(0.1)
            workdirs = list(stack.tmp.glob(f"perfdash-run{run_id}-*"))
            os.killpg(stack.bench.pid, signal.SIGKILL)
            stack.bench.wait()
            killed = time.monotonic()
            final = wait_final([run_id])
            seconds = time.monotonic() - killed
            time.sleep(max(0.0, 5 - (time.monotonic() - killed)))
            orphans = len(run_processes(run_id))
            secrets = len(files_containing(PASSWORD, tempfile.gettempdir(), str(stack.tmp)))
            stack.start_bench()
            run = Run.objects.get(pk=run_id)
            kill_rows.append(dict(round=round_, state=run.state, seconds=seconds, stuck=int(not final), orphans=orphans,
                                  secrets=secrets, workdir_left=int(any(d.exists() for d in workdirs))))
            print(f"kill   {round_}: {run.state} in {seconds:.1f} s, orphans {orphans}, password files {secrets}, "
                  f"work dir left {kill_rows[-1]['workdir_left']}", flush=True)

            # --- broker-loss drill --------------------------------------------------------------
            stop(stack.bench)
            ids = [launch("mysql", "sysbench-oltp-rw-mysql-quick", duration_s=1),
                   launch("postgresql", "pgbench-tpcb-quick", duration_s=1),
                   launch("mysql", "sysbench-oltp-rw-mysql-quick", duration_s=1)]
            stack.kill_redis()
            stack.start_redis()
            restarted = time.monotonic()
            stack.start_bench()
            wait_final(ids)
            last_final = time.monotonic() - restarted
            runs = list(Run.objects.filter(pk__in=ids))
            row = dict(round=round_, seconds=last_final, runs=len(runs),
                       lost=sum(r.state == RunState.QUEUED for r in runs),
                       stuck=sum(r.is_active for r in runs),
                       succeeded=sum(r.state == RunState.SUCCEEDED for r in runs),
                       twice=sum(ran_twice(r) for r in runs))
            broker_rows.append(row)
            print(f"broker {round_}: {row['succeeded']}/3 succeeded, lost {row['lost']}, stuck {row['stuck']}, "
                  f"run twice {row['twice']}, last final {last_final:.1f} s after the restart", flush=True)
    finally:
        stack.stop()
        stack.cleanup_files()

    def summary(values):
        return f"median {statistics.median(values):.1f} s, max {max(values):.1f} s"

    print()
    print(f"kill drill, {len(kill_rows)} rounds: failed with a reason {sum(r['state'] == RunState.FAILED for r in kill_rows)}, "
          f"stuck {sum(r['stuck'] for r in kill_rows)}, orphan tools {sum(r['orphans'] for r in kill_rows)}, "
          f"files with the password {sum(r['secrets'] for r in kill_rows)}, work dirs left after restart "
          f"{sum(r['workdir_left'] for r in kill_rows)}; kill -> final: {summary([r['seconds'] for r in kill_rows])}")
    print(f"broker-loss drill, {len(broker_rows)} rounds x 3 runs: succeeded {sum(r['succeeded'] for r in broker_rows)}, "
          f"lost {sum(r['lost'] for r in broker_rows)}, stuck {sum(r['stuck'] for r in broker_rows)}, "
          f"run twice {sum(r['twice'] for r in broker_rows)}; Redis restart -> all final: "
          f"{summary([r['seconds'] for r in broker_rows])}")


if __name__ == "__main__":
    main()
