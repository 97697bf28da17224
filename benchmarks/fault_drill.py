#!/usr/bin/env python
"""Fault drill: does any fault lose a run, leave one stuck, orphan a tool or leave the password on disk?

On a production-shaped stack of its own (testbed/fault_stack.py: a Redis server on FAULT_DRILL_REDIS_PORT,
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

and against a PostgreSQL and a MariaDB of its own (testbed/tls_servers.py: TLS-only, free ports), which it freezes
with SIGSTOP (a frozen host or a cut link: the tool gets no error, it waits):

  prepare  frozen while the prepare step loads the tables (pgbench -i scale 20 / sysbench 2 x 300,000 rows, the
          engines in turn). Measured: seconds from the freeze to the run's final state, the tables named.
  cleanup  frozen while the cleanup drops the tables (held there by a share lock of the drill's own on sbtest1).
          Measured: seconds from the freeze to the final state, the tables named.
  cancel   frozen while the run step reports transactions, then Cancel (the engines in turn). Measured: seconds
          from the Cancel to the final state, the tables named, seconds until the worker takes the next run.
  pool     kill -9 of the pool process running a TLS run. Measured: seconds until no decrypted client key is
          left in the worker's temp directory, and until the run's final state.
  db       every connection to the dashboard's database but the drill's own terminated (pg_terminate_backend)
          while a run of 8 s reports transactions. Measured: whether the run succeeds, its stored intervals.
  blips    the same, again and again (every 0.3-0.8 s) from a run's launch to its end: its claim, set-up, prepare,
          measured step, cleanup and end. Measured: blips that hit a connection, whether the run succeeds, its
          intervals stored against the interval lines sysbench printed (its log).
  address  a target stored with the host "0" (an unspecified address, as an entry saved before the rule) is refused at
          launch; two entries of one database, 127.0.0.1 and 127.1: their runs one after the other. Measured: the
          launch's answer, seconds the two runs overlapped (0 expected), their states.
  queue    a run queued on a queue no worker consumes, then a run on the same database from an entry whose queue a
          worker consumes. Measured: seconds until the second run is taken (before: the unclaimed limit, 600 s).

Usage:  .venv/bin/python benchmarks/fault_drill.py [ROUNDS]      (default 5; a round takes about 80 s here)
Latest output: benchmarks/fault_drill.out.txt
"""

import atexit
import os
import random
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
REDIS_PORT = int(os.environ.get("FAULT_DRILL_REDIS_PORT", "6392"))
os.environ["DATABASE_URL"] = os.environ.get("FAULT_DRILL_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_fault_drill")
os.environ["REDIS_URL"] = f"redis://127.0.0.1:{REDIS_PORT}/0"

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
DEADLINE_S = 120


def main():
    bootstrap.setup()
    import psycopg
    import requests
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import InterfaceError, OperationalError, connection
    from rest_framework.authtoken.models import Token

    from runs.models import Run, RunState, Target
    from testbed.fault_stack import Stack, files_containing, stop
    from testbed.runs_support import PASSWORD, ensure_database_users, run_processes, tool_processes
    from testbed.tls_servers import DATABASE as TLS_DATABASE
    from testbed.tls_servers import PASSWORD as TLS_PASSWORD
    from testbed.tls_servers import USER as TLS_USER
    from testbed.tls_servers import TLSServers

    call_command("migrate", verbosity=0)
    call_command("seed_profiles", stdout=open(os.devnull, "w"))
    ensure_database_users()
    user, _ = User.objects.get_or_create(username="drill-staff", defaults={"is_staff": True})
    token, _ = Token.objects.get_or_create(user=user)
    targets = {}
    for engine in ("mysql", "postgresql"):
        targets[engine] = bootstrap.local_target(f"drill-{engine}", engine)
    targets["mysql-127.1"] = bootstrap.local_target("drill-mysql-127.1", "mysql")  # 127.1: another spelling of 127.0.0.1
    Target.objects.filter(pk=targets["mysql-127.1"].pk).update(host="127.1")
    targets["mysql-nopool"] = bootstrap.local_target("drill-mysql-nopool", "mysql", queue="drill-nobody-consumes")
    targets["mysql-zero"] = bootstrap.local_target("drill-mysql-zero", "mysql")
    Target.objects.filter(pk=targets["mysql-zero"].pk).update(host="0")  # stored around Target.clean, as an old row
    servers_dir = Path(tempfile.mkdtemp(prefix="perfdash-drill-servers-"))  # PostgreSQL runs as postgres: not /tmp/wt-*
    servers = TLSServers(servers_dir).start()
    atexit.register(shutil.rmtree, servers_dir, ignore_errors=True)  # whatever fails from here on (runs last)
    atexit.register(servers.stop)
    for engine, port in (("mysql", servers.mariadb_port), ("postgresql", servers.pg_port)):
        target = Target.objects.filter(name=f"drill-tls-{engine}").first() or Target(name=f"drill-tls-{engine}")
        for field, value in dict(engine=engine, host="localhost", port=port, database=TLS_DATABASE, user=TLS_USER,
                                 tls_mode="verify-ca", tls_ca=servers.ca_pem, tls_cert=servers.client_cert_pem,
                                 queue="benchmarks").items():
            setattr(target, field, value)  # the servers' ports and certificates are new each time
        target.set_password(TLS_PASSWORD)
        target.set_tls_key(servers.client_key_pem)
        target.save()
        targets[f"tls-{engine}"] = target
    # Runs left by an interrupted earlier drill must not hold a target.
    Run.objects.exclude(state__in=[RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED]).update(
        state=RunState.CANCELLED, reason="drill reset")

    def post_run(target, profile, **overrides):
        return requests.post(f"{stack.url}/api/v1/runs/", json={"target": targets[target].pk, "profile": profile,
                             "overrides": overrides}, headers={"Authorization": f"Token {token.key}"}, timeout=30)

    def launch(target, profile, **overrides):
        response = post_run(target, profile, **overrides)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def read(query):
        """query() on the drill's own connection, which the blips terminate too."""
        while True:
            try:
                return query()
            except (OperationalError, InterfaceError):
                connection.close()
                time.sleep(0.1)

    def wait_final(ids, deadline_s=DEADLINE_S):
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            if all(r.is_final for r in Run.objects.filter(pk__in=ids)):
                return True
            time.sleep(0.1)
        return False

    def wait_until(predicate, timeout_s, interval=0.05):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(interval)
        return False

    def tools(run_id):
        return tool_processes(os.path.join(str(stack.tmp), f"perfdash-run{run_id}-"))

    def measuring(run_id):
        return Run.objects.filter(pk=run_id, state=RunState.RUNNING, samples__tps__gt=0).exists()

    def freeze(engine, sig=signal.SIGSTOP):
        """SIGSTOP (SIGCONT) the whole server: postmaster or mariadbd and every backend (one process group)."""
        os.killpg(servers.procs["mariadb" if engine == "mysql" else "postgresql"].pid, sig)

    def frozen_until_final(engine, run_id, then=None):
        """Freeze the server, do then() (a Cancel), and wait for the run's final state: (seconds, run, tools left)."""
        freeze(engine)
        try:
            if then:
                then()
            started = time.monotonic()
            wait_final([run_id])
            seconds = time.monotonic() - started
        finally:
            freeze(engine, signal.SIGCONT)
        return seconds, Run.objects.get(pk=run_id), len(tools(run_id))

    def key_files():
        return [p for p in stack.tmp.rglob("client-key.pem")]

    def ran_twice(run):
        commands = [ln[2:] for ln in run.log.splitlines() if ln.startswith("$ ")]
        return len(commands) > len(run.command_line.splitlines())

    print(f"settings of the stack: {' '.join(f'{k}={v}' for k, v in Stack.RUNS_ENV.items())} "
          f"(production defaults: 15 / 30 / 600 / 40 / 2)", flush=True)
    work = Path(tempfile.mkdtemp(prefix="perfdash-fault-drill-"))
    stack = Stack(os.environ["DATABASE_URL"], REDIS_PORT, work)
    kill_rows, broker_rows = [], []
    drill_rows = {"prepare": [], "cleanup": [], "cancel": [], "pool": [], "db": [], "blips": [], "address": [], "queue": []}
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
            # A copy of the project's own source (testbed/runs_support.py defines the test password; a test run beside
            # the drill may copy the tree under the temp directory) is no leak: only other files count, each printed.
            leaks = [p for p in files_containing(PASSWORD, tempfile.gettempdir(), str(stack.tmp))
                     if not (Path(p).name == "runs_support.py"
                             and Path(p).read_bytes() == (ROOT / "testbed" / "runs_support.py").read_bytes())]
            for path in leaks:
                print(f"  a file with the password: {path}", flush=True)
            secrets = len(leaks)
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

            # --- target frozen in prepare (the engines in turn) ------------------------------------
            engine = "postgresql" if round_ % 2 else "mysql"
            if engine == "postgresql":
                run_id = launch("tls-postgresql", "pgbench-tpcb-quick", duration_s=3, threads=2, scale=20)
            else:
                run_id = launch("tls-mysql", "sysbench-oltp-rw-mysql-quick", duration_s=3, threads=2, tables=2,
                                rows_per_table=300_000)
            wait_until(lambda: any(argv[-1] == "prepare" or ("-i" in argv and "-I" not in argv)
                                   for _, argv in tools(run_id)), 120)
            seconds, run, left = frozen_until_final(engine, run_id)
            drill_rows["prepare"].append(dict(seconds=seconds, ok=int(run.state == RunState.FAILED and bool(run.leftover_tables)),
                                              orphans=left))
            print(f"prepare {round_} ({engine}): {run.state} {seconds:.1f} s after the freeze, tables named "
                  f"{', '.join(run.leftover_tables) or 'none'}, tools left {left}: {run.reason[:110]}", flush=True)

            # --- target frozen in cleanup ----------------------------------------------------------
            run_id = launch("tls-postgresql", "sysbench-oltp-rw-postgresql-quick", duration_s=2, threads=2)
            wait_until(lambda: measuring(run_id), 120)
            holder = psycopg.connect(host=str(servers.pg_socket_dir), port=servers.pg_port, user="postgres",
                                     dbname=TLS_DATABASE)
            try:
                holder.execute("LOCK TABLE sbtest1 IN ACCESS SHARE MODE")  # the cleanup's DROP TABLE waits for it
                wait_until(lambda: Run.objects.filter(pk=run_id, state=RunState.CLEANING_UP).exists()
                           and any(argv[-1] == "cleanup" for _, argv in tools(run_id)), 60)
                seconds, run, left = frozen_until_final("postgresql", run_id)
            finally:
                holder.close()
            drill_rows["cleanup"].append(dict(seconds=seconds, ok=int(run.state == RunState.FAILED and bool(run.leftover_tables)),
                                              orphans=left))
            print(f"cleanup {round_}: {run.state} {seconds:.1f} s after the freeze, tables named "
                  f"{', '.join(run.leftover_tables) or 'none'}, tools left {left}: {run.reason[:110]}", flush=True)

            # --- Cancel against a frozen target (the engines in turn) -------------------------------
            profile = "sysbench-oltp-rw-postgresql-quick" if engine == "postgresql" else "sysbench-oltp-rw-mysql-quick"
            run_id = launch(f"tls-{engine}", profile, duration_s=60, threads=2)
            wait_until(lambda: measuring(run_id), 120)

            def cancel():
                response = requests.post(f"{stack.url}/api/v1/runs/{run_id}/cancel/",
                                         headers={"Authorization": f"Token {token.key}"}, timeout=30)
                assert response.status_code == 202, response.text

            seconds, run, left = frozen_until_final(engine, run_id, then=cancel)
            next_id = launch(f"tls-{engine}", profile, duration_s=1, threads=1)
            asked = time.monotonic()
            wait_until(lambda: not Run.objects.filter(pk=next_id, state=RunState.QUEUED).exists(), 60)
            taken = time.monotonic() - asked
            wait_final([next_id])
            drill_rows["cancel"].append(dict(seconds=seconds, ok=int(run.state == RunState.CANCELLED and bool(run.leftover_tables)),
                                             orphans=left, taken=taken))
            print(f"cancel  {round_} ({engine}): {run.state} {seconds:.1f} s after the Cancel, tables named "
                  f"{', '.join(run.leftover_tables) or 'none'}, tools left {left}, next run taken {taken:.1f} s after "
                  f"its launch ({Run.objects.get(pk=next_id).state})", flush=True)

            # --- pool process of a TLS run killed --------------------------------------------------
            run_id = launch("tls-postgresql", "sysbench-oltp-rw-postgresql-quick", duration_s=60, threads=2)
            wait_until(lambda: measuring(run_id), 120)
            had_key = bool(key_files())
            os.kill(Run.objects.get(pk=run_id).worker_pid, signal.SIGKILL)
            killed = time.monotonic()
            gone = wait_until(lambda: not key_files(), 60)
            key_seconds = time.monotonic() - killed
            wait_final([run_id])
            final_seconds = time.monotonic() - killed
            run = Run.objects.get(pk=run_id)
            drill_rows["pool"].append(dict(seconds=key_seconds, final=final_seconds, ok=int(had_key and gone and run.state == RunState.FAILED),
                                           orphans=len(tools(run_id))))
            print(f"pool    {round_}: client key {'removed' if gone else 'STILL THERE'} {key_seconds:.1f} s after the kill "
                  f"(present before: {had_key}), {run.state} {final_seconds:.1f} s after it, tools left "
                  f"{drill_rows['pool'][-1]['orphans']}", flush=True)

            # --- the dashboard's database connections terminated mid-run ---------------------------
            run_id = launch("tls-postgresql", "sysbench-oltp-rw-postgresql-quick", duration_s=8, threads=2)
            wait_until(lambda: measuring(run_id), 120)
            ours = connection.cursor().connection.info.backend_pid
            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
                ended = len(admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> %s "
                    "AND backend_type = 'client backend'", [connection.settings_dict["NAME"], ours]).fetchall())
            wait_final([run_id])
            run = Run.objects.get(pk=run_id)
            intervals = run.samples.filter(warmup=False).count()
            drill_rows["db"].append(dict(ok=int(run.state == RunState.SUCCEEDED), intervals=intervals))
            gone_line = next((ln for ln in run.log.splitlines() if "did not answer for" in ln), "no retry logged")
            print(f"db      {round_}: {ended} connections terminated; {run.state}, {intervals} intervals stored of 8 s; "
                  f"{gone_line}", flush=True)

            # --- blips from the launch to the end -------------------------------------------------------
            run_id = launch("mysql", "sysbench-oltp-rw-mysql-quick", duration_s=6)
            blips = 0
            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
                while not read(lambda: Run.objects.get(pk=run_id).is_final):
                    time.sleep(random.uniform(0.3, 0.8))
                    connection.close()  # ours is not counted
                    blips += bool(admin.execute(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s AND "
                        "pid <> pg_backend_pid() AND backend_type = 'client backend'",
                        [connection.settings_dict["NAME"]]).fetchone()[0])
            run = read(lambda: Run.objects.get(pk=run_id))
            intervals = read(lambda: run.samples.filter(warmup=False).count())
            printed = len(re.findall(r"^\[ \d+s \] thds:", run.log, re.M))  # the tool's own lines (5 or 6 in 6 s)
            drill_rows["blips"].append(dict(ok=int(run.state == RunState.SUCCEEDED and intervals == printed), blips=blips))
            print(f"blips   {round_}: {blips} blips; {run.state}, {intervals} intervals stored of the {printed} sysbench "
                  f"printed in 6 s {run.reason[:100]}", flush=True)

            # --- an unspecified address, and two spellings of one database ------------------------------
            refused = post_run("mysql-zero", "sysbench-oltp-rw-mysql-quick", duration_s=1)
            pair = [launch("mysql", "sysbench-oltp-rw-mysql-quick", duration_s=3),
                    launch("mysql-127.1", "sysbench-oltp-rw-mysql-quick", duration_s=3)]
            wait_final(pair)
            runs = list(Run.objects.filter(pk__in=pair))
            overlap = max(0.0, (min(r.finished_at for r in runs) - max(r.started_at for r in runs)).total_seconds()) \
                if all(r.started_at and r.finished_at for r in runs) else None
            drill_rows["address"].append(dict(ok=int(refused.status_code == 400 and overlap == 0
                                                     and all(r.state == RunState.SUCCEEDED for r in runs)),
                                              overlap=overlap or 0.0))
            print(f"address {round_}: host 0 launch {refused.status_code} ({refused.json().get('errors', {}).get('target', [''])[0][:60]}); "
                  f"127.0.0.1 and 127.1: {', '.join(r.state for r in runs)}, overlapping {overlap} s", flush=True)

            # --- a run nobody takes does not hold the database ------------------------------------------
            stranded = launch("mysql-nopool", "sysbench-oltp-rw-mysql-quick", duration_s=1)
            taken_id = launch("mysql", "sysbench-oltp-rw-mysql-quick", duration_s=1)
            asked = time.monotonic()
            taken = wait_until(lambda: not Run.objects.filter(pk=taken_id, state=RunState.QUEUED).exists(), 60)
            seconds = time.monotonic() - asked
            wait_final([taken_id])
            requests.post(f"{stack.url}/api/v1/runs/{stranded}/cancel/", headers={"Authorization": f"Token {token.key}"},
                          timeout=30)
            drill_rows["queue"].append(dict(ok=int(taken and Run.objects.get(pk=taken_id).state == RunState.SUCCEEDED),
                                            seconds=seconds))
            print(f"queue   {round_}: the run behind one nobody takes was taken {seconds:.1f} s after its launch "
                  f"({Run.objects.get(pk=taken_id).state})", flush=True)
    finally:
        stack.stop()
        stack.cleanup_files()
        servers.stop()
        shutil.rmtree(servers_dir, ignore_errors=True)

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
    for name, title, what, expected in (("prepare", "frozen in prepare", "freeze -> final", "failed naming its tables"),
                                        ("cleanup", "frozen in cleanup", "freeze -> final", "failed naming its tables"),
                                        ("cancel", "Cancel of a frozen target", "Cancel -> final", "cancelled naming its tables")):
        rows = drill_rows[name]
        print(f"{title} drill, {len(rows)} rounds: {expected} {sum(r['ok'] for r in rows)}, tools left "
              f"{sum(r['orphans'] for r in rows)}; {what}: {summary([r['seconds'] for r in rows])}"
              + (f"; next run taken: {summary([r['taken'] for r in rows])}" if name == "cancel" else ""))
    rows = drill_rows["pool"]
    print(f"pool-kill drill (TLS), {len(rows)} rounds: key gone and run failed {sum(r['ok'] for r in rows)}, tools left "
          f"{sum(r['orphans'] for r in rows)}; kill -> no client key: {summary([r['seconds'] for r in rows])}; "
          f"kill -> final: {summary([r['final'] for r in rows])}")
    rows = drill_rows["db"]
    print(f"database-blip drill, {len(rows)} rounds: succeeded {sum(r['ok'] for r in rows)}, intervals stored "
          f"{', '.join(str(r['intervals']) for r in rows)}")
    rows = drill_rows["blips"]
    print(f"many-blips drill, {len(rows)} rounds: succeeded with every interval {sum(r['ok'] for r in rows)}, blips "
          f"{sum(r['blips'] for r in rows)} ({', '.join(str(r['blips']) for r in rows)})")
    rows = drill_rows["address"]
    print(f"address drill, {len(rows)} rounds: host 0 refused and 127.0.0.1 / 127.1 one after the other "
          f"{sum(r['ok'] for r in rows)}; overlap: max {max(r['overlap'] for r in rows):.1f} s")
    rows = drill_rows["queue"]
    print(f"stuck-queue drill, {len(rows)} rounds: taken and succeeded {sum(r['ok'] for r in rows)}; launch -> taken: "
          f"{summary([r['seconds'] for r in rows])}")


if __name__ == "__main__":
    main()
